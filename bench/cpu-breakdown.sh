#!/usr/bin/env bash
# cpu-breakdown.sh: what sampling the flow threads for the CPU breakdown costs a
# test, on loopback: goodput (tcp-stream, sampled by default) and transaction
# rate (tcp-rr, not sampled by default: this is why) with --cpu-breakdown on
# and off, interleaved rounds, the medians and their ratio.
#
#   bash bench/cpu-breakdown.sh [ROUNDS=5] [SECONDS=3]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${1:-5}
secs=${2:-3}
command -v python3 >/dev/null || { echo "needs python3" >&2; exit 1; }
(cd "$root" && cargo build --release --locked -q -p netsonde)
bin="$root/target/release/netsonde"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
    for test in tcp-stream tcp-rr; do
        for mode in on off; do
            "$bin" client -T "$test" -t "$secs" --warmup 0.5 --no-store --json \
                --cpu-breakdown "$mode" \
                > "$out/$test-$mode-$r.json"
        done
    done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def figure(test, doc):
    if test == "tcp-rr":
        return doc["rr"]["transactions_per_sec"] if "rr" in doc else doc["directions"][0]["transactions_per_sec"]
    return doc["directions"][0]["goodput"]
for test, unit in [("tcp-stream", "Gbit/s"), ("tcp-rr", "trans/s")]:
    med = {}
    samples = {}
    for mode in ["on", "off"]:
        v = []
        for r in range(1, rounds + 1):
            doc = json.load(open(f"{out}/{test}-{mode}-{r}.json"))
            v.append(figure(test, doc))
            if mode == "on":
                p = doc["client"]["cpu"].get("profile", {})
                samples.setdefault("client", []).append(p.get("samples", 0))
        med[mode] = statistics.median(v)
    scale = 1e9 if unit == "Gbit/s" else 1
    print(f"{test}: breakdown on {med['on']/scale:.2f} {unit}, off {med['off']/scale:.2f} "
          f"(medians of {rounds}), on/off {med['on']/med['off']:.3f}; "
          f"client samples per run {statistics.median(samples['client']):.0f}")
PY
