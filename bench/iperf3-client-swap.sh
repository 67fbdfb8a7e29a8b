#!/usr/bin/env bash
# iperf3-client-swap.sh — the client-swap table (issue 37.1): against one
# `iperf3 -s` on loopback, Debian's `iperf3 -c` and `netsonde -c --peer iperf3`
# (as it reads by default, like iperf3's client; and with
# --iperf3-fast-receiver), for the default test, -R and --bidir. Each round runs
# every client once, starting at the next one in turn (interleaved); a cell is
# the median of ROUNDS runs, and a ratio the median of the per-round ratios to
# iperf3's. A second `iperf3 -c` in the same rounds is the control (A/A): how
# far one iperf3 client moves from another here, below which a ratio says
# nothing. Rates are what each client's receiving side measured (iperf3's
# receiver sum; netsonde's directions' goodput), summed over both directions
# for --bidir. A benchmark, not a test.
#
# Run:  bash bench/iperf3-client-swap.sh     (about 4 minutes with the defaults)
# Environment: ROUNDS=7, TIME=2, NETSONDE=path, PIN=1 (iperf3 -s on the last
# CPU and every client on CPU 0).
set -euo pipefail
ROUNDS=${ROUNDS:-7}
TIME=${TIME:-2}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
fi
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install iperf3)" >&2; exit 1; }
OUT=$(mktemp -d /tmp/netsonde-clientswap.XXXXXX)
srv=() cli=()
if [[ ${PIN:-0} == 1 ]]; then
  last=$(( $(nproc) - 1 ))
  srv=(taskset -c "$last") cli=(taskset -c 0)
fi
"${srv[@]}" iperf3 -s -p 5411 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
sleep 1
clients=(iperf3 netsonde fast iperf3-b)
run() { # client case-args file
  local who=$1 args=$2 f=$3
  case $who in
    iperf3|iperf3-b)
      # shellcheck disable=SC2086
      "${cli[@]}" iperf3 -c 127.0.0.1 -p 5411 -t "$TIME" -J $args >"$f" 2>/dev/null || true ;;
    netsonde)
      # shellcheck disable=SC2086
      "${cli[@]}" "$NETSONDE" -c 127.0.0.1 -p 5411 --peer iperf3 -t "$TIME" -J --no-store $args >"$f" 2>/dev/null || true ;;
    fast)
      # shellcheck disable=SC2086
      "${cli[@]}" "$NETSONDE" -c 127.0.0.1 -p 5411 --peer iperf3 --iperf3-fast-receiver -t "$TIME" -J --no-store $args >"$f" 2>/dev/null || true ;;
  esac
  sleep 0.3
}
for r in $(seq "$ROUNDS"); do
  for c in "default:" "-R:-R" "--bidir:--bidir"; do
    name=${c%%:*}; args=${c#*:}
    n=${#clients[@]}
    for k in $(seq 0 $((n - 1))); do
      who=${clients[$(( (k + r) % n ))]}
      run "$who" "$args" "$OUT/$who.$r.$name.json"
    done
  done
done
python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rate(path):
    try:
        d = json.load(open(path))
    except Exception:
        return None
    if "directions" in d:  # netsonde
        return sum(x["goodput"] for x in d["directions"]) or None
    e = d.get("end", {})
    total = 0.0
    for k in ("sum_received", "sum_received_bidir_reverse"):
        if k in e:
            total += e[k]["bits_per_second"]
    return total or None
print(f"{rounds} interleaved rounds against one iperf3 -s; medians in Gbit/s; ratio: median of per-round ratios to iperf3 -c")
print(f"{'case':<9} {'iperf3 -c':>10} {'netsonde':>9} {'ratio':>6} {'fast rx':>8} {'ratio':>6} {'A/A':>6}  A/A range   netsonde range")
for name in ("default", "-R", "--bidir"):
    cells, ratios, ranges = {}, {}, {}
    for who in ("iperf3", "netsonde", "fast", "iperf3-b"):
        vals = [rate(f"{out}/{who}.{r}.{name}.json") for r in range(1, rounds + 1)]
        cells[who] = statistics.median([v for v in vals if v]) / 1e9 if any(vals) else float("nan")
        base = [rate(f"{out}/iperf3.{r}.{name}.json") for r in range(1, rounds + 1)]
        rs = [v / b for v, b in zip(vals, base) if v and b]
        ratios[who] = statistics.median(rs) if rs else float("nan")
        ranges[who] = (min(rs), max(rs)) if rs else (float("nan"), float("nan"))
    print(f"{name:<9} {cells['iperf3']:>10.2f} {cells['netsonde']:>9.2f} {ratios['netsonde']:>6.3f} "
          f"{cells['fast']:>8.2f} {ratios['fast']:>6.3f} {ratios['iperf3-b']:>6.3f}"
          f"  {ranges['iperf3-b'][0]:.3f}-{ranges['iperf3-b'][1]:.3f}"
          f"  {ranges['netsonde'][0]:.3f}-{ranges['netsonde'][1]:.3f}")
EOF
