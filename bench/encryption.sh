#!/usr/bin/env bash
# encryption.sh: what TLS and QUIC cost a host against plain TCP, side by side on
# loopback (bench/encryption.py): goodput and each end's CPU per KiB, per
# suite and message size, interleaved rounds, medians.
#
#   bash bench/encryption.sh [--rounds 5] [--time 2] [--sizes 16384,131072]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for t in taskset python3; do
    command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }
done
(cd "$root" && cargo build --release --locked -q -p netsonde)
python3 "$root/bench/encryption.py" --netsonde "$root/target/release/netsonde" "$@"
