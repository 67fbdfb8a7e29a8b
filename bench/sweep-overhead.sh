#!/usr/bin/env bash
# sweep-overhead.sh — how much wall time a sweep spends beyond its measured seconds.
#
# Runs a loopback sweep of 8 sizes x 2 tests (tcp-stream, tcp-rr) x 3 repetitions x
# 2 s (no warm-up), into a throwaway store, and prints wall time, measured time and
# the overhead (connection set-up, result exchange, storing, the report). The target
# is under 10%.
#
#   bash bench/sweep-overhead.sh          (env NETSONDE=path to skip the build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde)
  NETSONDE=$ROOT/target/release/netsonde
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP"
start=$(date +%s.%N)
"$NETSONDE" sweep --tests tcp-stream,tcp-rr --sizes 64..8K --repeat 3 --time 2 --warmup 0 \
  --db "$TMP/o.db" --out "$TMP/report" 2>&1 | tail -n 4
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN {
  wall = e - s; measured = 8 * 2 * 3 * 2;
  printf "wall %.1f s, measured %d s, overhead %.1f%% (target < 10%%)\n", wall, measured, 100 * (wall - measured) / measured }'
