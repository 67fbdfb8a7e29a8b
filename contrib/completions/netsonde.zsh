#compdef netsonde

autoload -U is-at-least

_netsonde() {
    typeset -A opt_args
    typeset -a _arguments_options
    local ret=1

    if is-at-least 5.2; then
        _arguments_options=(-s -S -C)
    else
        _arguments_options=(-s -C)
    fi

    local context curcontext="$curcontext" state line
    _arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_netsonde_commands" \
"*::: :->netsonde" \
&& ret=0
    case $state in
    (netsonde)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-command-$line[1]:"
        case $line[1] in
            (server)
_arguments "${_arguments_options[@]}" : \
'-p+[Control port]:PORT:_default' \
'--port=[Control port]:PORT:_default' \
'-B+[Address to listen on\: \`\:\:\` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only]:BIND:_default' \
'--bind=[Address to listen on\: \`\:\:\` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only]:BIND:_default' \
'--auth-key=[Require clients to prove they hold this key (made by \`netsonde keygen\`); the whole session is then integrity-protected. The file must be mode 600]:FILE:_files' \
'--metrics=[Serve OpenMetrics on \`http\://ADDR/metrics\` for Prometheus\: sessions by outcome, tests running, the budget held, and, for an agent, the last result of each job it ran (goodput, latency, loss, CPU per KiB, verdict)]:ADDR:_default' \
'--quic-perf=[Also answer any QUIC perf client (draft-banks-quic-performance\: quinn'\''s perf, msquic'\''s secnetperf, picoquic'\''s quicperf) on this UDP port of the listening address\: no authentication (not with --auth-key), at most 16 connections, each answer at most --max-duration]:PORT:_default' \
'--log-format=[Session log format on stderr. With json, an iperf3 client asking for --get-server-output gets it as JSON too, as from iperf3 -s -J (else as text)]:LOG_FORMAT:((text\:"key=value pairs"
json\:"One JSON object per line"))' \
'--max-duration=[Longest test (warm-up plus time) a client may ask for]:MAX_DURATION:_default' \
'--max-parallel=[Most parallel streams per direction]:MAX_PARALLEL:_default' \
'--max-size=[Largest message, request, response or window]:MAX_SIZE:_default' \
'--max-rate=[Highest pacing rate per stream]:MAX_RATE:_default' \
'--max-tests=[Tests (sessions) running at once, netsonde'\''s and iperf3 clients'\'' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other'\''s figures]:MAX_TESTS:_default' \
'--max-sessions=[Tests (sessions) running at once, netsonde'\''s and iperf3 clients'\'' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other'\''s figures]:MAX_TESTS:_default' \
'--max-connections=[Control connections at once]:MAX_CONNECTIONS:_default' \
'--max-per-address=[Control connections at once from one address]:MAX_PER_ADDRESS:_default' \
'--max-session-memory=[Buffer memory one test may use (message sizes x flows x buffers, checked at setup) \[default\: half of what this process may use, at most 1 GiB\]]:MAX_SESSION_MEMORY:_default' \
'--max-memory=[Buffer memory all running tests may use together \[default\: as --max-session-memory, times --max-tests, within half of what this process may use\]]:MAX_MEMORY:_default' \
'--phase-timeout=[Deadline of every protocol phase (hello, authentication, setup, data connections, done) \[default\: 5 s for hello and done, 10 s for setup and data connections\]]:PHASE_TIMEOUT:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--no-store[Do not store iperf3 clients'\'' sessions. By default each is stored as a run of one point (no netsonde client is there to store it)\: this end'\''s CPU and TCP_INFO, and what the iperf3 client reported of its side]' \
'--iperf3-fast-receiver[Serve iperf3 clients with netsonde'\''s own receiver (1 MiB reads, woken once about 1 ms of data is queued). By default an iperf3 client'\''s streams are read as iperf3'\''s server reads them (one -l per read, woken per segment), so swapping \`iperf3 -s\` for \`netsonde server\` keeps its figures]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(agent)
_arguments "${_arguments_options[@]}" : \
'-p+[Control port]:PORT:_default' \
'--port=[Control port]:PORT:_default' \
'-B+[Address to listen on\: \`\:\:\` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only]:BIND:_default' \
'--bind=[Address to listen on\: \`\:\:\` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only]:BIND:_default' \
'--auth-key=[Require clients to prove they hold this key (made by \`netsonde keygen\`); the whole session is then integrity-protected. The file must be mode 600]:FILE:_files' \
'--metrics=[Serve OpenMetrics on \`http\://ADDR/metrics\` for Prometheus\: sessions by outcome, tests running, the budget held, and, for an agent, the last result of each job it ran (goodput, latency, loss, CPU per KiB, verdict)]:ADDR:_default' \
'--quic-perf=[Also answer any QUIC perf client (draft-banks-quic-performance\: quinn'\''s perf, msquic'\''s secnetperf, picoquic'\''s quicperf) on this UDP port of the listening address\: no authentication (not with --auth-key), at most 16 connections, each answer at most --max-duration]:PORT:_default' \
'--log-format=[Session log format on stderr. With json, an iperf3 client asking for --get-server-output gets it as JSON too, as from iperf3 -s -J (else as text)]:LOG_FORMAT:((text\:"key=value pairs"
json\:"One JSON object per line"))' \
'--max-duration=[Longest test (warm-up plus time) a client may ask for]:MAX_DURATION:_default' \
'--max-parallel=[Most parallel streams per direction]:MAX_PARALLEL:_default' \
'--max-size=[Largest message, request, response or window]:MAX_SIZE:_default' \
'--max-rate=[Highest pacing rate per stream]:MAX_RATE:_default' \
'--max-tests=[Tests (sessions) running at once, netsonde'\''s and iperf3 clients'\'' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other'\''s figures]:MAX_TESTS:_default' \
'--max-sessions=[Tests (sessions) running at once, netsonde'\''s and iperf3 clients'\'' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other'\''s figures]:MAX_TESTS:_default' \
'--max-connections=[Control connections at once]:MAX_CONNECTIONS:_default' \
'--max-per-address=[Control connections at once from one address]:MAX_PER_ADDRESS:_default' \
'--max-session-memory=[Buffer memory one test may use (message sizes x flows x buffers, checked at setup) \[default\: half of what this process may use, at most 1 GiB\]]:MAX_SESSION_MEMORY:_default' \
'--max-memory=[Buffer memory all running tests may use together \[default\: as --max-session-memory, times --max-tests, within half of what this process may use\]]:MAX_MEMORY:_default' \
'--phase-timeout=[Deadline of every protocol phase (hello, authentication, setup, data connections, done) \[default\: 5 s for hello and done, 10 s for setup and data connections\]]:PHASE_TIMEOUT:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--engine=[How jobs are measured\: \`real\`, or \`fake\` (a scripted report at once, no traffic; for testing controllers at scale)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--fake-scale=[The fake engine'\''s speed factor (tests\: 1e6 makes an agent whose reports no link could produce)]:FAKE_SCALE:_default' \
'*--allow-targets=[The targets this agent may test\: addresses and networks, comma-separated (10.0.0.0/8,192.0.2.7,fd00\:\:/8). A job for any other address is refused before a packet leaves. Without it, any target (said at start)]:LIST:_default' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--no-store[Do not store iperf3 clients'\'' sessions. By default each is stored as a run of one point (no netsonde client is there to store it)\: this end'\''s CPU and TCP_INFO, and what the iperf3 client reported of its side]' \
'--iperf3-fast-receiver[Serve iperf3 clients with netsonde'\''s own receiver (1 MiB reads, woken once about 1 ms of data is queued). By default an iperf3 client'\''s streams are read as iperf3'\''s server reads them (one -l per read, woken per segment), so swapping \`iperf3 -s\` for \`netsonde server\` keeps its figures]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
'*--agent=[Agents, \`NAME=HOST\[\:PORT\]\` (repeat the flag or separate with commas); the name is the host when none is given]:NAME=HOST[:PORT]:_default' \
'--agents-file=[A file of agents, one \`NAME=HOST\[\:PORT\]\` per line (# starts a comment)]:FILE:_files' \
'--agents-dns=[Every address this name resolves to is an agent, named by its address\: a Kubernetes headless Service in front of the agents'\'' DaemonSet (\`netsonde-agents.netsonde.svc\:5300\`; see deploy/kubernetes)]:NAME[:PORT]:_default' \
'--agents-k8s=[The ready endpoints of this Kubernetes Service are the agents, each named by its node\: listed through the API from inside the cluster (the controller'\''s Job, whose service account may list endpointslices; see deploy/kubernetes). The namespace is the pod'\''s own and the port the endpoints'\'' \`control\` port when not given]:[NAMESPACE/]SERVICE[:PORT]:_default' \
'--pattern=[Which ordered pairs run\: all-to-all, ring, star\:NAME (every other agent to NAME) or pairs\:SRC-DST,SRC-DST]:PATTERN:' \
'--concurrency=[Run up to N pairs at once, never two that share an agent, each round started at one moment (the hosts'\'' clocks synchronised, NTP or PTP); the start skew each round measured is stored with its tests. 1\: one pair at a time]:CONCURRENCY:_default' \
'--metrics=[Serve OpenMetrics on \`http\://ADDR/metrics\` while the mesh runs\: the last result of each pair and test (goodput, latency, loss, CPU per KiB, verdict), as an agent'\''s \`--metrics\` serves its own jobs'\'']:ADDR:_default' \
'-p+[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'--port=[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'*--tests=[Tests\: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones\: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr]:TESTS:(tcp-stream udp-stream tcp-rr udp-rr tcp-crr tls-stream quic-stream tls-crr tls-rr quic-rr quic-crr)' \
'--directions=[Directions\: out,in,bidir]:DIRECTIONS:' \
'--sizes=[Message sizes\: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K]:SIZES:' \
'--windows=[Windows\: default,64K,256K]:WINDOWS:' \
'--parallel=[Parallel streams\: 1,2,4]:PARALLEL:' \
'*--io=[I/O strategies to compare\: copy,batch,zerocopy,uring,auto (see \`netsonde caps\`)]:IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--pacing=[Pacing per stream, an axis on any path\: 100M,1G,0 (0\: unpaced; stream tests)]:PACING:' \
'--repeat=[Repetitions per point]:REPEAT:_default' \
'-t+[Measured time per repetition]:TIME:' \
'--time=[Measured time per repetition]:TIME:' \
'--warmup=[Warm-up per repetition]:WARMUP:' \
'--seed=[Seed of the randomised run order]:SEED:_default' \
'--line-rate=[Line rate for efficiency figures\: 10G]:LINE_RATE:' \
'--label=[A label for \`runs list\`]:LABEL:' \
'--mtus=[Lab link axis (inside \`netsonde lab run\`)\: MTUs, 1500,9000,65535]:MTUS:' \
'--rates=[Lab link axis\: rates, 100M,1G (0 is unlimited)]:RATES:' \
'--delays=[Lab link axis\: one-way delays each way, 0,10ms,100ms]:DELAYS:' \
'--losses=[Lab link axis\: random losses each way, 0,1% (Gilbert-Elliott in a file)]:LOSSES:' \
'--queues=[Lab link axis\: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)]:QUEUES:' \
'--offloads=[Lab link axis\: segmentation and receive offloads (TSO/GSO and GRO on the veth link)\: off,on]:off,on:_default' \
'(--tests --directions --sizes --windows --parallel --repeat -t --time --warmup --seed --line-rate --mtus --rates --delays --losses --queues)--resume=[Finish an interrupted run (number or \`latest\`)]:RUN:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--out=[Report folder (default netsonde-report-RUN)]:DIR:_files' \
'--engine=[Measurement engine\: \`real\`, or \`fake\` (scripted, deterministic; for tests)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--auth-key=[Authenticate with this pre-shared key]:FILE:_files' \
'--fake-delay-ms=[Delay per fake repetition in milliseconds (tests)]:FAKE_DELAY_MS:_default' \
'--fake-scale=[Fake engine speed factor (tests\: 0.8 is a 20% regression)]:FAKE_SCALE:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--yes[Run a mesh whose measuring time is estimated at over an hour]' \
'--samples[Each point over time\: every TCP sender'\''s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow'\''s goodput, RTT, cwnd and retransmissions over time]' \
'--no-report[Do not write a report]' \
'(--json)-q[End with only where the report and the run are, not the summary of every point]' \
'(--json)--quiet[End with only where the report and the run are, not the summary of every point]' \
'--json[End with the summary as one JSON document on standard output (the progress and the report'\''s path go to standard error)]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::host -- Server host. Without it, an embedded server runs on loopback:_default' \
&& ret=0
;;
(monitor)
_arguments "${_arguments_options[@]}" : \
'--every=[Interval between rounds (slots)\: each round starts a random share of --jitter into its slot; one that runs past the next slot'\''s start makes that slot skipped, said and counted, never stacked]:EVERY:_default' \
'--jitter=[The largest random delay of a round into its slot, as a share of the interval (at most 50%), so monitors started together do not stay in step]:JITTER:_default' \
'--window=[Past rounds that make each pair'\''s normal (its baseline)\: at least 5, the fewest a normal'\''s spread is taken from]:WINDOW:_default' \
'--phase=[Begin each slot when the wall clock is this far into an interval (\`--every 15m --phase 7m30s\`\: at \:07\:30, \:22\:30, ...), whenever the monitor starts\: monitors given different phases take turns, never measuring through the same hosts at once. Default\: slots count from the start]:PHASE:_default' \
'--rounds=[Stop after this many rounds (default\: until SIGTERM or SIGINT, which end the round in progress with what it measured stored)]:ROUNDS:_default' \
'*--agent=[Agents, \`NAME=HOST\[\:PORT\]\` (repeat the flag or separate with commas); the name is the host when none is given]:NAME=HOST[:PORT]:_default' \
'--agents-file=[A file of agents, one \`NAME=HOST\[\:PORT\]\` per line (# starts a comment)]:FILE:_files' \
'--agents-dns=[Every address this name resolves to is an agent, named by its address\: a Kubernetes headless Service in front of the agents'\'' DaemonSet (\`netsonde-agents.netsonde.svc\:5300\`; see deploy/kubernetes)]:NAME[:PORT]:_default' \
'--agents-k8s=[The ready endpoints of this Kubernetes Service are the agents, each named by its node\: listed through the API from inside the cluster (the controller'\''s Job, whose service account may list endpointslices; see deploy/kubernetes). The namespace is the pod'\''s own and the port the endpoints'\'' \`control\` port when not given]:[NAMESPACE/]SERVICE[:PORT]:_default' \
'--pattern=[Which ordered pairs run\: all-to-all, ring, star\:NAME (every other agent to NAME) or pairs\:SRC-DST,SRC-DST]:PATTERN:' \
'--concurrency=[Run up to N pairs at once, never two that share an agent, each round started at one moment (the hosts'\'' clocks synchronised, NTP or PTP); the start skew each round measured is stored with its tests. 1\: one pair at a time]:CONCURRENCY:_default' \
'--metrics=[Serve OpenMetrics on \`http\://ADDR/metrics\` while the mesh runs\: the last result of each pair and test (goodput, latency, loss, CPU per KiB, verdict), as an agent'\''s \`--metrics\` serves its own jobs'\'']:ADDR:_default' \
'-p+[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'--port=[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'*--tests=[Tests\: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones\: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr]:TESTS:(tcp-stream udp-stream tcp-rr udp-rr tcp-crr tls-stream quic-stream tls-crr tls-rr quic-rr quic-crr)' \
'--directions=[Directions\: out,in,bidir]:DIRECTIONS:' \
'--sizes=[Message sizes\: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K]:SIZES:' \
'--windows=[Windows\: default,64K,256K]:WINDOWS:' \
'--parallel=[Parallel streams\: 1,2,4]:PARALLEL:' \
'*--io=[I/O strategies to compare\: copy,batch,zerocopy,uring,auto (see \`netsonde caps\`)]:IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--pacing=[Pacing per stream, an axis on any path\: 100M,1G,0 (0\: unpaced; stream tests)]:PACING:' \
'--repeat=[Repetitions per point]:REPEAT:_default' \
'-t+[Measured time per repetition]:TIME:' \
'--time=[Measured time per repetition]:TIME:' \
'--warmup=[Warm-up per repetition]:WARMUP:' \
'--seed=[Seed of the randomised run order]:SEED:_default' \
'--line-rate=[Line rate for efficiency figures\: 10G]:LINE_RATE:' \
'--label=[A label for \`runs list\`]:LABEL:' \
'--mtus=[Lab link axis (inside \`netsonde lab run\`)\: MTUs, 1500,9000,65535]:MTUS:' \
'--rates=[Lab link axis\: rates, 100M,1G (0 is unlimited)]:RATES:' \
'--delays=[Lab link axis\: one-way delays each way, 0,10ms,100ms]:DELAYS:' \
'--losses=[Lab link axis\: random losses each way, 0,1% (Gilbert-Elliott in a file)]:LOSSES:' \
'--queues=[Lab link axis\: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)]:QUEUES:' \
'--offloads=[Lab link axis\: segmentation and receive offloads (TSO/GSO and GRO on the veth link)\: off,on]:off,on:_default' \
'(--tests --directions --sizes --windows --parallel --repeat -t --time --warmup --seed --line-rate --mtus --rates --delays --losses --queues)--resume=[Finish an interrupted run (number or \`latest\`)]:RUN:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--out=[Report folder (default netsonde-report-RUN)]:DIR:_files' \
'--engine=[Measurement engine\: \`real\`, or \`fake\` (scripted, deterministic; for tests)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--auth-key=[Authenticate with this pre-shared key]:FILE:_files' \
'--fake-delay-ms=[Delay per fake repetition in milliseconds (tests)]:FAKE_DELAY_MS:_default' \
'--fake-scale=[Fake engine speed factor (tests\: 0.8 is a 20% regression)]:FAKE_SCALE:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--skip-overrun[Start even when a round is estimated to take longer than --every\: the slots a round runs past are skipped (said and counted). Without it such an interval is refused, with the estimate]' \
'--yes[Run a mesh whose measuring time is estimated at over an hour]' \
'--samples[Each point over time\: every TCP sender'\''s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow'\''s goodput, RTT, cwnd and retransmissions over time]' \
'--no-report[Do not write a report]' \
'(--json)-q[End with only where the report and the run are, not the summary of every point]' \
'(--json)--quiet[End with only where the report and the run are, not the summary of every point]' \
'--json[End with the summary as one JSON document on standard output (the progress and the report'\''s path go to standard error)]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::host -- Server host. Without it, an embedded server runs on loopback:_default' \
&& ret=0
;;
(dashboard)
_arguments "${_arguments_options[@]}" : \
'--listen=[Where to serve it. 127.0.0.1 by default\: the dashboard only reads, but it shows every stored run to whoever reaches it; put it behind a reverse proxy with authentication to share it]:LISTEN:_default' \
'--window=[Past rounds that make each pair'\''s normal, as the monitor'\''s --window]:WINDOW:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(client)
_arguments "${_arguments_options[@]}" : \
'-p+[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'--port=[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests; this end is measured as always, the server'\''s side is what iperf3 reports)]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'-T+[Test\: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, tls-stream, tls-rr, tls-crr, quic-stream, quic-rr, quic-crr. (Unlike iperf3, whose -T is a title.)]:TEST:(tcp-stream udp-stream tcp-rr udp-rr tcp-crr tls-stream quic-stream tls-crr tls-rr quic-rr quic-crr)' \
'--test=[Test\: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, tls-stream, tls-rr, tls-crr, quic-stream, quic-rr, quic-crr. (Unlike iperf3, whose -T is a title.)]:TEST:(tcp-stream udp-stream tcp-rr udp-rr tcp-crr tls-stream quic-stream tls-crr tls-rr quic-rr quic-crr)' \
'-l+[Message size (stream tests)\: 128K = 128 KiB; 64kB = 64000 B. Default 128 KiB for TCP, 1472 B for UDP]:SIZE:_default' \
'--size=[Message size (stream tests)\: 128K = 128 KiB; 64kB = 64000 B. Default 128 KiB for TCP, 1472 B for UDP]:SIZE:_default' \
'--request-size=[Request size (RR, CRR)]:REQUEST_SIZE:_default' \
'--response-size=[Response size (RR, CRR)]:RESPONSE_SIZE:_default' \
'-w+[Socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends; the granted value is reported. A list gives each flow its own, cycled over the flows\: 128K,32K]:WINDOW:_default' \
'--window=[Socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends; the granted value is reported. A list gives each flow its own, cycled over the flows\: 128K,32K]:WINDOW:_default' \
'--dscp=[DSCP (0-63) of each flow'\''s packets, cycled over the flows\: 46 (EF) for all, or 46,0,10 for one each]:DSCP:_default' \
'--probe-rate=[Probes of each kind per second (1-100)]:PROBE_RATE:_default' \
'--probe-idle=[Probing alone before and after the load]:PROBE_IDLE:_default' \
'--plot=[Write the load-latency figure (latency over time with the phases shaded, each flow'\''s goodput, the distribution idle against loaded) to this SVG file]:FILE.svg:_files' \
'--report=[Write the test'\''s HTML report to DIR/index.html\: each flow'\''s goodput, round trip, congestion window and retransmissions over time (every TCP sender'\''s TCP_INFO read each -i, 100 ms without it), the probes'\'' latency under load, and the text report]:DIR:_files' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--rcv-window=[Receive buffer of the receiving end of each stream only (the sender keeps -w or the kernel'\''s default)\: a receiver window below the sender'\''s]:RCV_WINDOW:_default' \
'-M+[TCP maximum segment size]:MSS:_default' \
'--mss=[TCP maximum segment size]:MSS:_default' \
'-C+[TCP congestion control on both ends (bbr, cubic, reno, ...)]:CONGESTION:_default' \
'--congestion=[TCP congestion control on both ends (bbr, cubic, reno, ...)]:CONGESTION:_default' \
'--tls-suite=[tls-stream\: the cipher suite by its IANA name, which also picks TLS 1.3 or 1.2 (TLS13_AES_128_GCM_SHA256, TLS13_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, ...); default\: TLS 1.3'\''s first]:SUITE:(TLS13_AES_256_GCM_SHA384 TLS13_AES_128_GCM_SHA256 TLS13_CHACHA20_POLY1305_SHA256 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256)' \
'--quic-streams=[quic-stream\: streams on each flow'\''s one QUIC connection, 1 to 64, each a perf request of its own sharing the connection'\''s flow control and congestion window (-P opens more connections) \[default\: 1\]]:N:_default' \
'-b+[Pacing rate per stream, in bit/s\: 100M, 10G (decimal); 0 is unpaced. UDP default 1G]:RATE:_default' \
'--rate=[Pacing rate per stream, in bit/s\: 100M, 10G (decimal); 0 is unpaced. UDP default 1G]:RATE:_default' \
'-P+[Parallel streams per direction, each on its own thread \[default\: 1\]]:PARALLEL:_default' \
'--parallel=[Parallel streams per direction, each on its own thread \[default\: 1\]]:PARALLEL:_default' \
'-t+[Measured duration\: 10 (seconds), 500ms, 2m \[default\: 10 s; with -n or -k, a cap of 300 s less the warm-up\]]:TIME:_default' \
'--time=[Measured duration\: 10 (seconds), 500ms, 2m \[default\: 10 s; with -n or -k, a cap of 300 s less the warm-up\]]:TIME:_default' \
'(-k --blockcount)-n+[End by volume, as iperf3'\''s -n\: the bytes each direction sends in the measured interval (10G, 500M; K, M, G are binary as in iperf3), shared by its streams. The test ends when they are sent; -t caps it]:VOLUME:_default' \
'(-k --blockcount)--bytes=[End by volume, as iperf3'\''s -n\: the bytes each direction sends in the measured interval (10G, 500M; K, M, G are binary as in iperf3), shared by its streams. The test ends when they are sent; -t caps it]:VOLUME:_default' \
'-k+[End by volume in messages (iperf3'\''s -k)\: --bytes of this many -l writes]:BLOCKCOUNT:_default' \
'--blockcount=[End by volume in messages (iperf3'\''s -k)\: --bytes of this many -l writes]:BLOCKCOUNT:_default' \
'--rcv-timeout=[Fail the test when a receiving stream gets nothing for this long (iperf3'\''s --rcv-timeout, whose number is in ms\: give 120s or 500ms) \[default\: wait to the end\]]:RCV_TIMEOUT:_default' \
'--connect-timeout=[Deadline of the control connection'\''s connect (iperf3'\''s --connect-timeout, in ms there\: give 3s or 500ms) \[default\: 5 s\]]:CONNECT_TIMEOUT:_default' \
'-B+[Local address of every connection (iperf3'\''s -B on a client)]:BIND:_default' \
'--bind=[Local address of every connection (iperf3'\''s -B on a client)]:BIND:_default' \
'--cport=[Local port of the data connections (iperf3'\''s --cport)\: flow k uses PORT+k \[default\: any\]]:PORT:_default' \
'-O+[Warm-up before the measured interval, excluded from results (iperf3'\''s -O/--omit) \[default\: 0\]]:WARMUP:_default' \
'--warmup=[Warm-up before the measured interval, excluded from results (iperf3'\''s -O/--omit) \[default\: 0\]]:WARMUP:_default' \
'--omit=[Warm-up before the measured interval, excluded from results (iperf3'\''s -O/--omit) \[default\: 0\]]:WARMUP:_default' \
'-i+[Print a line per interval]:INTERVAL:_default' \
'--interval=[Print a line per interval]:INTERVAL:_default' \
'-A+[Pin client flow threads to these cores, round-robin\: 0,1]:AFFINITY:_default' \
'--affinity=[Pin client flow threads to these cores, round-robin\: 0,1]:AFFINITY:_default' \
'--server-affinity=[Pin server flow threads to these cores, round-robin]:SERVER_AFFINITY:_default' \
'--line-rate=[The link'\''s line rate (10G), for the diagnosis\: the goodput'\''s ceiling after header overhead at the interface'\''s MTU. In the lab the link'\''s own rate is used when this is not given]:LINE_RATE:_default' \
'-f+[Rates in the text output'\''s tables and interval lines in this unit, as iperf3'\''s -f\: k, m, g, t for kbit/s to Tbit/s, K, M, G, T for KiB/s to TiB/s (the verdict'\''s sentences keep their own) \[default\: the unit that suits each rate\]]:UNIT:(k m g t K M G T)' \
'--format=[Rates in the text output'\''s tables and interval lines in this unit, as iperf3'\''s -f\: k, m, g, t for kbit/s to Tbit/s, K, M, G, T for KiB/s to TiB/s (the verdict'\''s sentences keep their own) \[default\: the unit that suits each rate\]]:UNIT:(k m g t K M G T)' \
'--title=[Begin every line of the text output with this and a colon (iperf3'\''s --title)]:TITLE:_default' \
'--auth-key=[Authenticate with this pre-shared key (the server must use the same)]:FILE:_files' \
'--io=[I/O strategy for both sending and receiving flows\: copy, epoll, batch, zerocopy, sendfile, splice, uring, busypoll, auto, and xdp for UDP receivers only (see \`netsonde caps\`)]:IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--tx-io=[I/O strategy of the sending flows (overrides --io)]:TX_IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--rx-io=[I/O strategy of the receiving flows (overrides --io)]:RX_IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--cpu-breakdown=[Sample the flow threads for the CPU breakdown (where each end'\''s CPU went\: copy, TCP/IP, ...)\: auto does for stream tests (under 2% of their goodput) and not for request/response tests, whose every wake-up the sampling slows (a fifth of tcp-rr'\''s rate in a VM); on and off force it]:WHEN:(auto on off)' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--iperf3-fast-receiver[With --peer iperf3\: receive with netsonde'\''s own receiver (reads of up to 1 MiB, woken once about 1 ms of data is queued) instead of as iperf3'\''s client reads (one -l per read, woken per segment, the session'\''s streams on one thread), which is the default so that swapping \`iperf3 -c\` for \`netsonde -c\` keeps its -R and --bidir figures]' \
'(-T --test)-u[UDP, as iperf3'\''s -u\: the same as --test udp-stream]' \
'(-T --test)--udp[UDP, as iperf3'\''s -u\: the same as --test udp-stream]' \
'(-6 --ipv6)-4[Only IPv4 addresses of HOST]' \
'(-6 --ipv6)--ipv4[Only IPv4 addresses of HOST]' \
'-6[Only IPv6 addresses of HOST (\`\[\:\:1\]\` or \`\:\:1\` work as HOST too)]' \
'--ipv6[Only IPv6 addresses of HOST (\`\[\:\:1\]\` or \`\:\:1\` work as HOST too)]' \
'--probe[Latency under load\: probes (a kept TCP connection, UDP datagrams, a new TCP connection each) measure round trips alone for --probe-idle, beside the load, and alone again after it; reports added latency, responsiveness (RPM), fairness and each flow over time. Stream tests]' \
'--no-store[Do not store this test in the results store (by default every test is stored as a run of one point, so \`runs\`, \`report\` and \`compare\` work on it)]' \
'(-T --test -u --udp -R --reverse)--rrul[Realtime response under load (flent'\''s RRUL)\: tcp-stream both ways with -P 4 (unless -P is given), --probe, 2 s warm-up (unless -O is given)]' \
'-N[Disable Nagle'\''s algorithm (always on for RR tests)]' \
'--nodelay[Disable Nagle'\''s algorithm (always on for RR tests)]' \
'--mptcp[Multipath TCP\: each stream'\''s (or request/response flow'\''s) connection is the kernel'\''s MPTCP, over the subflows its path manager opens (\`ip mptcp endpoint\`); each subflow'\''s path and share are reported]' \
'--no-gso[UDP with --io batch\: sendmmsg and recvmmsg of 64 without GSO/GRO, so every datagram crosses as a packet of its own (on loopback and veth a GSO super-datagram never does)]' \
'--tls-resume[tls-crr, quic-crr\: resume the flow'\''s earlier TLS sessions (tickets, session IDs) instead of a full handshake on every connection]' \
'(--bidir)-R[The server sends]' \
'(--bidir)--reverse[The server sends]' \
'--bidir[Both directions at once, on separate connections]' \
'(--jsonl)-J[One JSON document (see docs/JSON.md); iperf3'\''s -J]' \
'(--jsonl)--json[One JSON document (see docs/JSON.md); iperf3'\''s -J]' \
'--jsonl[JSON Lines\: interval records as they happen, then a summary record]' \
'(-J --json --jsonl)--json-stream[JSON lines as iperf3 3.17'\''s --json-stream writes them\: one object a line, \`{"event"\: "start" | "interval" | "end", "data"\: ...}\`]' \
'(--tx-io)-Z[Send with zero copy, as iperf3'\''s -Z\: the senders use sendfile (the same as --tx-io sendfile; --tx-io zerocopy is MSG_ZEROCOPY)]' \
'(--tx-io)--zerocopy[Send with zero copy, as iperf3'\''s -Z\: the senders use sendfile (the same as --tx-io sendfile; --tx-io zerocopy is MSG_ZEROCOPY)]' \
'--verify[Check every received byte against the pattern the sender writes]' \
'--no-cpu-breakdown[The same as --cpu-breakdown off]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::host -- Server host. Without it, an embedded server runs on loopback in this process. iperf3'\''s `-c HOST` works too\: `netsonde -c HOST` is `netsonde client HOST`:_default' \
&& ret=0
;;
(keygen)
_arguments "${_arguments_options[@]}" : \
'--out=[Where to write the key (created with mode 600; never overwritten)]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(caps)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(sweep)
_arguments "${_arguments_options[@]}" : \
'-p+[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'--port=[Server control port \[default\: 5300; 5201 with --peer iperf3\]]:PORT:_default' \
'*--tests=[Tests\: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones\: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr]:TESTS:(tcp-stream udp-stream tcp-rr udp-rr tcp-crr tls-stream quic-stream tls-crr tls-rr quic-rr quic-crr)' \
'--directions=[Directions\: out,in,bidir]:DIRECTIONS:' \
'--sizes=[Message sizes\: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K]:SIZES:' \
'--windows=[Windows\: default,64K,256K]:WINDOWS:' \
'--parallel=[Parallel streams\: 1,2,4]:PARALLEL:' \
'*--io=[I/O strategies to compare\: copy,batch,zerocopy,uring,auto (see \`netsonde caps\`)]:IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--pacing=[Pacing per stream, an axis on any path\: 100M,1G,0 (0\: unpaced; stream tests)]:PACING:' \
'--repeat=[Repetitions per point]:REPEAT:_default' \
'-t+[Measured time per repetition]:TIME:' \
'--time=[Measured time per repetition]:TIME:' \
'--warmup=[Warm-up per repetition]:WARMUP:' \
'--seed=[Seed of the randomised run order]:SEED:_default' \
'--line-rate=[Line rate for efficiency figures\: 10G]:LINE_RATE:' \
'--label=[A label for \`runs list\`]:LABEL:' \
'--mtus=[Lab link axis (inside \`netsonde lab run\`)\: MTUs, 1500,9000,65535]:MTUS:' \
'--rates=[Lab link axis\: rates, 100M,1G (0 is unlimited)]:RATES:' \
'--delays=[Lab link axis\: one-way delays each way, 0,10ms,100ms]:DELAYS:' \
'--losses=[Lab link axis\: random losses each way, 0,1% (Gilbert-Elliott in a file)]:LOSSES:' \
'--queues=[Lab link axis\: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)]:QUEUES:' \
'--offloads=[Lab link axis\: segmentation and receive offloads (TSO/GSO and GRO on the veth link)\: off,on]:off,on:_default' \
'(--tests --directions --sizes --windows --parallel --repeat -t --time --warmup --seed --line-rate --mtus --rates --delays --losses --queues)--resume=[Finish an interrupted run (number or \`latest\`)]:RUN:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--out=[Report folder (default netsonde-report-RUN)]:DIR:_files' \
'--engine=[Measurement engine\: \`real\`, or \`fake\` (scripted, deterministic; for tests)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--auth-key=[Authenticate with this pre-shared key]:FILE:_files' \
'--fake-delay-ms=[Delay per fake repetition in milliseconds (tests)]:FAKE_DELAY_MS:_default' \
'--fake-scale=[Fake engine speed factor (tests\: 0.8 is a 20% regression)]:FAKE_SCALE:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--samples[Each point over time\: every TCP sender'\''s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow'\''s goodput, RTT, cwnd and retransmissions over time]' \
'--no-report[Do not write a report]' \
'(--json)-q[End with only where the report and the run are, not the summary of every point]' \
'(--json)--quiet[End with only where the report and the run are, not the summary of every point]' \
'--json[End with the summary as one JSON document on standard output (the progress and the report'\''s path go to standard error)]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::host -- Server host. Without it, an embedded server runs on loopback:_default' \
&& ret=0
;;
(run)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--out=[Report folder (default netsonde-report-RUN)]:DIR:_files' \
'--engine=[Measurement engine\: \`real\`, or \`fake\` (scripted, deterministic; for tests)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--auth-key=[Authenticate with this pre-shared key]:FILE:_files' \
'--fake-delay-ms=[Delay per fake repetition in milliseconds (tests)]:FAKE_DELAY_MS:_default' \
'--fake-scale=[Fake engine speed factor (tests\: 0.8 is a 20% regression)]:FAKE_SCALE:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--no-report[Do not write a report]' \
'(--json)-q[End with only where the report and the run are, not the summary of every point]' \
'(--json)--quiet[End with only where the report and the run are, not the summary of every point]' \
'--json[End with the summary as one JSON document on standard output (the progress and the report'\''s path go to standard error)]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
':file -- The experiment file:_files' \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
'-p+[Server control port]:PORT:_default' \
'--port=[Server control port]:PORT:_default' \
'--test=[What to search\: \`udp\`, the highest rate of datagrams with no loss; or \`tcp\`, the highest paced rate of one TCP connection with no retransmission (messages sent one segment each, TCP_NODELAY)]:TEST:((udp\:"UDP datagrams\: loss is datagrams that never arrived"
tcp\:"One TCP connection\: loss is retransmitted segments"))' \
'*--frames=[Ethernet frame sizes in bytes (MAC header and FCS included, as RFC 2544 counts them); the UDP payload is the frame less 46 B, a TCP segment'\''s the frame less 70 B \[default\: 64,128,256,512,1024,1280,1518; for tcp from 128\]]:FRAMES:_default' \
'*--io=[I/O strategies to search, each on its own\: copy,batch,uring,xdp,... (both ends; a strategy that only receives, xdp, sends with copy)]:IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--tx-io=[One sender for every point, so the receivers of --io are compared behind it\: \`--tx-io batch --io copy,xdp\`]:TX_IO:(copy epoll batch zerocopy sendfile splice uring busypoll auto xdp)' \
'--trial=[Measured time of one trial]:TRIAL:_default' \
'--warmup=[Warm-up before each trial'\''s measured time (its traffic is not counted)]:WARMUP:_default' \
'-w+[Socket buffers of both ends (the kernel caps them at net.core.rmem_max and wmem_max)\: the tester'\''s own receive buffer should not be what loses the packets when its thread is late by a millisecond. \`default\` leaves the kernel'\''s (about 200 KB\: a third of a millisecond of 1518 B frames at 10 Gbit/s)]:WINDOW:_default' \
'--window=[Socket buffers of both ends (the kernel caps them at net.core.rmem_max and wmem_max)\: the tester'\''s own receive buffer should not be what loses the packets when its thread is late by a millisecond. \`default\` leaves the kernel'\''s (about 200 KB\: a third of a millisecond of 1518 B frames at 10 Gbit/s)]:WINDOW:_default' \
'--precision=[The bounds'\'' width, relative to the rate, at which a rate counts as found]:PRECISION:_default' \
'--pdr-loss=[PDR'\''s loss ratio\: the highest rate losing at most this share]:PDR_LOSS:_default' \
'--final-trials=[Trials at the NDR found that must lose nothing]:FINAL_TRIALS:_default' \
'--max-trials=[At most this many trials per frame size and strategy (and as many bursts with --back-to-back)]:MAX_TRIALS:_default' \
'--repeat=[Search each frame size and strategy this many times, one search after another\: one search'\''s rate moves between runs (on loopback by 10% and more), so \`compare\` judges two searches by their repeats (5 a side let it judge a table of 7 sizes)]:REPEAT:_default' \
'--label=[A label for the stored run]:LABEL:_default' \
'--resume=[Go on with a stored search that was interrupted or left incomplete (run id, or \`last\`)\: its trials so far are kept and its searches pick up from them]:RUN:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--out=[Report folder (default netsonde-report-RUN)]:DIR:_files' \
'--engine=[Measurement engine\: \`real\`, or \`fake\` (scripted, deterministic; for tests)]:ENGINE:((real\:"Real tests, over sockets"
fake\:"The scripted engine'\''s reports at once, no traffic"))' \
'--auth-key=[Authenticate with this pre-shared key]:FILE:_files' \
'--fake-delay-ms=[Delay per fake repetition in milliseconds (tests)]:FAKE_DELAY_MS:_default' \
'--fake-scale=[Fake engine speed factor (tests\: 0.8 is a 20% regression)]:FAKE_SCALE:_default' \
'--peer=[What the server is\: netsonde, or an unmodified \`iperf3 -s\` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised]:PEER:((netsonde\:"\`netsonde server\`"
iperf3\:"An unmodified \`iperf3 -s\`"
quic-perf\:"Another QUIC stack'\''s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr\: this end measured as always, the server'\''s side what the protocol confirms"))' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--back-to-back[Also find the longest burst at the sender'\''s full rate that loses nothing (RFC 2544 §26.4 back-to-back frames), after NDR and PDR]' \
'--latency[Also measure latency beside a load at 10, 50, 90 and 100% of the NDR found (RFC 2544 §26.2)\: UDP probes echoed by the server, 100 a second, alone for 0.5 s and then beside at least 2 s of the load; round-trip percentiles and the one-way delay on one clock]' \
'--no-report[Do not write a report]' \
'(--json)-q[End with only where the report and the run are, not the summary of every point]' \
'(--json)--quiet[End with only where the report and the run are, not the summary of every point]' \
'--json[End with the summary as one JSON document on standard output (the progress and the report'\''s path go to standard error)]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::host -- Server host. Without it, an embedded server runs on loopback in this process:_default' \
&& ret=0
;;
(runs)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_netsonde__subcmd__runs_commands" \
"*::: :->runs" \
&& ret=0

    case $state in
    (runs)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-runs-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'(--json)--full[Every table of the report, as Markdown]' \
'--json[The summary as one JSON document]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':run -- Run number or `latest`:_default' \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'(--json)--csv[CSV, one row per point and metric]' \
'--json[JSON\: the analysed run]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':run -- Run number or `latest`:_default' \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':run -- Run number:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_netsonde__subcmd__runs__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-runs-help-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(compare)
_arguments "${_arguments_options[@]}" : \
'--threshold=[Raise every metric'\''s smallest relative change that counts to at least this (5% or 0.05). Without it each kind of metric has its own\: throughput and median latency 5%, CPU 10%, tail latency 20% (docs/EXPERIMENTS.md)]:RATIO:_default' \
'--min-change=[Raise every metric'\''s smallest relative change that counts to at least this (5% or 0.05). Without it each kind of metric has its own\: throughput and median latency 5%, CPU 10%, tail latency 20% (docs/EXPERIMENTS.md)]:RATIO:_default' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':run_a -- Baseline run:_default' \
':run_b -- Run to judge:_default' \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
'--out=[Output folder (default netsonde-report-RUN)]:DIR:_files' \
'--format=[Format]:FORMAT:((html\:"One self-contained HTML file, plus the SVG plots beside it"
md\:"Markdown tables"))' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help (see more with '\''--help'\'')]' \
'--help[Print help (see more with '\''--help'\'')]' \
'-V[Print version]' \
'--version[Print version]' \
'::run -- Run number or `latest` (default):_default' \
&& ret=0
;;
(study)
_arguments "${_arguments_options[@]}" : \
'--out=[Output folder for the report and its figures (default study-NAME; for \`all\`, one folder per study under it, default studies/)]:DIR:_files' \
'--db=[Results database\: a SQLite file (default\: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres\://USER@HOST\:PORT/DB (password from PGPASSWORD; TLS as libpq'\''s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from \$NETSONDE_DB when not given]:PATH|URL:_default' \
'(--db)--db-file=[Read --db from FILE'\''s first line (a mounted secret), so a database URL and its password never sit in the process'\''s arguments]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--list[List the studies and their parts]' \
'--quick[Fewer points, one repetition, short trials\: under two minutes, for CI]' \
'(--json)-q[End with only the findings and where the report is, not each part'\''s summary]' \
'(--json)--quiet[End with only the findings and where the report is, not each part'\''s summary]' \
'--json[End with each part'\''s summary and the findings as one JSON document]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::name -- The study\: its number (000) or name (oc48c), or `all`; `--list` shows them:_default' \
&& ret=0
;;
(lab)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
":: :_netsonde__subcmd__lab_commands" \
"*::: :->lab" \
&& ret=0

    case $state in
    (lab)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-lab-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
'--mtu=[MTU of the link'\''s interfaces, 68 to 65535]:MTU:_default' \
'--rate=[Line rate (decimal, 38 B of Ethernet framing per packet)\: 100M, 1G]:RATE:_default' \
'--delay=[One-way delay\: 10ms]:DELAY:_default' \
'--jitter=[Uniform jitter around the delay (does not reorder)\: 1ms]:JITTER:_default' \
'--loss=[Loss\: 1% (random) or gemodel\:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and GOOD optional, default 100% and 0%)]:LOSS:_default' \
'--reorder=[Share of packets sent ahead of the delay (reordered)\: 5%]:REORDER:_default' \
'--duplicate=[Share of packets delivered twice\: 1%]:DUPLICATE:_default' \
'--queue=[Bottleneck queue\: 100p (packets) or bytes (256K). Default 50 ms at the rate]:QUEUE:_default' \
'--shaper=[Rate limiter on veth links\: tbf or htb]:SHAPER:_default' \
'--mechanism=[auto (veth; netem or the userspace emulator for impairments), kernel, or emulator]:MECHANISM:_default' \
'--seed=[Seed of the emulator'\''s random source (loss, reordering, duplication, jitter)]:SEED:_default' \
'--second-path=[A second path between the hosts at this rate (10.77.1.0/30, a veth pair of its own, the first path'\''s MTU, no impairments), for \`--mptcp\` to add to the first\: 50M, or UP/DOWN]:RATE:_default' \
'--offloads=[Segmentation and receive offloads (TSO and GSO where a direction sends, GRO where it receives; veth links)\: on (the default) or off, every packet then through the stack alone; or UP/DOWN]:on|off:_default' \
'--name=[Lab name (namespaces sonde-NAME-cli and sonde-NAME-srv); default rPID]:NAME:_default' \
'--stats=[Write the userspace emulator'\''s counters (packets, drops, delivery error percentiles per direction) to this file as JSON at the end]:FILE:_files' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::file -- A lab or experiment file (TOML)\: its `link` table sets the link (flags override it). An experiment file with no invocation runs as `run FILE`:_files' \
'*::invocation -- What to run in the client host\: `client ...`, `search ...`, `sweep ...` or `run FILE`. Without a HOST it targets the lab'\''s server:_default' \
&& ret=0
;;
(up)
_arguments "${_arguments_options[@]}" : \
'--mtu=[MTU of the link'\''s interfaces, 68 to 65535]:MTU:_default' \
'--rate=[Line rate (decimal, 38 B of Ethernet framing per packet)\: 100M, 1G]:RATE:_default' \
'--delay=[One-way delay\: 10ms]:DELAY:_default' \
'--jitter=[Uniform jitter around the delay (does not reorder)\: 1ms]:JITTER:_default' \
'--loss=[Loss\: 1% (random) or gemodel\:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and GOOD optional, default 100% and 0%)]:LOSS:_default' \
'--reorder=[Share of packets sent ahead of the delay (reordered)\: 5%]:REORDER:_default' \
'--duplicate=[Share of packets delivered twice\: 1%]:DUPLICATE:_default' \
'--queue=[Bottleneck queue\: 100p (packets) or bytes (256K). Default 50 ms at the rate]:QUEUE:_default' \
'--shaper=[Rate limiter on veth links\: tbf or htb]:SHAPER:_default' \
'--mechanism=[auto (veth; netem or the userspace emulator for impairments), kernel, or emulator]:MECHANISM:_default' \
'--seed=[Seed of the emulator'\''s random source (loss, reordering, duplication, jitter)]:SEED:_default' \
'--second-path=[A second path between the hosts at this rate (10.77.1.0/30, a veth pair of its own, the first path'\''s MTU, no impairments), for \`--mptcp\` to add to the first\: 50M, or UP/DOWN]:RATE:_default' \
'--offloads=[Segmentation and receive offloads (TSO and GSO where a direction sends, GRO where it receives; veth links)\: on (the default) or off, every packet then through the stack alone; or UP/DOWN]:on|off:_default' \
'--name=[Lab name]:NAME:_default' \
'-p+[Control port of the server in the lab]:PORT:_default' \
'--port=[Control port of the server in the lab]:PORT:_default' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::file -- A lab file (TOML) whose `link` table sets the link:_files' \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
'--hosts=[Hosts, 2 to 64\: h1 at 10.78.0.1 ... hN at 10.78.0.N]:HOSTS:_default' \
'--rate=[Every host'\''s egress rate, counted as an Ethernet line\: 1G (default\: unshaped, as fast as the host'\''s CPU moves it)]:RATE:_default' \
'*--slow=[A slower link between two hosts, each way\: h2-h4=100M (repeat for more); h2-h4=100M@30s slows it only 30 s after the mesh or monitor starts, so a monitor sees the link get worse between its rounds]:hA-hB=RATE:_default' \
'--name=[Lab name (namespaces sonde-NAME-h1 ... and sonde-NAME-br); default mPID]:NAME:_default' \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'*::invocation -- What to run on the bridge\: `mesh ...`; the lab adds every host as an --agent and the key it made for them:_default' \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::name -- Its name:_default' \
&& ret=0
;;
(clean)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'--all[Also remove labs made by \`lab up\`]' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
&& ret=0
;;
(emulate)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':name -- The lab:_default' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_netsonde__subcmd__lab__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-lab-help-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(clean)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(emulate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
':shell -- bash, zsh, fish, elvish or powershell:(bash elvish fish powershell zsh)' \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
'--logfile=[Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3'\''s --logfile]:FILE:_files' \
'-v[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'--verbose[More detail\: a test'\''s text report adds each end'\''s kernel, network sysctls and interface (iperf3'\''s -V/--verbose; here -V is --version, as elsewhere)]' \
'-h[Print help]' \
'--help[Print help]' \
'-V[Print version]' \
'--version[Print version]' \
'::dir -- Where\: e.g. /usr/local/share/man/man1:_files' \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
":: :_netsonde__subcmd__help_commands" \
"*::: :->help" \
&& ret=0

    case $state in
    (help)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-help-command-$line[1]:"
        case $line[1] in
            (server)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(agent)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(monitor)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(dashboard)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(client)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(keygen)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(caps)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(sweep)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(search)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(runs)
_arguments "${_arguments_options[@]}" : \
":: :_netsonde__subcmd__help__subcmd__runs_commands" \
"*::: :->runs" \
&& ret=0

    case $state in
    (runs)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-help-runs-command-$line[1]:"
        case $line[1] in
            (list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(show)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(export)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(delete)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(compare)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(report)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(study)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(lab)
_arguments "${_arguments_options[@]}" : \
":: :_netsonde__subcmd__help__subcmd__lab_commands" \
"*::: :->lab" \
&& ret=0

    case $state in
    (lab)
        words=($line[1] "${words[@]}")
        (( CURRENT += 1 ))
        curcontext="${curcontext%:*:*}:netsonde-help-lab-command-$line[1]:"
        case $line[1] in
            (run)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(up)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(mesh)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(down)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(clean)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(list)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(emulate)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
(completions)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(man)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
(help)
_arguments "${_arguments_options[@]}" : \
&& ret=0
;;
        esac
    ;;
esac
;;
        esac
    ;;
esac
}

(( $+functions[_netsonde_commands] )) ||
_netsonde_commands() {
    local commands; commands=(
'server:Listen for tests (one at a time unless --max-sessions says more; others are told "busy" with the time left). Serves iperf3 clients too, on the same port (\`netsonde -s\` works as \`netsonde server\`)' \
'agent:A server that also takes jobs from a controller (\`netsonde mesh\`)\: it runs the tests it is asked for as a client against other agents and sends back the reports. Needs --auth-key\: only a holder of the key may direct it' \
'mesh:Measure between many hosts, each running \`netsonde agent\`\: every ordered pair of a pattern (all-to-all, ring, star, listed pairs) runs the sweep'\''s tests, one pair at a time, stored as one run whose points are (source, destination, test...); prints the matrix of pairs' \
'monitor:Watch a mesh over time\: its tests round after round on a schedule (with random jitter, an overrunning round'\''s slot skipped), each round stored; every pair judged against its own normal (its past rounds)\: ok, learning, degraded or failed. Serves each pair'\''s state on --metrics' \
'dashboard:A read-only web page over the store\: each monitor'\''s grid of pairs coloured by state, a pair'\''s history with its baseline band, the runs with their reports, and \`compare\` of two. Binds 127.0.0.1 by default' \
'client:Run one test against a server, or against an embedded loopback server when no HOST is given' \
'keygen:Write a new random pre-shared key for --auth-key' \
'caps:Which I/O strategies this host supports, probed on real sockets' \
'sweep:Characterize\: a grid of tests over sizes, windows, directions and streams, with repetitions, stored and reported. With no arguments, a short characterization of this host'\''s stack on loopback' \
'run:Run a sweep described by an experiment file (TOML, see docs/EXPERIMENTS.md)' \
'search:Loss-free rate search (RFC 2544 throughput)\: per UDP frame size and I/O strategy, the highest offered rate with no loss (NDR) and with loss at or below a ratio (PDR)' \
'runs:Browse stored runs' \
'compare:Compare two runs point by point; exits 3 when RUN_B regressed beyond noise' \
'report:Write a run'\''s report (HTML with plots, or Markdown) from the store' \
'study:Rerun a reference study (000 oc48c, 001 dsnic, 002 hp-atm, 003 kisti-lfn, 004 copy-semantics)\: its sweeps, in the lab where it needs a link, stored; then a report that sets the seed'\''s published figures beside today'\''s and decides each of its findings from the data' \
'lab:Emulated paths on this host\: namespaces joined by a link with MTU, rate, delay, jitter, loss and reordering (root)' \
'completions:Print a shell completion script\: netsonde completions bash > /usr/share/bash-completion/completions/netsonde (zsh, fish likewise)' \
'man:Write the man pages (netsonde.1 and one per command) into DIR' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__agent_commands] )) ||
_netsonde__subcmd__agent_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde agent commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__caps_commands] )) ||
_netsonde__subcmd__caps_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde caps commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__client_commands] )) ||
_netsonde__subcmd__client_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde client commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__compare_commands] )) ||
_netsonde__subcmd__compare_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde compare commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__completions_commands] )) ||
_netsonde__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde completions commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__dashboard_commands] )) ||
_netsonde__subcmd__dashboard_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde dashboard commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help_commands] )) ||
_netsonde__subcmd__help_commands() {
    local commands; commands=(
'server:Listen for tests (one at a time unless --max-sessions says more; others are told "busy" with the time left). Serves iperf3 clients too, on the same port (\`netsonde -s\` works as \`netsonde server\`)' \
'agent:A server that also takes jobs from a controller (\`netsonde mesh\`)\: it runs the tests it is asked for as a client against other agents and sends back the reports. Needs --auth-key\: only a holder of the key may direct it' \
'mesh:Measure between many hosts, each running \`netsonde agent\`\: every ordered pair of a pattern (all-to-all, ring, star, listed pairs) runs the sweep'\''s tests, one pair at a time, stored as one run whose points are (source, destination, test...); prints the matrix of pairs' \
'monitor:Watch a mesh over time\: its tests round after round on a schedule (with random jitter, an overrunning round'\''s slot skipped), each round stored; every pair judged against its own normal (its past rounds)\: ok, learning, degraded or failed. Serves each pair'\''s state on --metrics' \
'dashboard:A read-only web page over the store\: each monitor'\''s grid of pairs coloured by state, a pair'\''s history with its baseline band, the runs with their reports, and \`compare\` of two. Binds 127.0.0.1 by default' \
'client:Run one test against a server, or against an embedded loopback server when no HOST is given' \
'keygen:Write a new random pre-shared key for --auth-key' \
'caps:Which I/O strategies this host supports, probed on real sockets' \
'sweep:Characterize\: a grid of tests over sizes, windows, directions and streams, with repetitions, stored and reported. With no arguments, a short characterization of this host'\''s stack on loopback' \
'run:Run a sweep described by an experiment file (TOML, see docs/EXPERIMENTS.md)' \
'search:Loss-free rate search (RFC 2544 throughput)\: per UDP frame size and I/O strategy, the highest offered rate with no loss (NDR) and with loss at or below a ratio (PDR)' \
'runs:Browse stored runs' \
'compare:Compare two runs point by point; exits 3 when RUN_B regressed beyond noise' \
'report:Write a run'\''s report (HTML with plots, or Markdown) from the store' \
'study:Rerun a reference study (000 oc48c, 001 dsnic, 002 hp-atm, 003 kisti-lfn, 004 copy-semantics)\: its sweeps, in the lab where it needs a link, stored; then a report that sets the seed'\''s published figures beside today'\''s and decides each of its findings from the data' \
'lab:Emulated paths on this host\: namespaces joined by a link with MTU, rate, delay, jitter, loss and reordering (root)' \
'completions:Print a shell completion script\: netsonde completions bash > /usr/share/bash-completion/completions/netsonde (zsh, fish likewise)' \
'man:Write the man pages (netsonde.1 and one per command) into DIR' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__agent_commands] )) ||
_netsonde__subcmd__help__subcmd__agent_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help agent commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__caps_commands] )) ||
_netsonde__subcmd__help__subcmd__caps_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help caps commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__client_commands] )) ||
_netsonde__subcmd__help__subcmd__client_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help client commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__compare_commands] )) ||
_netsonde__subcmd__help__subcmd__compare_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help compare commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__completions_commands] )) ||
_netsonde__subcmd__help__subcmd__completions_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help completions commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__dashboard_commands] )) ||
_netsonde__subcmd__help__subcmd__dashboard_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help dashboard commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__help_commands] )) ||
_netsonde__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__keygen_commands] )) ||
_netsonde__subcmd__help__subcmd__keygen_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help keygen commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab_commands] )) ||
_netsonde__subcmd__help__subcmd__lab_commands() {
    local commands; commands=(
'run:Build a lab, run a client or sweep invocation in it against a server in it, and tear it down\: \`netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr\`' \
'up:Build a lab with a server in it and leave it running' \
'mesh:Build a cluster (hosts h1..hN on one bridge, each in its own namespace running \`netsonde agent\`, some pairs slower), run \`mesh ...\` from the bridge against every host, and tear it down\: \`netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3\`' \
'down:Tear down a lab made by \`lab up\`' \
'clean:Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by \`lab up\`. Never touches anything a lab did not make' \
'list:List labs' \
'emulate:Run the userspace emulator of a \`lab up\` lab (started by \`lab up\`)' \
    )
    _describe -t commands 'netsonde help lab commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__clean_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__clean_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab clean commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__down_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab down commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__emulate_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__emulate_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab emulate commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__list_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__mesh_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab mesh commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__run_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab run commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__lab__subcmd__up_commands] )) ||
_netsonde__subcmd__help__subcmd__lab__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help lab up commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__man_commands] )) ||
_netsonde__subcmd__help__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help man commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__mesh_commands] )) ||
_netsonde__subcmd__help__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help mesh commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__monitor_commands] )) ||
_netsonde__subcmd__help__subcmd__monitor_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help monitor commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__report_commands] )) ||
_netsonde__subcmd__help__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help report commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__run_commands] )) ||
_netsonde__subcmd__help__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help run commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__runs_commands] )) ||
_netsonde__subcmd__help__subcmd__runs_commands() {
    local commands; commands=(
'list:One line per run, newest first' \
'show:A run'\''s summary\: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)' \
'export:A run'\''s points and statistics as CSV or JSON' \
'delete:Delete a run and everything recorded for it' \
    )
    _describe -t commands 'netsonde help runs commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__runs__subcmd__delete_commands] )) ||
_netsonde__subcmd__help__subcmd__runs__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help runs delete commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__runs__subcmd__export_commands] )) ||
_netsonde__subcmd__help__subcmd__runs__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help runs export commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__runs__subcmd__list_commands] )) ||
_netsonde__subcmd__help__subcmd__runs__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help runs list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__runs__subcmd__show_commands] )) ||
_netsonde__subcmd__help__subcmd__runs__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help runs show commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__search_commands] )) ||
_netsonde__subcmd__help__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help search commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__server_commands] )) ||
_netsonde__subcmd__help__subcmd__server_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help server commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__study_commands] )) ||
_netsonde__subcmd__help__subcmd__study_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help study commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__help__subcmd__sweep_commands] )) ||
_netsonde__subcmd__help__subcmd__sweep_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde help sweep commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__keygen_commands] )) ||
_netsonde__subcmd__keygen_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde keygen commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab_commands] )) ||
_netsonde__subcmd__lab_commands() {
    local commands; commands=(
'run:Build a lab, run a client or sweep invocation in it against a server in it, and tear it down\: \`netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr\`' \
'up:Build a lab with a server in it and leave it running' \
'mesh:Build a cluster (hosts h1..hN on one bridge, each in its own namespace running \`netsonde agent\`, some pairs slower), run \`mesh ...\` from the bridge against every host, and tear it down\: \`netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3\`' \
'down:Tear down a lab made by \`lab up\`' \
'clean:Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by \`lab up\`. Never touches anything a lab did not make' \
'list:List labs' \
'emulate:Run the userspace emulator of a \`lab up\` lab (started by \`lab up\`)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde lab commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__clean_commands] )) ||
_netsonde__subcmd__lab__subcmd__clean_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab clean commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__down_commands] )) ||
_netsonde__subcmd__lab__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab down commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__emulate_commands] )) ||
_netsonde__subcmd__lab__subcmd__emulate_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab emulate commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help_commands] )) ||
_netsonde__subcmd__lab__subcmd__help_commands() {
    local commands; commands=(
'run:Build a lab, run a client or sweep invocation in it against a server in it, and tear it down\: \`netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr\`' \
'up:Build a lab with a server in it and leave it running' \
'mesh:Build a cluster (hosts h1..hN on one bridge, each in its own namespace running \`netsonde agent\`, some pairs slower), run \`mesh ...\` from the bridge against every host, and tear it down\: \`netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3\`' \
'down:Tear down a lab made by \`lab up\`' \
'clean:Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by \`lab up\`. Never touches anything a lab did not make' \
'list:List labs' \
'emulate:Run the userspace emulator of a \`lab up\` lab (started by \`lab up\`)' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde lab help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__clean_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__clean_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help clean commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__down_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__down_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help down commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__emulate_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__emulate_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help emulate commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__help_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__list_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__mesh_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help mesh commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__run_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help run commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__help__subcmd__up_commands] )) ||
_netsonde__subcmd__lab__subcmd__help__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab help up commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__list_commands] )) ||
_netsonde__subcmd__lab__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__mesh_commands] )) ||
_netsonde__subcmd__lab__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab mesh commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__run_commands] )) ||
_netsonde__subcmd__lab__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab run commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__lab__subcmd__up_commands] )) ||
_netsonde__subcmd__lab__subcmd__up_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde lab up commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__man_commands] )) ||
_netsonde__subcmd__man_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde man commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__mesh_commands] )) ||
_netsonde__subcmd__mesh_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde mesh commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__monitor_commands] )) ||
_netsonde__subcmd__monitor_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde monitor commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__report_commands] )) ||
_netsonde__subcmd__report_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde report commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__run_commands] )) ||
_netsonde__subcmd__run_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde run commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs_commands] )) ||
_netsonde__subcmd__runs_commands() {
    local commands; commands=(
'list:One line per run, newest first' \
'show:A run'\''s summary\: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)' \
'export:A run'\''s points and statistics as CSV or JSON' \
'delete:Delete a run and everything recorded for it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde runs commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__delete_commands] )) ||
_netsonde__subcmd__runs__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs delete commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__export_commands] )) ||
_netsonde__subcmd__runs__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs export commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help_commands] )) ||
_netsonde__subcmd__runs__subcmd__help_commands() {
    local commands; commands=(
'list:One line per run, newest first' \
'show:A run'\''s summary\: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)' \
'export:A run'\''s points and statistics as CSV or JSON' \
'delete:Delete a run and everything recorded for it' \
'help:Print this message or the help of the given subcommand(s)' \
    )
    _describe -t commands 'netsonde runs help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help__subcmd__delete_commands] )) ||
_netsonde__subcmd__runs__subcmd__help__subcmd__delete_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs help delete commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help__subcmd__export_commands] )) ||
_netsonde__subcmd__runs__subcmd__help__subcmd__export_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs help export commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help__subcmd__help_commands] )) ||
_netsonde__subcmd__runs__subcmd__help__subcmd__help_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs help help commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help__subcmd__list_commands] )) ||
_netsonde__subcmd__runs__subcmd__help__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs help list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__help__subcmd__show_commands] )) ||
_netsonde__subcmd__runs__subcmd__help__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs help show commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__list_commands] )) ||
_netsonde__subcmd__runs__subcmd__list_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs list commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__runs__subcmd__show_commands] )) ||
_netsonde__subcmd__runs__subcmd__show_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde runs show commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__search_commands] )) ||
_netsonde__subcmd__search_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde search commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__server_commands] )) ||
_netsonde__subcmd__server_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde server commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__study_commands] )) ||
_netsonde__subcmd__study_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde study commands' commands "$@"
}
(( $+functions[_netsonde__subcmd__sweep_commands] )) ||
_netsonde__subcmd__sweep_commands() {
    local commands; commands=()
    _describe -t commands 'netsonde sweep commands' commands "$@"
}

if [ "$funcstack[1]" = "_netsonde" ]; then
    _netsonde "$@"
else
    compdef _netsonde netsonde
fi
