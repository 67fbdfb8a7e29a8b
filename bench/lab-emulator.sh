#!/usr/bin/env bash
# lab-emulator.sh — the lab's userspace link emulator (TUN devices, one thread per
# direction): throughput with no impairment, and how accurately it delays.
#
# 1. Throughput: TCP through the emulator with no impairment at MTU 1500 and 9000,
#    5 s after 1 s of warm-up, median of 3 runs (the kernel veth beside it for
#    scale). Target: at least 1 Gbit/s at MTU 1500 on a 2-core machine.
# 2. Delay accuracy at 0.1, 1, 10 and 100 ms each way:
#    - the emulator's own delivery error (time written to the TUN device less the
#      due time), p10/p50/p90/p99 over every packet of both directions, from
#      `lab run --stats`; target: under 0.2 ms at the median;
#    - end to end: the tcp-rr median less twice the delay less the base RTT (the
#      same link with no delay), halved to one way. This adds the wake-up latency
#      of the client and the server, which sleep between transactions.
#
# Needs root (the lab makes namespaces). Every run is bounded (timeout) and the
# lab removes everything it made.
#
#   sudo bash bench/lab-emulator.sh       (env NETSONDE=path to skip the build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
fi
if [[ $(id -u) != 0 ]]; then
  echo "lab-emulator.sh: needs root (the lab makes network namespaces)" >&2
  exit 1
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# lab LINK... -- CLIENT...: one lab run; the client's JSON in $TMP/out.json and
# the emulator's counters in $TMP/stats.json.
lab() {
  local link=() client=()
  while [[ $1 != -- ]]; do link+=("$1"); shift; done
  shift
  client=("$@")
  rm -f "$TMP/stats.json"
  timeout 120 "$NETSONDE" lab run "${link[@]}" --stats "$TMP/stats.json" -- \
    client "${client[@]}" --json >"$TMP/out.json" 2>"$TMP/err.txt" || {
    cat "$TMP/err.txt" >&2
    exit 1
  }
}

py() { python3 -c "$1" "$TMP/out.json" "$TMP/stats.json"; }

echo "== throughput, TCP, no impairment (median of 3; 5 s after 1 s warm-up)"
for mech in emulator kernel; do
  for mtu in 1500 9000; do
    vals=()
    for _ in 1 2 3; do
      lab --mechanism "$mech" --mtu "$mtu" -- -t 5 --warmup 1
      vals+=("$(py 'import json,sys; print(json.load(open(sys.argv[1]))["directions"][0]["goodput"])')")
    done
    printf '%s\n' "${vals[@]}" | sort -g | sed -n 2p |
      awk -v m="$mech" -v u="$mtu" '{ printf "  %-8s mtu %5d: %6.2f Gbit/s\n", m == "kernel" ? "veth" : m, u, $1 / 1e9 }'
  done
done

echo "== delay accuracy (tcp-rr, 1-byte transactions)"
lab --mechanism emulator -- -T tcp-rr -t 3 --warmup 300ms
base=$(py 'import json,sys; print(json.load(open(sys.argv[1]))["rr"]["latency"]["p50"])')
awk -v b="$base" 'BEGIN { printf "  base RTT (no delay) p50 %.1f us\n", b / 1e3 }'
printf '  %-8s %8s | %-36s | %s\n' delay samples "emulator delivery error p10/p50/p90/p99 (us)" "end to end, one way: p50 error"
for d in 100us 1ms 10ms 100ms; do
  case $d in 100ms) t=6 ;; *) t=3 ;; esac
  lab --delay "$d" -- -T tcp-rr -t "$t" --warmup 300ms
  BASE=$base D=$d py '
import json, os, sys
out = json.load(open(sys.argv[1])); st = json.load(open(sys.argv[2]))
d = os.environ["D"]
dns = float(d[:-2]) * (1e3 if d.endswith("us") else 1e6)
n = st["up"]["error_count"] + st["down"]["error_count"]
q = lambda k: (st["up"][k] + st["down"][k]) / 2
p50 = out["rr"]["latency"]["p50"]
e2e = (p50 - 2 * dns - float(os.environ["BASE"])) / 2
print("  %-8s %8d | %7.1f %7.1f %7.1f %9.1f           | %+8.1f us (RR p50 %.3f ms)" % (
    d, n, q("error_p10_us"), q("error_p50_us"), q("error_p90_us"), q("error_p99_us"), e2e / 1e3, p50 / 1e6))
'
done
