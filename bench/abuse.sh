#!/usr/bin/env bash
# abuse.sh — what hostile peers and long use do to `netsonde server` (a benchmark,
# not a test: it reports figures, it asserts nothing).
#
# Sections (SECTIONS, default all of them):
#   killed      200 clients, each SIGKILLed at a random moment of its test
#   abandoned   3,000 sessions that send hello + setup and close (8 at a time)
#   concurrent  64 clients at once against one server (one test at a time)
#   amplify     the memory-amplification setup: tcp-rr, 64 MiB request and
#               response, -P 64 (and -P 8), as a raw client sends it
#   soak        back-to-back short tests for SOAK seconds (default 3600): tcp-rr,
#               udp-rr, tcp-crr, paced tcp-stream and udp-stream in turn
# For each: the server's peak RSS (VmHWM), its threads and descriptors before,
# at peak and after, and the outcomes its session log counted. Everything runs on
# loopback; every process it starts is ended by its PID.
#
# Run:  bash bench/abuse.sh            (about 1 h 10 min with the soak)
#       SECTIONS="killed abandoned concurrent amplify" bash bench/abuse.sh
# Environment: NETSONDE=path (else target/release/netsonde is built), PORT=25400,
#              SOAK=3600 (seconds), SERVER_ARGS="" (extra server flags).
set -euo pipefail

SECTIONS=${SECTIONS:-"killed abandoned concurrent amplify soak"}
PORT=${PORT:-25400}
SOAK=${SOAK:-3600}
SERVER_ARGS=${SERVER_ARGS:-}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z ${NETSONDE:-} ]]; then
  (cd "$ROOT" && cargo build --release -p netsonde >&2)
  NETSONDE=$ROOT/target/release/netsonde
fi
OUT=$(mktemp -d /tmp/netsonde-abuse.XXXXXX)
echo "# netsonde server under abuse ($(date -u +%FT%TZ), $(nproc) cores, $(uname -r))"
echo "binary: $NETSONDE; logs in $OUT"

SERVER_PID=
start_server() {
  # shellcheck disable=SC2086
  "$NETSONDE" server --bind 127.0.0.1 --port "$PORT" $SERVER_ARGS 2>"$OUT/server-$1.log" &
  SERVER_PID=$!
  for _ in $(seq 50); do
    grep -q listening "$OUT/server-$1.log" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server did not start" >&2
  exit 1
}
stop_server() {
  [[ -n $SERVER_PID ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}
trap stop_server EXIT
fds() { ls "/proc/$SERVER_PID/fd" 2>/dev/null | wc -l; }
threads() { ls "/proc/$SERVER_PID/task" 2>/dev/null | wc -l; }
rss_peak() { awk '/VmHWM/ {print $2}' "/proc/$SERVER_PID/status"; }
rss_now() { awk '/VmRSS/ {print $2}' "/proc/$SERVER_PID/status"; }
outcomes() {
  grep -o 'outcome=[a-z]*' "$OUT/server-$1.log" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' |
    sed 's/outcome=//g; s/, $//'
}
# Samples threads and fds every 50 ms into $OUT/$1.samples until stopped.
sampler_start() {
  ( while kill -0 "$SERVER_PID" 2>/dev/null; do echo "$(threads) $(fds)"; sleep 0.05; done ) \
    >"$OUT/$1.samples" &
  SAMPLER=$!
}
sampler_stop() { kill "$SAMPLER" 2>/dev/null || true; wait "$SAMPLER" 2>/dev/null || true; }
peak() { awk 'BEGIN {t = 0; f = 0} {if ($1 > t) t = $1; if ($2 > f) f = $2} END {print t, f}' "$OUT/$1.samples"; }
# Seconds until the server is back at (or below) its idle counts, at most 10.
back_to_idle() {
  local t0 idle_t=$1 idle_f=$2
  t0=$(date +%s.%N)
  for _ in $(seq 200); do
    if (($(threads) <= idle_t && $(fds) <= idle_f)); then
      echo "$(date +%s.%N) - $t0" | bc -l | xargs printf '%.2f'
      return
    fi
    sleep 0.05
  done
  echo ">10"
}
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }
header() {
  echo
  echo "| section | what | peak RSS (MiB) | threads idle/peak/after | fds idle/peak/after | outcomes (server log) |"
  echo "|---|---|---:|---|---|---|"
}

# A raw control client in Python: hello and setup frames as a real client sends
# them (the setup's JSON taken from a real session through `--json`'s spec).
RAW=$OUT/raw.py
cat >"$RAW" <<'PY'
import json, socket, struct, sys, threading
port, mode, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
spec = json.load(open(sys.argv[4]))
HELLO = struct.pack(">IB", 19, 1) + b"NETSONDE" + struct.pack(">HQ", 2, 3)
def frame(obj):
    body = json.dumps(obj).encode()
    return struct.pack(">IB", len(body) + 1, 2) + body
if mode == "amplify":
    spec.update(test="tcp-rr", request_size=64 << 20, response_size=64 << 20)
answers = {}
lock = threading.Lock()
def one(i):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    try:
        s.sendall(HELLO)
        s.recv(64)
        sp = dict(spec)
        if mode == "amplify":
            sp["parallel"] = 64 if i % 2 == 0 else 8
        s.sendall(frame({"type": "setup", "spec": sp}))
        data = s.recv(65536)
        kind = "setup-ack" if b'"setup-ack"' in data else (
            "busy" if b'"busy"' in data else ("bad-spec" if b'"bad-spec"' in data else "other"))
    except OSError as e:
        kind = "refused:" + type(e).__name__
    finally:
        s.close()
    with lock:
        answers[kind] = answers.get(kind, 0) + 1
def worker(k):
    for i in range(k, count, 8):
        one(i)
ts = [threading.Thread(target=worker, args=(k,)) for k in range(min(8, count))]
[t.start() for t in ts]
[t.join() for t in ts]
print(", ".join(f"{k} {v}" for k, v in sorted(answers.items())))
PY
"$NETSONDE" client -T tcp-stream -t 0.1 --json | python3 -c 'import json,sys; json.dump(json.load(sys.stdin)["spec"], sys.stdout)' >"$OUT/spec.json"

header
for section in $SECTIONS; do
  start_server "$section"
  sleep 0.3
  idle_t=$(threads); idle_f=$(fds)
  sampler_start "$section"
  what=
  case $section in
    killed)
      pids=()
      for i in $(seq 200); do
        tests=(tcp-stream tcp-rr udp-stream tcp-crr udp-rr)
        "$NETSONDE" client 127.0.0.1 --port "$PORT" -T "${tests[$((i % 5))]}" -t 1 >/dev/null 2>&1 &
        pid=$!
        sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
        kill -9 "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
      done
      what="200 clients SIGKILLed 0-0.4 s into a 1 s test"
      ;;
    abandoned)
      ans=$(python3 "$RAW" "$PORT" abandon 3000 "$OUT/spec.json")
      what="3,000 hello + setup + close, 8 at a time: $ans"
      ;;
    concurrent)
      pids=()
      for i in $(seq 64); do
        "$NETSONDE" client 127.0.0.1 --port "$PORT" -T tcp-rr -t 1 >"$OUT/c$i.out" 2>&1 &
        pids+=($!)
      done
      ok=0; busy=0; capped=0; other=0
      for i in "${!pids[@]}"; do
        f=$OUT/c$((i + 1)).out
        if wait "${pids[$i]}"; then ok=$((ok + 1))
        elif grep -q "busy running" "$f"; then busy=$((busy + 1))
        elif grep -q "too many connections" "$f"; then capped=$((capped + 1))
        else other=$((other + 1)); fi
      done
      what="64 clients at once: $ok ran, $busy told busy, $capped over the per-address cap, $other other"
      ;;
    amplify)
      ans=$(python3 "$RAW" "$PORT" amplify 64 "$OUT/spec.json")
      what="64 setups of tcp-rr 64 MiB x 64 MiB, -P 64 and -P 8: $ans"
      ;;
    soak)
      end=$(($(date +%s) + SOAK)); n=0; bad=0; : >"$OUT/soak.trace"
      cycle=("-T tcp-rr" "-T udp-rr" "-T tcp-crr" "-T tcp-stream -b 1G" "-T udp-stream -b 100M")
      while (($(date +%s) < end)); do
        # shellcheck disable=SC2086
        if ! "$NETSONDE" client 127.0.0.1 --port "$PORT" ${cycle[$((n % 5))]} -t 0.2 >/dev/null 2>>"$OUT/soak.err"; then
          bad=$((bad + 1))
        fi
        n=$((n + 1))
        ((n % 100 == 0)) && echo "$n $(rss_now) $(threads) $(fds)" >>"$OUT/soak.trace"
      done
      first=$(head -1 "$OUT/soak.trace"); last=$(tail -1 "$OUT/soak.trace")
      what="$n back-to-back 0.2 s tests in ${SOAK} s, $bad failed; RSS (KiB)/threads/fds after 100 tests: ${first#* }, at the end: ${last#* }"
      ;;
  esac
  sampler_stop
  after=$(back_to_idle "$idle_t" "$idle_f")
  read -r peak_t peak_f < <(peak "$section")
  row "$section" "$what" "$(($(rss_peak) / 1024))" "$idle_t / $peak_t / $(threads) (idle after ${after} s)" \
    "$idle_f / $peak_f / $(fds)" "$(outcomes "$section")"
  stop_server
done
