#!/usr/bin/env bash
# quic-perf.sh: netsonde's QUIC against quinn's perf both ways (the QUIC performance
# protocol) side by side on loopback: bench/quic_perf.py. Build quinn's perf
# yourself from quinn's public source and pass its binary; this project never
# builds or ships it.
#
#   bash bench/quic-perf.sh /path/to/quinn-perf [--rounds 5] [--time 3] [--cases up,down,rr]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 1 ] && [ -x "$1" ] || { echo "usage: bash bench/quic-perf.sh /path/to/quinn-perf [options]" >&2; exit 2; }
for t in taskset python3; do
    command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }
done
(cd "$root" && cargo build --release --locked -q -p netsonde)
python3 "$root/bench/quic_perf.py" "$1" --netsonde "$root/target/release/netsonde" "${@:2}"
