#!/usr/bin/env bash
# compare-peers.sh: netsonde against every peer from Debian's packages (iperf3,
# iperf 2, nuttcp, sockperf, qperf) on loopback, every case of docs/PERFORMANCE.md:
# TCP at 64 B, 1 KiB, 16 KiB and 128 KiB writes, -P 2, -P 4, --bidir, UDP at 64 B
# and 1472 B unpaced, tcp-rr 14 B cross-core, tcp-crr. Interleaved rounds, medians
# with min-max, and client + server CPU per GB or per transaction beside each
# figure. A benchmark: it asserts nothing. See bench/compare_peers.py for the
# method.
#
#   bash bench/compare-peers.sh [--rounds 5] [--time 4] [--cases tcp-128k,udp-64]
#
# Installs the peers (and builds the release binary) when they are missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
need=()
for t in iperf3:iperf3 iperf:iperf nuttcp:nuttcp sockperf:sockperf qperf:qperf ss:iproute2 taskset:util-linux python3:python3; do
    command -v "${t%%:*}" >/dev/null 2>&1 || need+=("${t#*:}")
done
if ((${#need[@]})); then
    SUDO=; [[ $(id -u) -eq 0 ]] || SUDO=sudo
    $SUDO apt-get install -y -qq "${need[@]}"
fi
(cd "$root" && cargo build --release --locked -q -p netsonde)
exec python3 "$root/bench/compare_peers.py" --netsonde "$root/target/release/netsonde" "$@"
