#!/usr/bin/env bash
# compare-aa.sh — the false-alarm rate of `netsonde compare` on this host: PAIRS
# pairs of identical sweeps (A/A), each pair run back to back, then compared. A
# benchmark, not a test: it prints the counts. (That a real change is seen is
# tested with the scripted engine: crates/cli/tests/sweeps.rs.)
#
# Run:  bash bench/compare-aa.sh        (about 5 min with the defaults)
# Environment: PAIRS=10, REPEAT=5, TIME=0.5, NETSONDE=path.
set -euo pipefail
PAIRS=${PAIRS:-10}
REPEAT=${REPEAT:-5}
TIME=${TIME:-0.5}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
fi
DB=$(mktemp -d /tmp/netsonde-aa.XXXXXX)/aa.db
sweep() {
  "$NETSONDE" sweep --tests tcp-stream,tcp-rr --directions out --sizes 1K,64K \
    --repeat "$REPEAT" -t "$TIME" --warmup 0.2 --no-report --db "$DB" "$@" >/dev/null 2>&1
}
alarms=0
run=0
for i in $(seq "$PAIRS"); do
  sweep; sweep
  run=$((run + 2))
  code=0
  "$NETSONDE" compare $((run - 1)) "$run" --db "$DB" >"$DB.$i.txt" || code=$?
  [[ $code -eq 3 ]] && alarms=$((alarms + 1))
  echo "pair $i: exit $code ($(grep -c REGRESSION "$DB.$i.txt" || true) regression lines)"
done
echo "A/A: $alarms of $PAIRS identical pairs reported a regression"
echo "comparisons per pair: $(head -1 "$DB.1.txt")"
