#!/usr/bin/env bash
# compare-peers.sh — benchmark netsonde against established peers on loopback.
#
# What it measures (all TCP over 127.0.0.1, one flow, client -> server):
#   1. bulk stream, 128 KiB writes: netsonde tcp-stream  vs  iperf3 -l 128K
#        goodput (receiver side, bit/s)
#   2. small stream, 64 B writes:   netsonde tcp-stream  vs  iperf3 -l 64
#        goodput and messages/s (iperf3 messages/s = bits_per_second / 8 / 64)
#   3. request/response, 14 B each way: netsonde tcp-rr  vs  sockperf ping-pong
#        p50/p99 full round-trip latency and transactions/s. sockperf's minimum
#        message is 14 B (its header), so netsonde runs --request-size 14
#        --response-size 14; sockperf runs --full-rtt (by default it reports
#        RTT/2). sockperf excludes its own ~400 ms warm-up; netsonde and
#        iperf3 run with their default (no warm-up / omit).
# Tests are interleaved (netsonde, peer, netsonde, peer, ...) in every run so
# slow drift of the machine affects both tools alike; medians over RUNS runs.
# Streams: no CPU pinning, no busy polling, both tools' defaults.
# Request/response latency on this VM is decided by CPU placement (a wake-up
# across cores costs ~100 us; on one core the round trip is ~16 us), so RR runs
# pin both tools identically: servers on core 1 (taskset), clients on core 0
# ("cross-core") and on core 1 ("same-core"). No busy polling.
#
# Run from anywhere:   bash bench/compare-peers.sh
# Environment:
#   RUNS=5        runs per test (median taken over them; at least 5 advised)
#   DURATION=5    seconds per test
#   NETSONDE=path use this binary instead of building target/release/netsonde
#   NS_PORT=25300 IPERF_PORT=25201 SOCKPERF_PORT=25111   server ports
# Installs iperf3, sockperf and jq with apt-get if they are missing.
set -euo pipefail

RUNS=${RUNS:-5}
DURATION=${DURATION:-5}
NS_PORT=${NS_PORT:-25300}
IPERF_PORT=${IPERF_PORT:-25201}
SOCKPERF_PORT=${SOCKPERF_PORT:-25111}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

missing=()
for tool in iperf3 sockperf jq; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  SUDO=; [[ $(id -u) -eq 0 ]] || SUDO=sudo
  $SUDO apt-get install -y "${missing[@]}"
fi

if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde)
  NETSONDE=$ROOT/target/release/netsonde
fi
[[ -x $NETSONDE ]] || { echo "no netsonde binary at $NETSONDE" >&2; exit 1; }

TMP=$(mktemp -d)
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Start a server in the background, remember its PID, wait until it listens.
start_server() {
  local port=$1 name=$2; shift 2
  "$@" >"$TMP/$name-server.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 50); do
    [[ -n $(ss -Hltn "sport = :$port") ]] && return 0
    kill -0 "${PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name server did not come up on port $port:" >&2
  cat "$TMP/$name-server.log" >&2
  exit 1
}
start_server "$NS_PORT" netsonde "$NETSONDE" server --port "$NS_PORT" --bind "$HOST"
start_server "$IPERF_PORT" iperf3 iperf3 -s -p "$IPERF_PORT" -B "$HOST"
NS_RR_PORT=$((NS_PORT + 1))
start_server "$NS_RR_PORT" netsonde-rr taskset -c 1 "$NETSONDE" server --port "$NS_RR_PORT" --bind "$HOST"
start_server "$SOCKPERF_PORT" sockperf taskset -c 1 sockperf server --tcp -i "$HOST" -p "$SOCKPERF_PORT"

# Run a client command into $TMP/out; retry twice (a server may still be busy
# tearing down the previous test).
run() {
  local try
  for try in 1 2 3; do
    if "$@" >"$TMP/out" 2>"$TMP/err"; then return 0; fi
    echo "  (attempt $try failed: $* ; $(tail -n 3 "$TMP/err" "$TMP/out" | tr '\n' ' '))" >&2
    sleep 2
  done
  echo "giving up on: $*" >&2
  exit 1
}

declare -A VAL   # VAL[metric,tool] = space-separated values, one per run
record() { VAL[$1,$2]+="$3 "; }
jqout() { jq -er "$1" "$TMP/out"; }

ns_stream() { # size label
  run "$NETSONDE" client "$HOST" --port "$NS_PORT" -T tcp-stream -l "$1" -t "$DURATION" --json
  local g m; g=$(jqout '.directions[0].goodput'); m=$(jqout '.directions[0].messages_per_sec')
  record "stream $2 goodput Gbit/s" netsonde "$(awk -v g="$g" 'BEGIN{print g/1e9}')"
  record "stream $2 messages/s" netsonde "$m"
  printf '  %-9s tcp-stream %-5s goodput %8.3f Gbit/s  %12.0f msg/s\n' netsonde "$2" "$(awk -v g="$g" 'BEGIN{print g/1e9}')" "$m"
}
iperf_stream() { # size bytes label
  run iperf3 -c "$HOST" -p "$IPERF_PORT" -l "$1" -t "$DURATION" -J
  local g m; g=$(jqout '.end.sum_received.bits_per_second')
  m=$(awk -v g="$g" -v l="$2" 'BEGIN{print g/8/l}')
  record "stream $3 goodput Gbit/s" peer "$(awk -v g="$g" 'BEGIN{print g/1e9}')"
  record "stream $3 messages/s" peer "$m"
  printf '  %-9s tcp-stream %-5s goodput %8.3f Gbit/s  %12.0f msg/s\n' iperf3 "$3" "$(awk -v g="$g" 'BEGIN{print g/1e9}')" "$m"
}
ns_rr() { # client-core label
  run taskset -c "$1" "$NETSONDE" client "$HOST" --port "$NS_RR_PORT" -T tcp-rr --request-size 14 --response-size 14 -t "$DURATION" --json
  local p50 p99 tps
  p50=$(jqout '.rr.latency.p50 / 1000'); p99=$(jqout '.rr.latency.p99 / 1000'); tps=$(jqout '.rr.transactions_per_sec')
  record "rr $2 p50 RTT us" netsonde "$p50"; record "rr $2 p99 RTT us" netsonde "$p99"
  record "rr $2 trans/s" netsonde "$tps"
  printf '  %-9s tcp-rr 14B %-10s p50 %8.2f us  p99 %8.2f us  %10.0f trans/s\n' netsonde "$2" "$p50" "$p99" "$tps"
}
sockperf_pp() { # client-core label
  run taskset -c "$1" sockperf ping-pong --tcp -i "$HOST" -p "$SOCKPERF_PORT" -t "$DURATION" -m 14 --full-rtt
  local p50 p99 tps
  p50=$(awk '/---> percentile 50.000 =/ {print $NF}' "$TMP/out")
  p99=$(awk '/---> percentile 99.000 =/ {print $NF}' "$TMP/out")
  # transactions/s over sockperf's valid (post-warm-up) interval
  tps=$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec;.*ReceivedMessages=\([0-9]*\).*/\2 \1/p' "$TMP/out" |
        awk '{print $1/$2}')
  [[ -n $p50 && -n $p99 && -n $tps ]] || { echo "cannot parse sockperf output:" >&2; cat "$TMP/out" >&2; exit 1; }
  record "rr $2 p50 RTT us" peer "$p50"; record "rr $2 p99 RTT us" peer "$p99"
  record "rr $2 trans/s" peer "$tps"
  printf '  %-9s ping-pong  %-10s p50 %8.2f us  p99 %8.2f us  %10.0f trans/s\n' sockperf "$2" "$p50" "$p99" "$tps"
}

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "netsonde: $NETSONDE ($("$NETSONDE" --version 2>/dev/null || echo '?'))"
echo "peers:    $(iperf3 --version | head -n 1); sockperf $(sockperf --version 2>&1 | grep -o '[0-9][0-9.]*' | head -n 1)"
echo "host:     $(uname -r), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); runs=$RUNS, duration=${DURATION}s per test"
echo "CPU placement: streams unpinned; RR servers on core 1, RR clients on core 0 (cross-core) or 1 (same-core); no busy polling"
for ((r = 1; r <= RUNS; r++)); do
  echo "run $r/$RUNS"
  ns_stream 128K 128K; iperf_stream 128K 131072 128K
  ns_stream 64 64B;    iperf_stream 64 64 64B
  ns_rr 0 cross-core;  sockperf_pp 0 cross-core
  ns_rr 1 same-core;   sockperf_pp 1 same-core
done

echo
echo "Medians of $RUNS runs, ${DURATION}s each (loopback; streams unpinned; RR pinned as above; no busy polling)"
printf '%-30s %-9s %14s %14s %8s\n' metric peer netsonde_median peer_median ratio
for m in "stream 128K goodput Gbit/s" "stream 64B goodput Gbit/s" "stream 64B messages/s" \
         "rr cross-core p50 RTT us" "rr cross-core p99 RTT us" "rr cross-core trans/s" \
         "rr same-core p50 RTT us" "rr same-core p99 RTT us" "rr same-core trans/s"; do
  peer=iperf3; [[ $m == rr* ]] && peer=sockperf
  a=$(median <<<"${VAL[$m,netsonde]}"); b=$(median <<<"${VAL[$m,peer]}")
  note=""; [[ $m == *RTT* ]] && note="  (lower is better)"
  printf '%-30s %-9s %14.3f %14.3f %8.3f%s\n' "$m" "$peer" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{print a/b}')" "$note"
done
echo "ratio = netsonde / peer: above 1 is better for throughput, below 1 is better for latency"
