#!/usr/bin/env bash
# io-strategies.sh: benchmark netsonde's I/O strategies on one host, and compare
# the best of them with the peers Debian packages (iperf3, iperf 2, nuttcp,
# sockperf) at the points issue 3 sets targets for. A benchmark, not a test: it
# prints Markdown tables and ratios and never fails on a missed target.
#
# Sections (SECTIONS selects them, all by default):
#   tcp        tcp-stream matrix on loopback: strategies x sizes 64 B..1 MiB.
#              --io S on both ends, except sendfile (--tx-io sendfile --rx-io copy),
#              plus "auto/no-warm-up" (auto paying its calibration inside the
#              measured interval). Gbit/s, messages/s, service demand on both ends.
#   udp        udp-stream matrix on loopback for the UDP-capable strategies,
#              64 B..60000 B datagrams, offered load unlimited (-b 100G): received
#              Gbit/s, packets/s and loss.
#   pairs      auto against the best fixed strategies of the matrices above, in
#              paired runs: for each size, auto, the best fixed strategy and the
#              best one whose receiver copies into user space (for reference) run
#              back to back, PAIR_REPS times in rotating order; the ratio is taken
#              within each round and its median reported. Contention from other
#              work on a shared host comes and goes over seconds, so runs next to
#              each other share it; medians of whole-matrix runs do not.
#              The best strategies are chosen from the matrix runs, so the paired
#              runs that judge auto are not the ones that picked its rivals.
#              Pairs run longer (PAIR_DURATION, PAIR_WARMUP) than the matrix:
#              auto calibrates the receiver, then the sender, for up to
#              about 3 s.
#   peers-tcp  TCP, 64-byte messages: netsonde copy/batch/uring/auto against
#              iperf3 -l 64, iperf -l 64 (iperf 2) and nuttcp -l64.
#   peers-udp  UDP, 64-byte datagrams: for each tool a ladder of offered rates
#              (steps of sqrt 2) finds the highest received packets/s with loss
#              under 1%; netsonde uses --io batch. Twice: with 4 MiB socket
#              buffers on both ends of every tool (-w), and with the defaults
#              (212992 B here), where bursts overflow the receive buffer.
#   rr         tcp-rr on loopback: netsonde --io busypoll (1 B and 14 B) and
#              --io copy against sockperf ping-pong --tcp --full-rtt (14 B, its
#              minimum), plain and with sockperf's own polling (--nonblocked
#              --lls 50 on both ends).
#   threads    tcp-stream -P 8 with every flow of an end on one core (client core
#              0, server core 1): --io copy (a thread per flow, 8 threads per
#              core) against --io epoll (the 8 flows on one thread and one epoll
#              per end), 1 KiB and 64 KiB messages: Gbit/s, context switches
#              per MB, each end's process CPU per KiB. And tcp-rr -P 8 (1 B),
#              the same two ways: transactions/s and latency.
#   veth       a veth pair between two namespaces (sonde-io-a: server,
#              sonde-io-b: client), MTU 65535 and 1500: sender CPU per byte of
#              copy, zerocopy, sendfile, splice and uring at 64 KiB and 1 MiB, the
#              receiver always --rx-io copy; zero-copy completions and copies.
#
# Method. Every netsonde test runs against a separate `netsonde server` process,
# so the two ends are two processes. CPU placement, the same for every tool:
# servers (receivers, responders) run on core 1 and clients (senders,
# requesters) on core 0, with taskset, when the host has at least 2 cores.
# Repetitions are interleaved (each round visits every point, in a shuffled
# order for the matrices) and the tables show medians. Service demand
# (us_per_kib) is netperf's: microseconds of busy CPU per KiB moved, taken from
# /proc/stat system-wide, so on one host both ends see the same busy cores and
# their figures differ only by timing; the per-process columns (getrusage of
# each end's own process) are what separates the ends. netsonde streams run
# with --warmup (excluded from the results; it also hides auto's ~0.4 s
# calibration); the peers start measuring at once, which on loopback costs
# them nothing measurable (no slow start to speak of at these RTTs).
#
# Run from anywhere, as root (apt-get, ip netns):   bash bench/io-strategies.sh
# Environment:
#   SECTIONS="tcp udp pairs peers-tcp peers-udp rr threads veth"
#   REPS=5          rounds of the tcp matrix (its medians carry the auto claim)
#   UDP_REPS=3      rounds of the udp matrix
#   PEER_REPS=5     rounds of the peer comparisons and of the veth section
#   PAIR_REPS=7     rounds of the paired auto runs
#   PAIR_DURATION=4 measured seconds per paired run (plus PAIR_WARMUP)
#   PAIR_WARMUP=3   warm-up of the paired runs, for every strategy alike (auto on
#                   both ends calibrates the receiver, then the sender)
#   DURATION=1.5    measured seconds per netsonde matrix run (plus WARMUP)
#   WARMUP=0.5      netsonde warm-up, excluded from its results
#   PEER_DURATION=2 seconds per run in the peer sections (all tools alike)
#   UDP_BUFFERS="4M default"  socket buffer variants of the UDP peer ladders:
#                   a size set on both ends of every tool (-w), or "default"
#   TCP_STRATEGIES, TCP_SIZES, UDP_STRATEGIES, UDP_SIZES: space-separated lists
#                   overriding the matrices' axes (e.g. for a quick look)
#   NETSONDE=path   binary to use instead of building target/release/netsonde
#   OUT=dir         keep raw JSON, records.jsonl and report.md there
#   REPORT_ONLY=1   with OUT: measure nothing, re-render OUT/records.jsonl
#   PAIRS_FROM=dir  an earlier run's OUT: its tcp/udp matrix records choose the
#                   rivals of the paired runs (SECTIONS=pairs alone then works)
#   BASE_PORT=25400 first of the ports used (about 10)
set -euo pipefail

SECTIONS=${SECTIONS:-"tcp udp pairs peers-tcp peers-udp rr threads veth"}
REPS=${REPS:-5}
UDP_REPS=${UDP_REPS:-3}
PEER_REPS=${PEER_REPS:-5}
PAIR_REPS=${PAIR_REPS:-7}
PAIR_DURATION=${PAIR_DURATION:-4}
PAIR_WARMUP=${PAIR_WARMUP:-3}
DURATION=${DURATION:-1.5}
WARMUP=${WARMUP:-0.5}
PEER_DURATION=${PEER_DURATION:-2}
UDP_BUFFERS=${UDP_BUFFERS:-"4M default"}
BASE_PORT=${BASE_PORT:-25400}
HOST=127.0.0.1
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

NS_PORT=$BASE_PORT            # netsonde server (loopback)
IPERF3_PORT=$((BASE_PORT + 1))
IPERF2_PORT=$((BASE_PORT + 2))
IPERF2U_PORT=$((BASE_PORT + 3))
NUTTCP_PORT=$((BASE_PORT + 4)) # and +5 for its data connection
SP_PORT=$((BASE_PORT + 6))     # sockperf, blocking
SPP_PORT=$((BASE_PORT + 7))    # sockperf, polling
VETH_PORT=$((BASE_PORT + 8))   # netsonde server in sonde-io-a
NS_A=sonde-io-a NS_B=sonde-io-b
VETH_A=10.210.0.1 VETH_B=10.210.0.2

has() { [[ " $SECTIONS " == *" $1 "* ]]; }

SUDO=; [[ $(id -u) -eq 0 ]] || SUDO=sudo
missing=()
for tool in iperf3 iperf nuttcp sockperf jq; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  $SUDO apt-get install -y "${missing[@]}" >&2
fi

BUILT="binary given: ${NETSONDE:-}"
if [[ -z ${NETSONDE:-} && ${REPORT_ONLY:-0} != 1 ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
  BUILT="built from git $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  [[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null) ]] && BUILT+=" with local changes"
fi
NETSONDE=${NETSONDE:-}

if (($(nproc) >= 2)); then
  SRV=(taskset -c 1); CLI=(taskset -c 0)
  PLACEMENT="servers/receivers on core 1, clients/senders on core 0 (taskset), every tool"
else
  SRV=(); CLI=(); PLACEMENT="unpinned (one core)"
fi

if [[ -n ${OUT:-} ]]; then mkdir -p "$OUT"; WORK=$OUT; KEEP=1; else WORK=$(mktemp -d); KEEP=0; fi
RAW=$WORK/raw; mkdir -p "$RAW"
if [[ ${REPORT_ONLY:-0} != 1 ]]; then
  # A private copy: a rebuild of target/ during the run must not change the binary.
  [[ -x $NETSONDE ]] || { echo "no netsonde binary at $NETSONDE" >&2; exit 1; }
  cp "$NETSONDE" "$WORK/netsonde.bin"
  NETSONDE=$WORK/netsonde.bin
fi
REC=$WORK/records.jsonl
if [[ ${REPORT_ONLY:-0} == 1 ]]; then
  [[ -s $REC && -s $WORK/header.txt ]] || { echo "REPORT_ONLY needs OUT=dir with records.jsonl" >&2; exit 1; }
  SECTIONS=
else
  : >"$REC"
  # Rivals for the paired runs from an earlier run's matrices (so pairs can be
  # re-run alone); those matrix rows then appear in this report too.
  if [[ -n ${PAIRS_FROM:-} ]]; then
    jq -c 'select(.sec == "tcp" or .sec == "udp")' "$PAIRS_FROM/records.jsonl" >>"$REC"
  fi
fi
PIDS=()
NETNS_MADE=0

stop_pid() { # pid [grace tenths of a second]: TERM, then KILL after the grace (5 s)
  local pid=$1 i
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq "${2:-50}"); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
netns_down() {
  $SUDO ip netns del "$NS_A" 2>/dev/null || true
  $SUDO ip netns del "$NS_B" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
  ((NETNS_MADE)) && netns_down
  ((KEEP)) || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME PROTO(tcp|udp) PORT [NETNS] -- command...: background it,
# remember its PID, wait until it listens.
start_server() {
  local name=$1 proto=$2 port=$3 ns=$4; shift 5
  "$@" >"$WORK/$name.log" 2>&1 &
  PIDS+=($!)
  local ssn=(ss); [[ -n $ns ]] && ssn=($SUDO ip netns exec "$ns" ss)
  local flag=-Hltn; [[ $proto == udp ]] && flag=-Hlun
  for _ in $(seq 100); do
    [[ -n $("${ssn[@]}" "$flag" "sport = :$port" 2>/dev/null) ]] && return 0
    kill -0 "${PIDS[-1]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "$name did not come up on port $port:" >&2
  cat "$WORK/$name.log" >&2
  exit 1
}
stop_last_server() { local pid=${PIDS[-1]}; unset 'PIDS[-1]'; stop_pid "$pid" "${1:-50}"; }

# try FILE cmd...: run with output to FILE; three attempts (a server may still be
# tearing down the previous test). Returns 1 if all fail.
try() {
  local out=$1 t; shift
  for t in 1 2 3; do
    if "$@" >"$out" 2>"$out.err"; then return 0; fi
    sleep 1
  done
  echo "  failed: $* ($(tail -n 2 "$out.err" | tr '\n' ' '))" >&2
  return 1
}

# The fields of a netsonde result kept per run (medians are taken over them).
NS_JQ='
  def proc(c): (c.cpu.process.user + c.cpu.process.sys) / 1000;
  (.directions[0].bytes // 0) as $b
  | {sec: $sec, tool: "netsonde", strat: $strat, size: $size, rep: ($rep | tonumber),
     g: .directions[0].goodput, mps: .directions[0].messages_per_sec,
     pps: .directions[0].packets_per_sec, loss: .directions[0].loss,
     sdc: .client_cost.us_per_kib, sds: .server_cost.us_per_kib,
     pc: (if $b > 0 then (try (proc(.client) / ($b / 1024)) catch null) else null end),
     ps: (if $b > 0 then (try (proc(.server) / ($b / 1024)) catch null) else null end),
     mpc: .client_cost.messages_per_call, cpm: .client_cost.calls_per_message,
     cspmb: .client_cost.ctxsw_per_mb, busy: .client_cost.busy_cores,
     zs: .client.flows[0].io.zc_sends, zc: .client.flows[0].io.zc_completions,
     zcc: .client.flows[0].io.zc_copied,
     chose: (.client.flows[0].io.strategy // null),
     note: (.client.flows[0].io.note // null),
     p50: .rr.latency.p50, p99: .rr.latency.p99, tps: .rr.transactions_per_sec}'

# ns_run SEC STRAT SIZE REP FILE client-args...: one netsonde client run, recorded.
ns_run() {
  local sec=$1 strat=$2 size=$3 rep=$4 file=$5; shift 5
  try "$file" "$@" --json || return 1
  jq -c --arg sec "$sec" --arg strat "$strat" --arg size "$size" --arg rep "$rep" "$NS_JQ" "$file" >>"$REC"
}
peer_rec() { # SEC TOOL STRAT SIZE REP key=value... (numbers)
  local sec=$1 tool=$2 strat=$3 size=$4 rep=$5; shift 5
  local kv=() a
  for a in "$@"; do kv+=(--argjson "${a%%=*}" "${a#*=}"); done
  jq -cn --arg sec "$sec" --arg tool "$tool" --arg strat "$strat" --arg size "$size" --argjson rep "$rep" \
    "${kv[@]}" '$ARGS.named' >>"$REC"
}
num() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]]; }

read -ra TCP_STRATS <<<"${TCP_STRATEGIES:-copy epoll batch zerocopy sendfile splice uring busypoll auto}"
read -ra TCP_SIZES <<<"${TCP_SIZES:-64 512 4K 16K 64K 1M}"
read -ra UDP_STRATS <<<"${UDP_STRATEGIES:-copy epoll batch zerocopy uring busypoll auto}"
read -ra UDP_SIZES <<<"${UDP_SIZES:-64 512 4K 16K 60000}"

io_args() { # strategy -> netsonde options
  case $1 in
    sendfile) echo "--tx-io sendfile --rx-io copy" ;;
    auto/no-warm-up) echo "--io auto" ;;
    *) echo "--io $1" ;;
  esac
}

started=$(date +%s)
[[ -n $SECTIONS ]] && {
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(uname -r), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "netsonde: $("$NETSONDE" --version) ($BUILT); peers: $(iperf3 --version | head -n1 | cut -d' ' -f1-2), $(iperf -v 2>&1 | cut -d' ' -f1-3), $(nuttcp -V 2>&1 | head -n1), sockperf $(sockperf --version 2>&1 | grep -o '[0-9][0-9.]*' | head -n1)"
  echo "placement: $PLACEMENT; netsonde matrix runs: -t $DURATION --warmup $WARMUP; paired auto runs: -t $PAIR_DURATION --warmup $PAIR_WARMUP; peer sections: ${PEER_DURATION}s per run"
  echo "repetitions: tcp matrix $REPS, udp matrix $UDP_REPS, peers and veth $PEER_REPS (interleaved; medians shown)"
} >"$WORK/header.txt"
cat "$WORK/header.txt" >&2

if has tcp || has udp || has pairs || has peers-tcp || has peers-udp || has rr || has threads; then
  start_server netsonde tcp "$NS_PORT" "" -- "${SRV[@]}" "$NETSONDE" server --bind "$HOST" --port "$NS_PORT"
fi
NSC=("${CLI[@]}" "$NETSONDE" client "$HOST" --port "$NS_PORT")

# ---------------------------------------------------------------- matrices
if has tcp; then
  points=()
  for s in "${TCP_STRATS[@]}" auto/no-warm-up; do for z in "${TCP_SIZES[@]}"; do points+=("$s $z"); done; done
  for ((r = 1; r <= REPS; r++)); do
    echo "tcp matrix, round $r/$REPS (${#points[@]} points)" >&2
    while read -r s z; do
      w=$WARMUP; [[ $s == auto/no-warm-up ]] && w=0
      # shellcheck disable=SC2046
      ns_run tcp "$s" "$z" "$r" "$RAW/tcp-${s//\//_}-$z-$r.json" "${NSC[@]}" -T tcp-stream -l "$z" \
        -t "$DURATION" --warmup "$w" $(io_args "$s") || true
    done < <(printf '%s\n' "${points[@]}" | shuf)
  done
fi

if has udp; then
  points=()
  for s in "${UDP_STRATS[@]}"; do for z in "${UDP_SIZES[@]}"; do points+=("$s $z"); done; done
  for ((r = 1; r <= UDP_REPS; r++)); do
    echo "udp matrix, round $r/$UDP_REPS (${#points[@]} points)" >&2
    while read -r s z; do
      # shellcheck disable=SC2046
      ns_run udp "$s" "$z" "$r" "$RAW/udp-$s-$z-$r.json" "${NSC[@]}" -T udp-stream -l "$z" -b 100G \
        -t "$DURATION" --warmup "$WARMUP" $(io_args "$s") || true
    done < <(printf '%s\n' "${points[@]}" | shuf)
  done
fi

# ---------------------------------------------------------------- auto, paired
MEDIAN_JQ='def median: map(select(. != null)) | sort
  | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;'
if has pairs; then
  : >"$WORK/pairs.tsv"
  for sec in tcp udp; do
    if [[ $sec == tcp ]]; then sizes=("${TCP_SIZES[@]}"); else sizes=("${UDP_SIZES[@]}"); fi
    for z in "${sizes[@]}"; do
      # The best fixed strategy by the matrix medians, and the best whose receiver
      # copies into user space (not zerocopy: MSG_TRUNC; not splice: /dev/null).
      jq -rs --arg sec "$sec" --arg size "$z" "$MEDIAN_JQ"'
        [.[] | select(.sec == $sec and .size == $size and (.strat | startswith("auto") | not))]
        | group_by(.strat) | map({s: .[0].strat, m: (map(.g) | median)}) | map(select(.m != null))
        | select(length > 0)
        | ["pair", $sec, $size, max_by(.m).s, (map(select(.s != "zerocopy" and .s != "splice")) | max_by(.m).s)] | @tsv' \
        "$REC" >>"$WORK/pairs.tsv"
    done
  done
  if [[ -s $WORK/pairs.tsv ]]; then
    for ((r = 1; r <= PAIR_REPS; r++)); do
      echo "auto, paired runs, round $r/$PAIR_REPS" >&2
      while IFS=$'\t' read -r pre sec z best bestr; do
        L=(auto "$best"); [[ $bestr != "$best" ]] && L+=("$bestr")
        for ((k = 0; k < ${#L[@]}; k++)); do
          s=${L[$(((k + r) % ${#L[@]}))]}
          extra=(-T tcp-stream); [[ $sec == udp ]] && extra=(-T udp-stream -b 100G)
          # shellcheck disable=SC2046
          ns_run "$pre-$sec" "$s" "$z" "$r" "$RAW/$pre-$sec-${s//\//_}-$z-$r.json" "${NSC[@]}" "${extra[@]}" -l "$z" \
            -t "$PAIR_DURATION" --warmup "$PAIR_WARMUP" $(io_args "$s") || true
        done
      done <"$WORK/pairs.tsv"
    done
  fi
fi

# ---------------------------------------------------------------- peers: TCP 64 B
if has peers-tcp; then
  start_server iperf3 tcp "$IPERF3_PORT" "" -- "${SRV[@]}" iperf3 -s -B "$HOST" -p "$IPERF3_PORT"
  start_server iperf2 tcp "$IPERF2_PORT" "" -- "${SRV[@]}" iperf -s -B "$HOST" -p "$IPERF2_PORT"
  start_server nuttcp tcp "$NUTTCP_PORT" "" -- "${SRV[@]}" nuttcp -S --nofork -P "$NUTTCP_PORT"
  T=$PEER_DURATION
  for ((r = 1; r <= PEER_REPS; r++)); do
    echo "peers, TCP 64 B, round $r/$PEER_REPS" >&2
    for s in copy batch uring auto; do
      w=0; [[ $s == auto ]] && w=$WARMUP
      ns_run ptcp "$s" 64 "$r" "$RAW/ptcp-$s-$r.json" "${NSC[@]}" -T tcp-stream -l 64 -t "$T" --warmup "$w" --io "$s" || true
    done
    f=$RAW/ptcp-iperf3-$r.json
    if try "$f" "${CLI[@]}" iperf3 -c "$HOST" -p "$IPERF3_PORT" -l 64 -t "$T" -J; then
      g=$(jq '.end.sum_received.bits_per_second' "$f")
      sd=$(jq '.end.cpu_utilization_percent.host_total' "$f")
      peer_rec ptcp iperf3 iperf3 64 "$r" g="$g" mps="$(awk -v g="$g" 'BEGIN{print g/8/64}')" hostcpu="$sd"
    fi
    f=$RAW/ptcp-iperf2-$r.csv
    if try "$f" "${CLI[@]}" iperf -c "$HOST" -p "$IPERF2_PORT" -l 64 -t "$T" -y C; then
      g=$(tail -n1 "$f" | cut -d, -f9)
      num "$g" && peer_rec ptcp iperf2 iperf2 64 "$r" g="$g" mps="$(awk -v g="$g" 'BEGIN{print g/8/64}')"
    fi
    f=$RAW/ptcp-nuttcp-$r.txt
    if try "$f" "${CLI[@]}" nuttcp -P "$NUTTCP_PORT" -l64 -T"$T" -fparse "$HOST"; then
      m=$(sed -n 's/.*rate_Mbps=\([0-9.]*\).*/\1/p' "$f")
      num "$m" && peer_rec ptcp nuttcp nuttcp 64 "$r" g="$(awk -v m="$m" 'BEGIN{print m*1e6}')" mps="$(awk -v m="$m" 'BEGIN{print m*1e6/8/64}')"
    fi
  done
  stop_last_server; stop_last_server; stop_last_server
fi

# ---------------------------------------------------------------- peers: UDP 64 B
# One ladder for every tool, in packets/s, steps of sqrt(2); offered bit/s of
# 64-byte payload = pps * 512.
LADDER=(25000 35000 50000 70000 100000 140000 200000 280000 400000 560000 800000 1120000 1600000 2240000 3200000 4500000 6400000 9000000 12800000 18000000)
# udp_try TOOL PPS REP BUF: one run at an offered rate, with the socket buffers
# left at the system default (BUF=default) or set to BUF (e.g. 4M) on both ends;
# sets UDP_RES="received_pps loss_percent" (loss 100 when the tool gave no
# report). Runs in this shell.
udp_try() {
  local tool=$1 pps=$2 rep=$3 buf=$4 bits=$(($2 * 512)) T=$PEER_DURATION f line
  local wn=() wi=() wu=()
  if [[ $buf != default ]]; then
    wn=(-w "$buf"); wi=(-w "$buf")
    wu=(-w"$(numfmt --from=iec "$buf" | awk '{print int($1 / 1024)}')") # nuttcp: KB
  fi
  f=$RAW/pudp-$buf-$tool-$pps-$rep
  : >"$f.res"
  case $tool in
    netsonde)
      try "$f.json" "${NSC[@]}" -T udp-stream -l 64 --io batch -b "$bits" -t "$T" "${wn[@]}" --json &&
        jq -r '"\(.directions[0].packets_per_sec) \(.directions[0].loss)"' "$f.json" >"$f.res" ;;
    iperf3)
      try "$f.json" "${CLI[@]}" iperf3 -c "$HOST" -p "$IPERF3_PORT" -u -l 64 -b "$bits" -t "$T" "${wi[@]}" -J &&
        jq -r '.end.sum_received | "\(.bytes / 64 / .seconds) \(.lost_percent)"' "$f.json" >"$f.res" ;;
    iperf2)
      # iperf 2's UDP server reports only if the client's final datagram gets
      # through, and otherwise stays wedged: a fresh server for every run, its
      # CSV report read from its log (no report = overloaded = a failed rung).
      start_server "iperf2u-$buf-$pps-$rep" udp "$IPERF2U_PORT" "" -- "${SRV[@]}" iperf -s -u -B "$HOST" -p "$IPERF2U_PORT" -y C "${wi[@]}"
      try "$f.txt" "${CLI[@]}" iperf -c "$HOST" -p "$IPERF2U_PORT" -u -l 64 -b "$bits" -t "$T" "${wi[@]}" -y C || true
      for _ in $(seq 20); do [[ -s $WORK/iperf2u-$buf-$pps-$rep.log ]] && break; sleep 0.1; done
      stop_last_server 10
      line=$(grep -m1 ',' "$WORK/iperf2u-$buf-$pps-$rep.log" || true)
      [[ -n $line ]] && awk -F, '{split($7, iv, "-"); d = iv[2] - iv[1]; if (d <= 0) d = 1;
          print ($12 - $11) / d, $13}' <<<"$line" >"$f.res" ;;
    nuttcp)
      try "$f.txt" "${CLI[@]}" nuttcp -P "$NUTTCP_PORT" -u -l64 -R$((bits / 1000)) -T"$T" "${wu[@]}" -fparse "$HOST" &&
        sed -n 's/.*real_seconds=\([0-9.]*\).* drop=\([0-9]*\) pkt=\([0-9]*\) data_loss=\([0-9.]*\).*/\1 \2 \3 \4/p' "$f.txt" |
          awk 'NF == 4 {print ($3 - $2) / $1, $4}' >"$f.res" ;;
  esac
  UDP_RES=$(tail -n 1 "$f.res")
  read -r a b <<<"$UDP_RES" || true
  num "${a:-x}" && num "${b:-x}" || UDP_RES="0 100"
  return 0
}
if has peers-udp; then
  start_server iperf3 tcp "$IPERF3_PORT" "" -- "${SRV[@]}" iperf3 -s -B "$HOST" -p "$IPERF3_PORT"
  start_server nuttcp tcp "$NUTTCP_PORT" "" -- "${SRV[@]}" nuttcp -S --nofork -P "$NUTTCP_PORT"
  tools=(netsonde iperf3 iperf2 nuttcp)
  for buf in $UDP_BUFFERS; do
    # Start rungs (indexes into LADDER) near where each tool tops out.
    if [[ $buf == default ]]; then
      declare -A START=([netsonde]=8 [iperf3]=1 [iperf2]=1 [nuttcp]=1)
    else
      declare -A START=([netsonde]=14 [iperf3]=3 [iperf2]=3 [nuttcp]=3)
    fi
    for ((r = 1; r <= PEER_REPS; r++)); do
      echo "peers, UDP 64 B ladders, socket buffers $buf, round $r/$PEER_REPS" >&2
      for ((k = 0; k < ${#tools[@]}; k++)); do
        tool=${tools[$(((k + r) % ${#tools[@]}))]}
        # Climb from the tool's start rung until two rungs in a row fail (loss
        # >= 1%); if the start rung fails, step down until one passes.
        i=${START[$tool]} best=0 bestrate=0 fails=0 sat=0 passed_any=0 dir=1
        while ((i >= 0 && i < ${#LADDER[@]})); do
          udp_try "$tool" "${LADDER[$i]}" "$r" "$buf"
          read -r got loss <<<"$UDP_RES"
          peer_rec "pudp-ladder-$buf" "$tool" "$tool" 64 "$r" offered="${LADDER[$i]}" pps="$got" loss="$loss"
          printf '  %-8s offered %9d pps: received %11.0f pps, loss %6.2f%%\n' "$tool" "${LADDER[$i]}" "$got" "$loss" >&2
          if awk -v l="$loss" 'BEGIN{exit !(l < 1)}'; then
            passed_any=1; fails=0
            awk -v a="$got" -v b="$best" 'BEGIN{exit !(a > b)}' && { best=$got; bestrate=${LADDER[$i]}; }
            ((dir < 0)) && break
            # A sender that cannot reach the offered rate loses nothing and
            # gains nothing higher up: two such rungs in a row end the climb.
            if awk -v g="$got" -v o="${LADDER[$i]}" 'BEGIN{exit !(g < 0.8 * o)}'; then
              sat=$((sat + 1)); ((sat >= 2)) && break
            else
              sat=0
            fi
          else
            fails=$((fails + 1))
            ((passed_any)) || dir=-1
            ((passed_any && fails >= 2)) && break
          fi
          i=$((i + dir))
        done
        peer_rec "pudp-$buf" "$tool" "$tool" 64 "$r" pps="$best" offered="$bestrate"
      done
    done
  done
  stop_last_server; stop_last_server
fi

# ---------------------------------------------------------------- tcp-rr
if has rr; then
  start_server sockperf tcp "$SP_PORT" "" -- "${SRV[@]}" sockperf server --tcp -i "$HOST" -p "$SP_PORT"
  start_server sockperf-poll tcp "$SPP_PORT" "" -- "${SRV[@]}" sockperf server --tcp -i "$HOST" -p "$SPP_PORT" --nonblocked --lls 50
  T=$PEER_DURATION
  sockperf_pp() { # label port extra...
    local label=$1 port=$2 f=$RAW/rr-$1-$r.txt; shift 2
    try "$f" "${CLI[@]}" sockperf ping-pong --tcp -i "$HOST" -p "$port" -t "$T" -m 14 --full-rtt "$@" || return 0
    local p50 p99 tps
    p50=$(awk '/---> percentile 50.000 =/ {print $NF * 1000}' "$f")
    p99=$(awk '/---> percentile 99.000 =/ {print $NF * 1000}' "$f")
    tps=$(sed -n 's/.*\[Valid Duration\] RunTime=\([0-9.]*\) sec;.*ReceivedMessages=\([0-9]*\).*/\2 \1/p' "$f" | awk '{print $1/$2}')
    num "$p50" && num "$p99" && num "$tps" && peer_rec rr sockperf "$label" 14 "$r" p50="$p50" p99="$p99" tps="$tps"
  }
  for ((r = 1; r <= PEER_REPS; r++)); do
    echo "tcp-rr, round $r/$PEER_REPS" >&2
    ns_run rr busypoll 1 "$r" "$RAW/rr-bp1-$r.json" "${NSC[@]}" -T tcp-rr -t "$T" --warmup "$WARMUP" --io busypoll || true
    sockperf_pp sockperf "$SP_PORT"
    ns_run rr busypoll 14 "$r" "$RAW/rr-bp14-$r.json" "${NSC[@]}" -T tcp-rr --request-size 14 --response-size 14 -t "$T" --warmup "$WARMUP" --io busypoll || true
    sockperf_pp sockperf-poll "$SPP_PORT" --nonblocked --lls 50
    ns_run rr copy 14 "$r" "$RAW/rr-copy14-$r.json" "${NSC[@]}" -T tcp-rr --request-size 14 --response-size 14 -t "$T" --warmup "$WARMUP" --io copy || true
    ns_run rr copy 1 "$r" "$RAW/rr-copy1-$r.json" "${NSC[@]}" -T tcp-rr -t "$T" --warmup "$WARMUP" --io copy || true
  done
  stop_last_server; stop_last_server
fi

# ---------------------------------------------------------------- threads
if has threads; then
  for ((r = 1; r <= PEER_REPS; r++)); do
    echo "flows per thread, round $r/$PEER_REPS" >&2
    while read -r s z; do
      ns_run threads "$s" "$z" "$r" "$RAW/threads-$s-$z-$r.json" "${NSC[@]}" -T tcp-stream -P 8 -l "$z" \
        -t "$DURATION" --warmup "$WARMUP" --io "$s" || true
    done < <(printf '%s\n' "copy 1K" "epoll 1K" "copy 64K" "epoll 64K" | shuf)
    for s in $(printf '%s\n' copy epoll | shuf); do
      ns_run threads-rr "$s" 1 "$r" "$RAW/threads-rr-$s-$r.json" "${NSC[@]}" -T tcp-rr -P 8 \
        -t "$DURATION" --warmup "$WARMUP" --io "$s" || true
    done
  done
fi

# ---------------------------------------------------------------- veth
read -ra VETH_STRATS <<<"${VETH_STRATEGIES:-copy zerocopy sendfile splice uring}"
read -ra VETH_SIZES <<<"${VETH_SIZES:-64K 1M}"
if has veth; then
  netns_down
  NETNS_MADE=1
  $SUDO ip netns add "$NS_A"
  $SUDO ip netns add "$NS_B"
  $SUDO ip link add sonde-io-va netns "$NS_A" type veth peer name sonde-io-vb netns "$NS_B"
  $SUDO ip -n "$NS_A" addr add "$VETH_A/30" dev sonde-io-va
  $SUDO ip -n "$NS_B" addr add "$VETH_B/30" dev sonde-io-vb
  $SUDO ip -n "$NS_A" link set lo up
  $SUDO ip -n "$NS_B" link set lo up
  start_server netsonde-veth tcp "$VETH_PORT" "$NS_A" -- $SUDO ip netns exec "$NS_A" "${SRV[@]}" "$NETSONDE" server --bind "$VETH_A" --port "$VETH_PORT"
  for mtu in 65535 1500; do
    $SUDO ip -n "$NS_A" link set sonde-io-va mtu "$mtu" up
    $SUDO ip -n "$NS_B" link set sonde-io-vb mtu "$mtu" up
    points=()
    for s in "${VETH_STRATS[@]}"; do for z in "${VETH_SIZES[@]}"; do points+=("$s $z"); done; done
    for ((r = 1; r <= PEER_REPS; r++)); do
      echo "veth MTU $mtu, round $r/$PEER_REPS" >&2
      while read -r s z; do
        ns_run "veth$mtu" "$s" "$z" "$r" "$RAW/veth$mtu-$s-$z-$r.json" $SUDO ip netns exec "$NS_B" "${CLI[@]}" \
          "$NETSONDE" client "$VETH_A" --port "$VETH_PORT" -T tcp-stream -l "$z" -t "$DURATION" --warmup "$WARMUP" \
          --tx-io "$s" --rx-io copy || true
      done < <(printf '%s\n' "${points[@]}" | shuf)
    done
  done
  stop_last_server
fi

# ---------------------------------------------------------------- report
# Medians per (section, tool, strategy, size) of every numeric field, as TSV.
jq -rs '
  def median: map(select(. != null)) | sort
    | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
      else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def f: if . == null then "-" else tostring end;
  group_by([.sec, .tool, .strat, .size])[]
  | . as $g
  | ([$g[0].sec, $g[0].tool, $g[0].strat, $g[0].size, ($g | length | tostring)]
     + ([ "g", "mps", "pps", "loss", "sdc", "sds", "pc", "ps", "mpc", "cspmb", "busy",
          "zs", "zc", "zcc", "p50", "p99", "tps", "offered", "hostcpu" ]
        | map(. as $k | $g | map(.[$k]) | median | f))
     + [($g | map(.chose // empty) | group_by(.) | map("\(.[0])x\(length)") | join(",")) // "-"]
     + ([$g[] | .g // empty] | if length == 0 then ["-", "-"] else [min, max] | map(tostring) end))
  | @tsv' "$REC" >"$WORK/medians.tsv"
: >"$WORK/pairs-res.tsv"
if [[ -s $WORK/pairs.tsv ]]; then
  jq -rs --rawfile choice "$WORK/pairs.tsv" "$MEDIAN_JQ"'
    def g(q; s; r): [q[] | select(.strat == s and .rep == r) | .g] | first;
    def ratios(q; s): [q | map(.rep) | unique | .[] as $r
      | [g(q; "auto"; $r), g(q; s; $r)] | select(.[0] != null and .[1] != null and .[1] > 0) | .[0] / .[1]];
    def f: if . == null then "-" else tostring end;
    [.[] | select(.sec | startswith("pair"))] as $p
    | $choice | split("\n") | map(select(length > 0) | split("\t"))[]
    | . as [$pre, $sec, $size, $best, $bestr]
    | [$p[] | select(.sec == $pre + "-" + $sec and .size == $size)] as $q
    | ratios($q; $best) as $rb | ratios($q; $bestr) as $rr
    | [$sec + "-stream", $size, $best, $bestr, ($rb | length), ($rb | median), ($rb | min), ($rb | max),
       ($rr | median), ($rr | min), ($rr | max),
       ([$q[] | select(.strat == "auto") | .g] | median), ([$q[] | select(.strat == $best) | .g] | median),
       ([$q[] | select(.strat == $bestr) | .g] | median),
       ([$q[] | select(.strat == "auto") | .chose] | group_by(.) | map("\(.[0])x\(length)") | join(","))]
    | map(f) | @tsv' "$REC" >"$WORK/pairs-res.tsv"
fi

{
cat <<EOF
## Measured $(date -u '+%Y-%m-%d')

\`\`\`
$(cat "$WORK/header.txt")
\`\`\`

EOF
awk -F'\t' -v tcp_strats="${TCP_STRATS[*]} auto/no-warm-up" -v tcp_sizes="${TCP_SIZES[*]}" \
    -v udp_strats="${UDP_STRATS[*]}" -v udp_sizes="${UDP_SIZES[*]}" \
    -v veth_strats="${VETH_STRATS[*]}" -v veth_sizes="${VETH_SIZES[*]}" -v udp_buffers="$UDP_BUFFERS" '
function v(sec, tool, st, sz, col,   k) { k = sec SUBSEP tool SUBSEP st SUBSEP sz; return (k in K && D[k, col] != "") ? D[k, col] : "-" }
function has(sec, tool, st, sz) { return ((sec SUBSEP tool SUBSEP st SUBSEP sz) in K) }
function fmt(x, d) { return (x == "-" || x == "") ? "-" : sprintf("%." d "f", x) }
function sig(x) { if (x == "-" || x == "") return "-"; a = (x < 0) ? -x : x;
  return (a >= 100) ? sprintf("%.0f", x) : (a >= 10) ? sprintf("%.1f", x) : (a >= 1) ? sprintf("%.2f", x) : sprintf("%.3f", x) }
function gbr(sec, st, sz,   k) { k = sec SUBSEP "netsonde" SUBSEP st SUBSEP sz; if (!(k in K)) return "-"
  return sprintf("%.2f [%.1f-%.1f]", D[k, 6] / 1e9, D[k, 26] / 1e9, D[k, 27] / 1e9) }
function rate(x) { if (x == "-") return "-"; return (x >= 1e6) ? sprintf("%.2f M", x / 1e6) : sprintf("%.0f k", x / 1e3) }
function pivot(title, sec, strats, sizes, what,   ns, nz, S, Z, i, j, line, sep) {
  ns = split(strats, S, " "); nz = split(sizes, Z, " ")
  if (!anysec[sec]) return
  print "#### " title "\n"
  line = "| strategy |"; sep = "|---|"
  for (j = 1; j <= nz; j++) { line = line " " Z[j] " |"; sep = sep "---:|" }
  print line; print sep
  for (i = 1; i <= ns; i++) {
    line = "| " S[i] " |"
    for (j = 1; j <= nz; j++) line = line " " cell(sec, S[i], Z[j], what) " |"
    print line
  }
  print ""
}
function cell(sec, st, sz, what,   g) {
  if (!has(sec, "netsonde", st, sz)) return "-"
  if (what == "g") return fmt(v(sec, "netsonde", st, sz, 6) / 1e9, 2)
  if (what == "mps") return rate(v(sec, "netsonde", st, sz, (sec == "udp") ? 8 : 7))
  if (what == "loss") return fmt(v(sec, "netsonde", st, sz, 9), 1)
  if (what == "sd") return sig(v(sec, "netsonde", st, sz, 10)) " / " sig(v(sec, "netsonde", st, sz, 11))
  if (what == "proc") return sig(v(sec, "netsonde", st, sz, 12)) " / " sig(v(sec, "netsonde", st, sz, 13))
  if (what == "mpc") return sig(v(sec, "netsonde", st, sz, 14))
  if (what == "cs") return sig(v(sec, "netsonde", st, sz, 15))
  if (what == "zc") { zs = v(sec, "netsonde", st, sz, 17); zcc = v(sec, "netsonde", st, sz, 19)
    return (zs == "-" || zs == 0) ? "-" : sprintf("%.0f/%.0f/%.0f", zs, v(sec, "netsonde", st, sz, 18), zcc) }
  if (what == "veth") return fmt(v(sec, "netsonde", st, sz, 6) / 1e9, 2) " Gb/s; " sig(v(sec, "netsonde", st, sz, 10)) "; " sig(v(sec, "netsonde", st, sz, 12)) " / " sig(v(sec, "netsonde", st, sz, 13))
}
FILENAME !~ /pairs-res/ { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4; K[k] = 1; anysec[$1] = 1
  for (c = 5; c <= NF; c++) D[k, c] = $c }
FILENAME ~ /pairs-res/ { NP++; for (c = 1; c <= NF; c++) PR[NP, c] = $c; next }
END {
  if (anysec["tcp"]) {
    print "### tcp-stream on loopback (medians; --io on both ends, sendfile: --rx-io copy)\n"
    pivot("Goodput, Gbit/s", "tcp", tcp_strats, tcp_sizes, "g")
    pivot("Messages/s (message = size bytes of the stream)", "tcp", tcp_strats, tcp_sizes, "mps")
    pivot("Service demand, us of system-wide busy CPU per KiB: client end / server end", "tcp", tcp_strats, tcp_sizes, "sd")
    pivot("Process-only CPU per KiB (getrusage of each process): sender / receiver, us", "tcp", tcp_strats, tcp_sizes, "proc")
    pivot("Sender messages per system call", "tcp", tcp_strats, tcp_sizes, "mpc")
    pivot("Context switches per MB, client end", "tcp", tcp_strats, tcp_sizes, "cs")
    pivot("Zero-copy sends / completions / copied by the kernel", "tcp", "zerocopy auto", tcp_sizes, "zc")
  }
  if (anysec["udp"]) {
    print "### udp-stream on loopback, offered load unlimited (-b 100G) (medians)\n"
    pivot("Received goodput, Gbit/s", "udp", udp_strats, udp_sizes, "g")
    pivot("Received packets/s", "udp", udp_strats, udp_sizes, "mps")
    pivot("Loss, % (the sender outruns the receiver: this is a capacity test)", "udp", udp_strats, udp_sizes, "loss")
    pivot("Service demand, us per received KiB: client end / server end", "udp", udp_strats, udp_sizes, "sd")
    pivot("Process-only CPU per received KiB: sender / receiver, us", "udp", udp_strats, udp_sizes, "proc")
    pivot("Sender datagrams per system call", "udp", udp_strats, udp_sizes, "mpc")
  }
  for (sec in anysec) if (anysec[sec] && sec ~ /^(tcp|udp)$/) {
    nz = split(sec == "tcp" ? tcp_sizes : udp_sizes, Z, " "); ns = split(sec == "tcp" ? tcp_strats : udp_strats, S, " ")
    print "### auto against the best fixed strategy, " sec "-stream (goodput medians; min-max of the runs in brackets)\n"
    print "Best fixed: the highest median of all fixed strategies. Best reading: the highest median among those whose receiver"
    print "copies the data into user space (zerocopy receives with MSG_TRUNC and splice into /dev/null, so they are left"
    print "out of that column), for reference: the receiver of auto may discard the bytes too, unless --verify. \"auto chose\" names"
    print "the sender auto kept.\n"
    print "| size | best fixed | Gbit/s | best reading | Gbit/s | auto Gbit/s | auto chose (runs) | auto / best fixed | auto / best reading | auto/no-warm-up / best fixed |"
    print "|---|---|---:|---|---:|---:|---|---:|---:|---:|"
    for (j = 1; j <= nz; j++) {
      best = -1; bs = "-"; bestr = -1; br = "-"
      for (i = 1; i <= ns; i++) { if (S[i] ~ /^auto/) continue
        x = v(sec, "netsonde", S[i], Z[j], 6); if (x == "-") continue
        if (x + 0 > best) { best = x + 0; bs = S[i] }
        if (S[i] != "zerocopy" && S[i] != "splice" && x + 0 > bestr) { bestr = x + 0; br = S[i] } }
      a = v(sec, "netsonde", "auto", Z[j], 6); an = v(sec, "netsonde", "auto/no-warm-up", Z[j], 6)
      ra = (a == "-" || best <= 0) ? "-" : a / best; rr = (a == "-" || bestr <= 0) ? "-" : a / bestr
      rn = (an == "-" || best <= 0) ? "-" : an / best
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", Z[j], bs, gbr(sec, bs, Z[j]), br, gbr(sec, br, Z[j]),
        gbr(sec, "auto", Z[j]), v(sec, "netsonde", "auto", Z[j], 25), fmt(ra, 2), fmt(rr, 2), fmt(rn, 2)
      if (ra != "-") { AUTO[sec] = AUTO[sec] sprintf(" %s: %.2f (%.2f)", Z[j], ra, rr); if (ra < 0.95) AUTOFAIL[sec] = 1 }
    }
    print ""
  }
  if (NP > 0) {
    print "### auto against the best fixed strategies, paired runs (ratio within each round; median [min-max] over rounds)\n"
    print "| test | size | best fixed | auto / it | best reading | auto / it | auto Gbit/s | best fixed Gbit/s | best reading Gbit/s | auto chose (runs) | >= 0.95? |"
    print "|---|---|---|---:|---|---:|---:|---:|---:|---|---|"
    for (i = 1; i <= NP; i++) {
      ok = (PR[i, 6] == "-") ? "-" : (PR[i, 6] >= 0.95) ? "yes" : "NO"
      printf "| %s | %s | %s | %s [%s-%s] | %s | %s [%s-%s] | %s | %s | %s | %s | %s |\n", PR[i, 1], PR[i, 2], PR[i, 3],
        fmt(PR[i, 6], 2), fmt(PR[i, 7], 2), fmt(PR[i, 8], 2), PR[i, 4], fmt(PR[i, 9], 2), fmt(PR[i, 10], 2), fmt(PR[i, 11], 2),
        (PR[i, 12] == "-") ? "-" : fmt(PR[i, 12] / 1e9, 2), (PR[i, 13] == "-") ? "-" : fmt(PR[i, 13] / 1e9, 2),
        (PR[i, 14] == "-") ? "-" : fmt(PR[i, 14] / 1e9, 2), PR[i, 15], ok
      if (PR[i, 6] != "-") { PAIRS[PR[i, 1]] = PAIRS[PR[i, 1]] sprintf(" %s: %.2f (%.2f)", PR[i, 2], PR[i, 6], PR[i, 9]); if (PR[i, 6] < 0.95) PAIRFAIL[PR[i, 1]] = 1 }
    }
    print ""
  }
  if (anysec["ptcp"]) {
    print "### TCP, 64-byte messages, against peers (medians; all " "runs interleaved)\n"
    print "| tool | how | messages/s | Gbit/s | sender messages/call |"
    print "|---|---|---:|---:|---:|"
    bestn = 0; bestp = 0
    n = split("copy batch uring auto", NS, " ")
    for (i = 1; i <= n; i++) if (has("ptcp", "netsonde", NS[i], 64)) {
      m = v("ptcp", "netsonde", NS[i], 64, 7)
      printf "| netsonde | --io %s | %s | %s | %s |\n", NS[i], rate(m), fmt(v("ptcp", "netsonde", NS[i], 64, 6) / 1e9, 3), sig(v("ptcp", "netsonde", NS[i], 64, 14))
      if (m + 0 > bestn) { bestn = m + 0; bestns = NS[i] }
      if (NS[i] == "copy") copyn = m + 0
    }
    n = split("iperf3 iperf2 nuttcp", P, " ")
    for (i = 1; i <= n; i++) if (has("ptcp", P[i], P[i], 64)) {
      m = v("ptcp", P[i], P[i], 64, 7)
      printf "| %s | -l 64 | %s | %s | 1 |\n", P[i], rate(m), fmt(v("ptcp", P[i], P[i], 64, 6) / 1e9, 3)
      if (m + 0 > bestp) { bestp = m + 0; bestpn = P[i] }
    }
    print ""
    if (bestp > 0) {
      RT = sprintf("TCP 64 B: best netsonde (--io %s) %s msg/s / fastest peer (%s) %s msg/s = %.2fx (target >= 1.5x: %s); one write per message (--io copy): %.2fx",
        bestns, rate(bestn), bestpn, rate(bestp), bestn / bestp, (bestn / bestp >= 1.5) ? "met" : "NOT met", copyn / bestp)
    }
  }
  nb = split(udp_buffers, UB, " ")
  for (b = 1; b <= nb; b++) { sec = "pudp-" UB[b]; if (!anysec[sec]) continue
    print "### UDP, 64-byte datagrams, socket buffers " UB[b] ": highest received packets/s with loss < 1% (medians over rounds of the ladder)\n"
    print "| tool | how | received packets/s | at offered packets/s |"
    print "|---|---|---:|---:|"
    n = split("netsonde iperf3 iperf2 nuttcp", P, " "); bestp = 0; un = 0
    for (i = 1; i <= n; i++) if (has(sec, P[i], P[i], 64)) {
      m = v(sec, P[i], P[i], 64, 8)
      how = (P[i] == "netsonde") ? "--io batch -b R" : (P[i] == "nuttcp") ? "-u -l64 -R R" : "-u -l 64 -b R"
      if (UB[b] != "default") how = how ((P[i] == "nuttcp") ? " -wKB" : " -w " UB[b])
      printf "| %s | %s | %s | %s |\n", P[i], how, rate(m), rate(v(sec, P[i], P[i], 64, 23))
      if (P[i] == "netsonde") un = m + 0; else if (m + 0 > bestp) { bestp = m + 0; bestpn = P[i] }
    }
    print ""
    if (bestp > 0) RU = RU sprintf("%sUDP 64 B, buffers %s: netsonde --io batch %s pkt/s / fastest peer (%s) %s pkt/s, both with loss < 1%% = %.1fx (target >= 2x: %s)",
      (RU == "") ? "" : "\n- ", UB[b], rate(un), bestpn, rate(bestp), un / bestp, (un / bestp >= 2) ? "met" : "NOT met")
  }
  if (anysec["rr"]) {
    print "### tcp-rr on loopback, server core 1, client core 0 (medians; round-trip latency)\n"
    print "| tool | how | size | p50 us | p99 us | transactions/s |"
    print "|---|---|---:|---:|---:|---:|"
    split("netsonde busypoll 1;netsonde busypoll 14;netsonde copy 1;netsonde copy 14;sockperf sockperf 14;sockperf sockperf-poll 14", R, ";")
    for (i = 1; i <= 6; i++) { split(R[i], XA, " ")
      if (!has("rr", XA[1], XA[2], XA[3])) continue
      how = (XA[2] == "sockperf") ? "ping-pong --tcp --full-rtt" : (XA[2] == "sockperf-poll") ? "same, --nonblocked --lls 50 both ends" : "--io " XA[2]
      printf "| %s | %s | %s | %s | %s | %s |\n", XA[1], how, XA[3], fmt(v("rr", XA[1], XA[2], XA[3], 20) / 1000, 1), fmt(v("rr", XA[1], XA[2], XA[3], 21) / 1000, 1), rate(v("rr", XA[1], XA[2], XA[3], 22))
      P50[XA[2] XA[3]] = v("rr", XA[1], XA[2], XA[3], 20) }
    print ""
    if (P50["sockperf14"] != "" && P50["busypoll1"] != "")
      RR = sprintf("tcp-rr p50: busypoll 1 B %.1f us, 14 B %.1f us; sockperf 14 B %.1f us -> %.2f (1 B) / %.2f (14 B) (target <= 0.5: %s); against sockperf polling (%.1f us): %.2f (14 B) (%s)",
        P50["busypoll1"] / 1000, P50["busypoll14"] / 1000, P50["sockperf14"] / 1000, P50["busypoll1"] / P50["sockperf14"], P50["busypoll14"] / P50["sockperf14"],
        (P50["busypoll14"] / P50["sockperf14"] <= 0.5 && P50["busypoll1"] / P50["sockperf14"] <= 0.5) ? "met" : "NOT met",
        P50["sockperf-poll14"] / 1000, P50["busypoll14"] / P50["sockperf-poll14"], (P50["busypoll14"] / P50["sockperf-poll14"] <= 0.5) ? "met" : "NOT met")
  }
  if (anysec["threads"]) {
    print "### tcp-stream -P 8, every flow of an end on one core: a thread per flow (copy) or one epoll thread (medians)\n"
    print "| strategy | size | Gbit/s | context switches per MB | client process us/KiB | server process us/KiB | Gbit/s vs copy |"
    print "|---|---:|---:|---:|---:|---:|---:|"
    split("1K 64K", TZ, " ")
    for (j = 1; j <= 2; j++) for (i = 1; i <= 2; i++) { st = (i == 1) ? "copy" : "epoll"
      if (!has("threads", "netsonde", st, TZ[j])) continue
      g0 = v("threads", "netsonde", "copy", TZ[j], 6); g = v("threads", "netsonde", st, TZ[j], 6)
      printf "| %s | %s | %s | %s | %s | %s | %s |\n", st, TZ[j], fmt(g / 1e9, 2), sig(v("threads", "netsonde", st, TZ[j], 15)),
        sig(v("threads", "netsonde", st, TZ[j], 12)), sig(v("threads", "netsonde", st, TZ[j], 13)), (g0 == "-" || g0 == 0) ? "-" : sprintf("%.2f", g / g0)
      if (st == "epoll" && g0 != "-" && g0 > 0) TH = TH sprintf("%stcp-stream %s Gbit/s: %.2fx", (TH == "") ? "" : ", ", TZ[j], g / g0)
    }
    print ""
  }
  if (anysec["threads-rr"]) {
    print "### tcp-rr -P 8, 1 B, every flow of an end on one core: a thread per flow (copy) or one epoll thread (medians)\n"
    print "| strategy | transactions/s | p50 us | p99 us | transactions/s vs copy |"
    print "|---|---:|---:|---:|---:|"
    t0 = v("threads-rr", "netsonde", "copy", "1", 22)
    for (i = 1; i <= 2; i++) { st = (i == 1) ? "copy" : "epoll"
      if (!has("threads-rr", "netsonde", st, "1")) continue
      t = v("threads-rr", "netsonde", st, "1", 22)
      printf "| %s | %s | %s | %s | %s |\n", st, rate(t), fmt(v("threads-rr", "netsonde", st, "1", 20) / 1000, 1), fmt(v("threads-rr", "netsonde", st, "1", 21) / 1000, 1),
        (t0 == "-" || t0 == 0) ? "-" : sprintf("%.2f", t / t0)
      if (st == "epoll" && t0 != "-" && t0 > 0) TH = TH sprintf("%stcp-rr transactions/s: %.2fx", (TH == "") ? "" : ", ", t / t0)
    }
    print ""
  }
  split("65535 1500", MT, " ")
  for (t = 1; t <= 2; t++) { sec = "veth" MT[t]; if (!anysec[sec]) continue
    print "### veth pair between namespaces, MTU " MT[t] ": sender strategy, receiver --rx-io copy (medians)\n"
    print "| strategy | size | Gbit/s | service demand us/KiB (system-wide) | sender process us/KiB | receiver process us/KiB | zc sends/completions/copied | vs copy (system-wide) | vs copy (sender process) |"
    print "|---|---:|---:|---:|---:|---:|---|---:|---:|"
    nz = split(veth_sizes, Z, " "); ns = split(veth_strats, S, " ")
    for (j = 1; j <= nz; j++) for (i = 1; i <= ns; i++) { if (!has(sec, "netsonde", S[i], Z[j])) continue
      c0 = v(sec, "netsonde", "copy", Z[j], 10); p0 = v(sec, "netsonde", "copy", Z[j], 12)
      c = v(sec, "netsonde", S[i], Z[j], 10); p = v(sec, "netsonde", S[i], Z[j], 12)
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", S[i], Z[j], fmt(v(sec, "netsonde", S[i], Z[j], 6) / 1e9, 2), sig(c), sig(p), sig(v(sec, "netsonde", S[i], Z[j], 13)),
        cell(sec, S[i], Z[j], "zc"), (c0 == "-" || c0 == 0) ? "-" : sprintf("%.2f", c / c0), (p0 == "-" || p0 == 0) ? "-" : sprintf("%.2f", p / p0)
      if (S[i] != "copy" && c0 != "-" && c + 0 < c0 + 0) { if (!(sec in VW) || c / c0 < VWR[sec]) { VW[sec] = S[i] " " Z[j]; VWR[sec] = c / c0 } }
    }
    print ""
    VE = VE sprintf("veth MTU %s: %s; ", MT[t], (sec in VW) ? sprintf("lowest sender service demand vs copy: %s at %.2fx copy (system-wide)", VW[sec], VWR[sec]) : "no copy-avoiding strategy below copy (system-wide)")
  }
  print "### Ratios\n"
  if (RT != "") print "- " RT
  if (RU != "") print "- " RU
  if (RR != "") print "- " RR
  if (VE != "") print "- " VE
  if (TH != "") print "- 8 flows per core, epoll (one thread) / copy (8 threads): " TH
  for (sec in AUTO) print "- auto / best fixed (/ best reading), matrix medians, " sec "-stream:" AUTO[sec] " (target >= 0.95 at every size: " (AUTOFAIL[sec] ? "NOT met" : "met") ")"
  for (sec in PAIRS) print "- auto / best fixed (/ best reading), paired runs, " sec ":" PAIRS[sec] " (target >= 0.95 at every size: " (PAIRFAIL[sec] ? "NOT met" : "met") ")"
}' "$WORK/medians.tsv" "$WORK/pairs-res.tsv"
echo
[[ -n $SECTIONS ]] && echo "_Whole run: $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s._"
} | tee "$WORK/report.md"
((KEEP)) && echo "raw results and report in $WORK" >&2
exit 0
