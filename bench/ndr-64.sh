#!/usr/bin/env bash
# ndr-64.sh: the loss-free rate (NDR, and PDR at 0.5%) of 64-byte frames per I/O
# strategy, with `netsonde search`, on loopback and across the lab's veth pair.
# A benchmark, not a test: it prints Markdown tables (medians over ROUNDS rounds,
# min-max in brackets) and never fails on a figure.
#
#   loopback  search --frames 64 --io copy,epoll,batch,uring,busypoll,xdp -w 4M:
#             each strategy sends and receives (xdp receives, copy sends).
#   veth      sudo netsonde lab run -- search --frames 64 --tx-io batch
#             --io copy,batch,uring,xdp: one sender (UDP GSO) for every receiver,
#             so the receivers are compared behind the same offered load.
#
# Each round runs one search of every strategy (the points of one run, in the
# planner's shuffled order), and the rounds alternate loopback and veth, so
# contention on a shared host lands on every strategy alike. Needs root for xdp
# and the lab; without it the xdp points are skipped with the reason.
#
# Environment: ROUNDS (5), TRIAL (1s), NETSONDE (target/release/netsonde).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
TRIAL=${TRIAL:-1s}
NETSONDE=${NETSONDE:-target/release/netsonde}
[ -x "$NETSONDE" ] || cargo build --release --locked -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db="$work/ndr.db"

echo "# NDR of 64-byte frames per I/O strategy ($(date -u '+%Y-%m-%d %H:%M UTC'), build $(git rev-parse --short HEAD))"
echo
echo "kernel $(uname -r), $(nproc) CPUs, $ROUNDS rounds, trials of $TRIAL"
for r in $(seq 1 "$ROUNDS"); do
    "$NETSONDE" search --frames 64 --io copy,epoll,batch,uring,busypoll,xdp -w 4M \
        --trial "$TRIAL" --db "$db" --no-report --json --label "lo-$r" \
        >"$work/lo-$r.json" 2>"$work/lo-$r.log" || true
    "$NETSONDE" lab run --name ndr64 -- search --frames 64 --tx-io batch \
        --io copy,batch,uring,xdp --trial "$TRIAL" --db "$db" --no-report --json \
        --label "veth-$r" >"$work/veth-$r.json" 2>"$work/veth-$r.log" || true
    echo "round $r of $ROUNDS done" >&2
done

python3 - "$work" "$ROUNDS" <<'EOF'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def fmt(v):
    return "-" if v is None else (f"{v/1e6:.3f} M" if v >= 1e6 else f"{v/1e3:.1f} k")

for where, title in [("lo", "loopback, each strategy on both ends (xdp: copy sends), -w 4M"),
                     ("veth", "lab veth pair, MTU 1500, sender batch (UDP GSO) for every receiver")]:
    rows = {}
    for r in range(1, rounds + 1):
        try:
            doc = json.load(open(f"{work}/{where}-{r}.json"))
        except (OSError, ValueError):
            print(f"\n({where} round {r}: no result; see its log)", file=sys.stderr)
            continue
        for s in doc.get("searches", []):
            row = rows.setdefault(s["io"], {"ndr": [], "pdr": [], "bound": 0, "tx": s.get("tx_io")})
            row["ndr"].append(s["ndr"]["lower"])
            row["pdr"].append(s["pdr"]["lower"])
            row["bound"] += bool(s.get("sender_bound"))
    print(f"\n#### {title}\n")
    print("| receiver | sender | NDR, packets/s | PDR (0.5%), packets/s | searches | sender-bound |")
    print("|---|---|---:|---:|---:|---:|")
    for io, row in rows.items():
        def cell(xs):
            xs = [x for x in xs if x is not None]
            if not xs:
                return "-"
            return f"{fmt(statistics.median(xs))} [{fmt(min(xs))}-{fmt(max(xs))}]"
        print(f"| {io} | {row['tx']} | {cell(row['ndr'])} | {cell(row['pdr'])} | {len(row['ndr'])} | {row['bound']} |")
EOF
