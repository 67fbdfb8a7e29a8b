#!/usr/bin/env bash
# mesh-scale.sh — what a mesh controller costs for 100 and 1,000 agents.
#
# One `netsonde agent --engine fake` (a scripted report at once, no traffic)
# listens on 0.0.0.0:PORT; the controller is given N agents at N distinct
# loopback addresses (127.0.x.y:PORT), which all reach it, so each pair is a
# whole job exchange (connect, authenticate, job, report) and a stored point,
# with no measuring time. For each size it prints the controller's wall time,
# CPU (user + system), peak RSS, the time per pair and the store's size, and
# the bytes of the text it printed (a listing, not a grid, beyond 16 agents):
# the median of RUNS runs (5), each into a new store.
#
#   bash bench/mesh-scale.sh            (env NETSONDE=path to skip the build,
#                                        SIZES="100 1000", PATTERN=ring, RUNS=5)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde)
  NETSONDE=$ROOT/target/release/netsonde
fi
NETSONDE=$(realpath "$NETSONDE")
SIZES=${SIZES:-"100 1000"}
PATTERN=${PATTERN:-ring}
PORT=${PORT:-5499}
RUNS=${RUNS:-5}
TMP=$(mktemp -d)
agent=
cleanup() {
  [[ -n $agent ]] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP"
"$NETSONDE" keygen --out k >/dev/null 2>&1
"$NETSONDE" agent --auth-key k --engine fake --bind 0.0.0.0 --port "$PORT" --no-store \
  >agent.log 2>&1 &
agent=$!
for _ in $(seq 50); do grep -q listening agent.log && break; sleep 0.1; done
grep -q listening agent.log || { cat agent.log; exit 1; }
printf '%-6s %-11s %7s %9s %9s %9s %10s %9s %9s\n' agents pattern pairs wall_s cpu_s rss_MiB ms_per_pair db_MiB out_KiB
for n in $SIZES; do
  python3 -c "
for i in range($n): print(f'a{i:04d}=127.0.{i // 250}.{i % 250 + 1}:$PORT')" >"agents$n"
  pairs=$(case $PATTERN in ring) echo "$n" ;; all-to-all) echo $((n * (n - 1))) ;; *) echo "?" ;; esac)
  : >"rows$n"
  for _ in $(seq "$RUNS"); do
    rm -f "m$n.db"
    /usr/bin/time -f '%e %U %S %M' -o "time$n" "$NETSONDE" mesh --auth-key k \
      --agents-file "agents$n" --pattern "$PATTERN" --db "m$n.db" --no-report --yes \
      --tests tcp-stream --sizes 128K -t 1 --repeat 1 >"out$n" 2>"err$n" ||
      { cat "err$n"; exit 1; }
    echo "$(cat "time$n") $(stat -c %s "m$n.db") $(stat -c %s "out$n")" >>"rows$n"
  done
  python3 - "$n" "$PATTERN" "$pairs" "rows$n" <<'PY'
import statistics, sys
n, pattern, pairs, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
runs = [list(map(float, l.split())) for l in open(rows)]
med = lambda i: statistics.median(r[i] for r in runs)
wall, cpu = med(0), statistics.median(r[1] + r[2] for r in runs)
print(f"{n:<6} {pattern:<11} {pairs:7d} {wall:9.1f} {cpu:9.2f} {med(3) / 1024:9.1f} "
      f"{1000 * wall / pairs:10.1f} {med(4) / 1048576:9.1f} {med(5) / 1024:9.1f}")
PY
done
