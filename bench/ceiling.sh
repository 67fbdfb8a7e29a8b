#!/usr/bin/env bash
# ceiling.sh: netsonde's data path against the host's ceiling, a bare loop of
# its own (bench/bare.c, built here with cc -O2), with iperf3 in the same rounds:
# TCP 64 B and 128 KiB, UDP 64 B and 1472 B (plain and batched), TCP RR 64 B,
# each as a ratio to the bare loop in one run. See bench/ceiling.py.
#
#   bash bench/ceiling.sh [--rounds 5] [--time 3] [--cases udp-64,tcp-128k] [--rx-work 20,40,80]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for t in cc iperf3 taskset python3; do
    command -v "$t" >/dev/null || { echo "needs $t" >&2; exit 1; }
done
(cd "$root" && cargo build --release --locked -q -p netsonde)
out=$(mktemp -d /tmp/netsonde-ceiling.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O2 -Wall -pthread -o "$out/bare" "$root/bench/bare.c"
python3 "$root/bench/ceiling.py" --netsonde "$root/target/release/netsonde" --bare "$out/bare" "$@"
