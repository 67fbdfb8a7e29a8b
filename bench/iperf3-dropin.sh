#!/usr/bin/env bash
# iperf3-dropin.sh — the server-swap table: Debian's iperf3 client against
# `iperf3 -s` and against `netsonde server` (and, for reference, `netsonde server
# --iperf3-fast-receiver`), on loopback, for the default test, -l 1K, -R, -P 4
# and --bidir. Runs are interleaved (one of each server per round) and each cell
# is the median of ROUNDS runs; the ratio columns are medians over iperf3's.
# Each round starts at the next server in turn: in a fixed order each server
# has the same neighbour every round, a bias no median averages out.
# A second `iperf3 -s` is measured as a control: its ratio to the first (A/A)
# is how far this host moves one server's median from run to run, the
# resolution below which a netsonde/iperf3 ratio says nothing.
# A benchmark, not a test.
#
# Run:  bash bench/iperf3-dropin.sh      (about 5 minutes with the defaults)
# Environment: ROUNDS=7, TIME=2, NETSONDE=path; CASES="-l 1K,-R" runs only
# those of the five cases (named as in the table); EXTRA="-w 2M" adds
# options to every client run; PIN=1 runs every server on
# the last CPU and every client on CPU 0 (taskset), so both servers get the
# same placement, not whatever the scheduler gives each; BASELINE=path adds
# another netsonde build's server (an earlier commit's release binary) to
# the same rounds, so a change is measured against it and iperf3 at once.
set -euo pipefail
ROUNDS=${ROUNDS:-7}
TIME=${TIME:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
fi
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/netsonde-dropin.XXXXXX)
srv=() cli=()
if [[ ${PIN:-0} == 1 ]]; then
  last=$(( $(nproc) - 1 ))
  srv=(taskset -c "$last") cli=(taskset -c 0)
fi
pids=()
# Waits for the servers to exit, so a run that follows finds their ports free.
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
"${srv[@]}" iperf3 -s -p 5401 >/dev/null 2>&1 & pids+=($!)
"${srv[@]}" iperf3 -s -p 5404 >/dev/null 2>&1 & pids+=($!)
"${srv[@]}" "$NETSONDE" server -p 5402 --no-store >/dev/null 2>&1 & pids+=($!)
"${srv[@]}" "$NETSONDE" server -p 5403 --no-store --iperf3-fast-receiver >/dev/null 2>&1 & pids+=($!)
ports=(5401 5402 5403 5404)
if [[ -n ${BASELINE:-} ]]; then
  "${srv[@]}" "$BASELINE" server -p 5405 --no-store >/dev/null 2>&1 & pids+=($!)
  ports+=(5405)
fi
sleep 1
cases=()
for c in "default::" "-l 1K:-l 1K" "-R:-R" "-P 4:-P 4" "--bidir:--bidir"; do
  if [[ -z ${CASES:-} || ",$CASES," == *",${c%%:*},"* ]]; then cases+=("$c"); fi
done
(( ${#cases[@]} )) || { echo "CASES names none of: default, -l 1K, -R, -P 4, --bidir" >&2; exit 2; }
for r in $(seq "$ROUNDS"); do
  for c in "${cases[@]}"; do
    name=${c%%:*}; args=${c#*:}
    n=${#ports[@]}
    for k in $(seq 0 $((n - 1))); do
      port=${ports[$(( (k + r) % n ))]}
      # shellcheck disable=SC2086
      "${cli[@]}" iperf3 -c 127.0.0.1 -p "$port" -t "$TIME" -J $args ${EXTRA:-} >"$OUT/$port.$r.${name// /_}.json" 2>/dev/null || true
      sleep 0.2
    done
  done
done
python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, statistics, sys, glob, os
out, rounds = sys.argv[1], int(sys.argv[2])
cases = [c for c in ["default", "-l_1K", "-R", "-P_4", "--bidir"]
         if glob.glob(f"{out}/5401.*.{c}.json")]
def rate(path):
    try:
        d = json.load(open(path))
        e = d["end"]
        s = e.get("sum_received") or e.get("sum")
        bidir = e.get("sum_received_bidir_reverse")
        v = s["bits_per_second"]
        if bidir:
            v += bidir["bits_per_second"]
        return v
    except Exception:
        return None
print(f"{'case':<10} {'iperf3 -s':>14} {'netsonde':>14} {'fast recv':>14} {'iperf3 -s (B)':>14} "
      f"{'netsonde/iperf3':>16} {'fast/iperf3':>12} {'A/A':>6}  {'per-round netsonde/iperf3, quartiles':>36}")
base = bool(glob.glob(f"{out}/5405.*.json"))
for c in cases:
    med = {}
    for port in (5401, 5402, 5403, 5404, 5405):
        v = [x for x in (rate(f"{out}/{port}.{r}.{c}.json") for r in range(1, rounds + 1)) if x]
        med[port] = statistics.median(v) if v else float("nan")
    # The per-round ratios' spread: how finely this host resolves the median.
    pairs = [(rate(f"{out}/5402.{r}.{c}.json"), rate(f"{out}/5401.{r}.{c}.json"))
             for r in range(1, rounds + 1)]
    ratios = [a / b for a, b in pairs if a and b]
    q = statistics.quantiles(ratios, n=4) if len(ratios) >= 2 else [float("nan")] * 3
    g = lambda p: f"{med[p]/1e9:.2f} Gbit/s"
    print(f"{c.replace('_',' '):<10} {g(5401):>14} {g(5402):>14} {g(5403):>14} {g(5404):>14} "
          f"{med[5402]/med[5401]:>16.3f} {med[5403]/med[5401]:>12.3f} {med[5404]/med[5401]:>6.3f}"
          f"  {q[0]:>16.3f} .. {q[2]:.3f}"
          + (f"   baseline/iperf3 {med[5405]/med[5401]:.3f}, netsonde/baseline {med[5402]/med[5405]:.3f}"
             if base else ""))
pin = "servers on the last CPU, clients on CPU 0" if os.environ.get("PIN") == "1" else "nothing pinned"
print(f"medians of {rounds} interleaved runs of {os.environ.get('TIME','2')} s each; receiver's figure (sum_received); {pin}")
EOF
