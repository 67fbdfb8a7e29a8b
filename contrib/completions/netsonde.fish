# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_netsonde_global_optspecs
    string join \n logfile= v/verbose h/help V/version
end

function __fish_netsonde_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_netsonde_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_netsonde_using_subcommand
    set -l cmd (__fish_netsonde_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c netsonde -n "__fish_netsonde_needs_command" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_needs_command" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_needs_command" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_needs_command" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "server" -d 'Listen for tests (one at a time unless --max-sessions says more; others are told "busy" with the time left). Serves iperf3 clients too, on the same port (`netsonde -s` works as `netsonde server`)'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "agent" -d 'A server that also takes jobs from a controller (`netsonde mesh`): it runs the tests it is asked for as a client against other agents and sends back the reports. Needs --auth-key: only a holder of the key may direct it'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "mesh" -d 'Measure between many hosts, each running `netsonde agent`: every ordered pair of a pattern (all-to-all, ring, star, listed pairs) runs the sweep\'s tests, one pair at a time, stored as one run whose points are (source, destination, test...); prints the matrix of pairs'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "monitor" -d 'Watch a mesh over time: its tests round after round on a schedule (with random jitter, an overrunning round\'s slot skipped), each round stored; every pair judged against its own normal (its past rounds): ok, learning, degraded or failed. Serves each pair\'s state on --metrics'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "dashboard" -d 'A read-only web page over the store: each monitor\'s grid of pairs coloured by state, a pair\'s history with its baseline band, the runs with their reports, and `compare` of two. Binds 127.0.0.1 by default'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "client" -d 'Run one test against a server, or against an embedded loopback server when no HOST is given'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "keygen" -d 'Write a new random pre-shared key for --auth-key'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "caps" -d 'Which I/O strategies this host supports, probed on real sockets'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "sweep" -d 'Characterize: a grid of tests over sizes, windows, directions and streams, with repetitions, stored and reported. With no arguments, a short characterization of this host\'s stack on loopback'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "run" -d 'Run a sweep described by an experiment file (TOML, see docs/EXPERIMENTS.md)'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "search" -d 'Loss-free rate search (RFC 2544 throughput): per UDP frame size and I/O strategy, the highest offered rate with no loss (NDR) and with loss at or below a ratio (PDR)'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "runs" -d 'Browse stored runs'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "compare" -d 'Compare two runs point by point; exits 3 when RUN_B regressed beyond noise'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "report" -d 'Write a run\'s report (HTML with plots, or Markdown) from the store'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "study" -d 'Rerun a reference study (000 oc48c, 001 dsnic, 002 hp-atm, 003 kisti-lfn, 004 copy-semantics): its sweeps, in the lab where it needs a link, stored; then a report that sets the seed\'s published figures beside today\'s and decides each of its findings from the data'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "lab" -d 'Emulated paths on this host: namespaces joined by a link with MTU, rate, delay, jitter, loss and reordering (root)'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "completions" -d 'Print a shell completion script: netsonde completions bash > /usr/share/bash-completion/completions/netsonde (zsh, fish likewise)'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "man" -d 'Write the man pages (netsonde.1 and one per command) into DIR'
complete -c netsonde -n "__fish_netsonde_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -s p -l port -d 'Control port' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -s B -l bind -d 'Address to listen on: `::` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l auth-key -d 'Require clients to prove they hold this key (made by `netsonde keygen`); the whole session is then integrity-protected. The file must be mode 600' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l metrics -d 'Serve OpenMetrics on `http://ADDR/metrics` for Prometheus: sessions by outcome, tests running, the budget held, and, for an agent, the last result of each job it ran (goodput, latency, loss, CPU per KiB, verdict)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l quic-perf -d 'Also answer any QUIC perf client (draft-banks-quic-performance: quinn\'s perf, msquic\'s secnetperf, picoquic\'s quicperf) on this UDP port of the listening address: no authentication (not with --auth-key), at most 16 connections, each answer at most --max-duration' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l log-format -d 'Session log format on stderr. With json, an iperf3 client asking for --get-server-output gets it as JSON too, as from iperf3 -s -J (else as text)' -r -f -a "text\t'key=value pairs'
json\t'One JSON object per line'"
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-duration -d 'Longest test (warm-up plus time) a client may ask for' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-parallel -d 'Most parallel streams per direction' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-size -d 'Largest message, request, response or window' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-rate -d 'Highest pacing rate per stream' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-tests -l max-sessions -d 'Tests (sessions) running at once, netsonde\'s and iperf3 clients\' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other\'s figures' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-connections -d 'Control connections at once' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-per-address -d 'Control connections at once from one address' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-session-memory -d 'Buffer memory one test may use (message sizes x flows x buffers, checked at setup) [default: half of what this process may use, at most 1 GiB]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l max-memory -d 'Buffer memory all running tests may use together [default: as --max-session-memory, times --max-tests, within half of what this process may use]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l phase-timeout -d 'Deadline of every protocol phase (hello, authentication, setup, data connections, done) [default: 5 s for hello and done, 10 s for setup and data connections]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l no-store -d 'Do not store iperf3 clients\' sessions. By default each is stored as a run of one point (no netsonde client is there to store it): this end\'s CPU and TCP_INFO, and what the iperf3 client reported of its side'
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -l iperf3-fast-receiver -d 'Serve iperf3 clients with netsonde\'s own receiver (1 MiB reads, woken once about 1 ms of data is queued). By default an iperf3 client\'s streams are read as iperf3\'s server reads them (one -l per read, woken per segment), so swapping `iperf3 -s` for `netsonde server` keeps its figures'
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand server" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -s p -l port -d 'Control port' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -s B -l bind -d 'Address to listen on: `::` (the default) takes IPv6 and IPv4 clients, as iperf3 -s does (IPv4 alone on a host without IPv6); 0.0.0.0 for IPv4 only' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l auth-key -d 'Require clients to prove they hold this key (made by `netsonde keygen`); the whole session is then integrity-protected. The file must be mode 600' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l metrics -d 'Serve OpenMetrics on `http://ADDR/metrics` for Prometheus: sessions by outcome, tests running, the budget held, and, for an agent, the last result of each job it ran (goodput, latency, loss, CPU per KiB, verdict)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l quic-perf -d 'Also answer any QUIC perf client (draft-banks-quic-performance: quinn\'s perf, msquic\'s secnetperf, picoquic\'s quicperf) on this UDP port of the listening address: no authentication (not with --auth-key), at most 16 connections, each answer at most --max-duration' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l log-format -d 'Session log format on stderr. With json, an iperf3 client asking for --get-server-output gets it as JSON too, as from iperf3 -s -J (else as text)' -r -f -a "text\t'key=value pairs'
json\t'One JSON object per line'"
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-duration -d 'Longest test (warm-up plus time) a client may ask for' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-parallel -d 'Most parallel streams per direction' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-size -d 'Largest message, request, response or window' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-rate -d 'Highest pacing rate per stream' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-tests -l max-sessions -d 'Tests (sessions) running at once, netsonde\'s and iperf3 clients\' alike; others are told "busy" with the time left. One by default, so tests do not disturb each other\'s figures' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-connections -d 'Control connections at once' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-per-address -d 'Control connections at once from one address' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-session-memory -d 'Buffer memory one test may use (message sizes x flows x buffers, checked at setup) [default: half of what this process may use, at most 1 GiB]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l max-memory -d 'Buffer memory all running tests may use together [default: as --max-session-memory, times --max-tests, within half of what this process may use]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l phase-timeout -d 'Deadline of every protocol phase (hello, authentication, setup, data connections, done) [default: 5 s for hello and done, 10 s for setup and data connections]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l engine -d 'How jobs are measured: `real`, or `fake` (a scripted report at once, no traffic; for testing controllers at scale)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l fake-scale -d 'The fake engine\'s speed factor (tests: 1e6 makes an agent whose reports no link could produce)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l allow-targets -d 'The targets this agent may test: addresses and networks, comma-separated (10.0.0.0/8,192.0.2.7,fd00::/8). A job for any other address is refused before a packet leaves. Without it, any target (said at start)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l no-store -d 'Do not store iperf3 clients\' sessions. By default each is stored as a run of one point (no netsonde client is there to store it): this end\'s CPU and TCP_INFO, and what the iperf3 client reported of its side'
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -l iperf3-fast-receiver -d 'Serve iperf3 clients with netsonde\'s own receiver (1 MiB reads, woken once about 1 ms of data is queued). By default an iperf3 client\'s streams are read as iperf3\'s server reads them (one -l per read, woken per segment), so swapping `iperf3 -s` for `netsonde server` keeps its figures'
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand agent" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l agent -d 'Agents, `NAME=HOST[:PORT]` (repeat the flag or separate with commas); the name is the host when none is given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l agents-file -d 'A file of agents, one `NAME=HOST[:PORT]` per line (# starts a comment)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l agents-dns -d 'Every address this name resolves to is an agent, named by its address: a Kubernetes headless Service in front of the agents\' DaemonSet (`netsonde-agents.netsonde.svc:5300`; see deploy/kubernetes)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l agents-k8s -d 'The ready endpoints of this Kubernetes Service are the agents, each named by its node: listed through the API from inside the cluster (the controller\'s Job, whose service account may list endpointslices; see deploy/kubernetes). The namespace is the pod\'s own and the port the endpoints\' `control` port when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l pattern -d 'Which ordered pairs run: all-to-all, ring, star:NAME (every other agent to NAME) or pairs:SRC-DST,SRC-DST' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l concurrency -d 'Run up to N pairs at once, never two that share an agent, each round started at one moment (the hosts\' clocks synchronised, NTP or PTP); the start skew each round measured is stored with its tests. 1: one pair at a time' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l metrics -d 'Serve OpenMetrics on `http://ADDR/metrics` while the mesh runs: the last result of each pair and test (goodput, latency, loss, CPU per KiB, verdict), as an agent\'s `--metrics` serves its own jobs\'' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s p -l port -d 'Server control port [default: 5300; 5201 with --peer iperf3]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l tests -d 'Tests: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr' -r -f -a "tcp-stream\t''
udp-stream\t''
tcp-rr\t''
udp-rr\t''
tcp-crr\t''
tls-stream\t''
quic-stream\t''
tls-crr\t''
tls-rr\t''
quic-rr\t''
quic-crr\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l directions -d 'Directions: out,in,bidir' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l sizes -d 'Message sizes: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l windows -d 'Windows: default,64K,256K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l parallel -d 'Parallel streams: 1,2,4' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l io -d 'I/O strategies to compare: copy,batch,zerocopy,uring,auto (see `netsonde caps`)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l pacing -d 'Pacing per stream, an axis on any path: 100M,1G,0 (0: unpaced; stream tests)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l repeat -d 'Repetitions per point' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s t -l time -d 'Measured time per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l warmup -d 'Warm-up per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l seed -d 'Seed of the randomised run order' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l line-rate -d 'Line rate for efficiency figures: 10G' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l label -d 'A label for `runs list`' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l mtus -d 'Lab link axis (inside `netsonde lab run`): MTUs, 1500,9000,65535' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l rates -d 'Lab link axis: rates, 100M,1G (0 is unlimited)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l delays -d 'Lab link axis: one-way delays each way, 0,10ms,100ms' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l losses -d 'Lab link axis: random losses each way, 0,1% (Gilbert-Elliott in a file)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l queues -d 'Lab link axis: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l offloads -d 'Lab link axis: segmentation and receive offloads (TSO/GSO and GRO on the veth link): off,on' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l resume -d 'Finish an interrupted run (number or `latest`)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l out -d 'Report folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l engine -d 'Measurement engine: `real`, or `fake` (scripted, deterministic; for tests)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l auth-key -d 'Authenticate with this pre-shared key' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l fake-delay-ms -d 'Delay per fake repetition in milliseconds (tests)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l fake-scale -d 'Fake engine speed factor (tests: 0.8 is a 20% regression)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l yes -d 'Run a mesh whose measuring time is estimated at over an hour'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l samples -d 'Each point over time: every TCP sender\'s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow\'s goodput, RTT, cwnd and retransmissions over time'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l no-report -d 'Do not write a report'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s q -l quiet -d 'End with only where the report and the run are, not the summary of every point'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -l json -d 'End with the summary as one JSON document on standard output (the progress and the report\'s path go to standard error)'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand mesh" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l every -d 'Interval between rounds (slots): each round starts a random share of --jitter into its slot; one that runs past the next slot\'s start makes that slot skipped, said and counted, never stacked' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l jitter -d 'The largest random delay of a round into its slot, as a share of the interval (at most 50%), so monitors started together do not stay in step' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l window -d 'Past rounds that make each pair\'s normal (its baseline): at least 5, the fewest a normal\'s spread is taken from' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l phase -d 'Begin each slot when the wall clock is this far into an interval (`--every 15m --phase 7m30s`: at :07:30, :22:30, ...), whenever the monitor starts: monitors given different phases take turns, never measuring through the same hosts at once. Default: slots count from the start' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l rounds -d 'Stop after this many rounds (default: until SIGTERM or SIGINT, which end the round in progress with what it measured stored)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l agent -d 'Agents, `NAME=HOST[:PORT]` (repeat the flag or separate with commas); the name is the host when none is given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l agents-file -d 'A file of agents, one `NAME=HOST[:PORT]` per line (# starts a comment)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l agents-dns -d 'Every address this name resolves to is an agent, named by its address: a Kubernetes headless Service in front of the agents\' DaemonSet (`netsonde-agents.netsonde.svc:5300`; see deploy/kubernetes)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l agents-k8s -d 'The ready endpoints of this Kubernetes Service are the agents, each named by its node: listed through the API from inside the cluster (the controller\'s Job, whose service account may list endpointslices; see deploy/kubernetes). The namespace is the pod\'s own and the port the endpoints\' `control` port when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l pattern -d 'Which ordered pairs run: all-to-all, ring, star:NAME (every other agent to NAME) or pairs:SRC-DST,SRC-DST' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l concurrency -d 'Run up to N pairs at once, never two that share an agent, each round started at one moment (the hosts\' clocks synchronised, NTP or PTP); the start skew each round measured is stored with its tests. 1: one pair at a time' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l metrics -d 'Serve OpenMetrics on `http://ADDR/metrics` while the mesh runs: the last result of each pair and test (goodput, latency, loss, CPU per KiB, verdict), as an agent\'s `--metrics` serves its own jobs\'' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s p -l port -d 'Server control port [default: 5300; 5201 with --peer iperf3]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l tests -d 'Tests: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr' -r -f -a "tcp-stream\t''
udp-stream\t''
tcp-rr\t''
udp-rr\t''
tcp-crr\t''
tls-stream\t''
quic-stream\t''
tls-crr\t''
tls-rr\t''
quic-rr\t''
quic-crr\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l directions -d 'Directions: out,in,bidir' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l sizes -d 'Message sizes: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l windows -d 'Windows: default,64K,256K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l parallel -d 'Parallel streams: 1,2,4' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l io -d 'I/O strategies to compare: copy,batch,zerocopy,uring,auto (see `netsonde caps`)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l pacing -d 'Pacing per stream, an axis on any path: 100M,1G,0 (0: unpaced; stream tests)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l repeat -d 'Repetitions per point' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s t -l time -d 'Measured time per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l warmup -d 'Warm-up per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l seed -d 'Seed of the randomised run order' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l line-rate -d 'Line rate for efficiency figures: 10G' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l label -d 'A label for `runs list`' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l mtus -d 'Lab link axis (inside `netsonde lab run`): MTUs, 1500,9000,65535' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l rates -d 'Lab link axis: rates, 100M,1G (0 is unlimited)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l delays -d 'Lab link axis: one-way delays each way, 0,10ms,100ms' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l losses -d 'Lab link axis: random losses each way, 0,1% (Gilbert-Elliott in a file)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l queues -d 'Lab link axis: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l offloads -d 'Lab link axis: segmentation and receive offloads (TSO/GSO and GRO on the veth link): off,on' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l resume -d 'Finish an interrupted run (number or `latest`)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l out -d 'Report folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l engine -d 'Measurement engine: `real`, or `fake` (scripted, deterministic; for tests)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l auth-key -d 'Authenticate with this pre-shared key' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l fake-delay-ms -d 'Delay per fake repetition in milliseconds (tests)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l fake-scale -d 'Fake engine speed factor (tests: 0.8 is a 20% regression)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l skip-overrun -d 'Start even when a round is estimated to take longer than --every: the slots a round runs past are skipped (said and counted). Without it such an interval is refused, with the estimate'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l yes -d 'Run a mesh whose measuring time is estimated at over an hour'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l samples -d 'Each point over time: every TCP sender\'s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow\'s goodput, RTT, cwnd and retransmissions over time'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l no-report -d 'Do not write a report'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s q -l quiet -d 'End with only where the report and the run are, not the summary of every point'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -l json -d 'End with the summary as one JSON document on standard output (the progress and the report\'s path go to standard error)'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand monitor" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -l listen -d 'Where to serve it. 127.0.0.1 by default: the dashboard only reads, but it shows every stored run to whoever reaches it; put it behind a reverse proxy with authentication to share it' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -l window -d 'Past rounds that make each pair\'s normal, as the monitor\'s --window' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand dashboard" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s p -l port -d 'Server control port [default: 5300; 5201 with --peer iperf3]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests; this end is measured as always, the server\'s side is what iperf3 reports)' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s T -l test -d 'Test: tcp-stream, udp-stream, tcp-rr, udp-rr, tcp-crr, tls-stream, tls-rr, tls-crr, quic-stream, quic-rr, quic-crr. (Unlike iperf3, whose -T is a title.)' -r -f -a "tcp-stream\t''
udp-stream\t''
tcp-rr\t''
udp-rr\t''
tcp-crr\t''
tls-stream\t''
quic-stream\t''
tls-crr\t''
tls-rr\t''
quic-rr\t''
quic-crr\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s l -l size -d 'Message size (stream tests): 128K = 128 KiB; 64kB = 64000 B. Default 128 KiB for TCP, 1472 B for UDP' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l request-size -d 'Request size (RR, CRR)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l response-size -d 'Response size (RR, CRR)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s w -l window -d 'Socket buffer (SO_SNDBUF and SO_RCVBUF) on both ends; the granted value is reported. A list gives each flow its own, cycled over the flows: 128K,32K' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l dscp -d 'DSCP (0-63) of each flow\'s packets, cycled over the flows: 46 (EF) for all, or 46,0,10 for one each' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l probe-rate -d 'Probes of each kind per second (1-100)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l probe-idle -d 'Probing alone before and after the load' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l plot -d 'Write the load-latency figure (latency over time with the phases shaded, each flow\'s goodput, the distribution idle against loaded) to this SVG file' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l report -d 'Write the test\'s HTML report to DIR/index.html: each flow\'s goodput, round trip, congestion window and retransmissions over time (every TCP sender\'s TCP_INFO read each -i, 100 ms without it), the probes\' latency under load, and the text report' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l rcv-window -d 'Receive buffer of the receiving end of each stream only (the sender keeps -w or the kernel\'s default): a receiver window below the sender\'s' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s M -l mss -d 'TCP maximum segment size' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s C -l congestion -d 'TCP congestion control on both ends (bbr, cubic, reno, ...)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l tls-suite -d 'tls-stream: the cipher suite by its IANA name, which also picks TLS 1.3 or 1.2 (TLS13_AES_128_GCM_SHA256, TLS13_CHACHA20_POLY1305_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, ...); default: TLS 1.3\'s first' -r -f -a "TLS13_AES_256_GCM_SHA384\t''
TLS13_AES_128_GCM_SHA256\t''
TLS13_CHACHA20_POLY1305_SHA256\t''
TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\t''
TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\t''
TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l quic-streams -d 'quic-stream: streams on each flow\'s one QUIC connection, 1 to 64, each a perf request of its own sharing the connection\'s flow control and congestion window (-P opens more connections) [default: 1]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s b -l rate -d 'Pacing rate per stream, in bit/s: 100M, 10G (decimal); 0 is unpaced. UDP default 1G' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s P -l parallel -d 'Parallel streams per direction, each on its own thread [default: 1]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s t -l time -d 'Measured duration: 10 (seconds), 500ms, 2m [default: 10 s; with -n or -k, a cap of 300 s less the warm-up]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s n -l bytes -d 'End by volume, as iperf3\'s -n: the bytes each direction sends in the measured interval (10G, 500M; K, M, G are binary as in iperf3), shared by its streams. The test ends when they are sent; -t caps it' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s k -l blockcount -d 'End by volume in messages (iperf3\'s -k): --bytes of this many -l writes' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l rcv-timeout -d 'Fail the test when a receiving stream gets nothing for this long (iperf3\'s --rcv-timeout, whose number is in ms: give 120s or 500ms) [default: wait to the end]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l connect-timeout -d 'Deadline of the control connection\'s connect (iperf3\'s --connect-timeout, in ms there: give 3s or 500ms) [default: 5 s]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s B -l bind -d 'Local address of every connection (iperf3\'s -B on a client)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l cport -d 'Local port of the data connections (iperf3\'s --cport): flow k uses PORT+k [default: any]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s O -l warmup -l omit -d 'Warm-up before the measured interval, excluded from results (iperf3\'s -O/--omit) [default: 0]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s i -l interval -d 'Print a line per interval' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s A -l affinity -d 'Pin client flow threads to these cores, round-robin: 0,1' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l server-affinity -d 'Pin server flow threads to these cores, round-robin' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l line-rate -d 'The link\'s line rate (10G), for the diagnosis: the goodput\'s ceiling after header overhead at the interface\'s MTU. In the lab the link\'s own rate is used when this is not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s f -l format -d 'Rates in the text output\'s tables and interval lines in this unit, as iperf3\'s -f: k, m, g, t for kbit/s to Tbit/s, K, M, G, T for KiB/s to TiB/s (the verdict\'s sentences keep their own) [default: the unit that suits each rate]' -r -f -a "k\t''
m\t''
g\t''
t\t''
K\t''
M\t''
G\t''
T\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l title -d 'Begin every line of the text output with this and a colon (iperf3\'s --title)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l auth-key -d 'Authenticate with this pre-shared key (the server must use the same)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l io -d 'I/O strategy for both sending and receiving flows: copy, epoll, batch, zerocopy, sendfile, splice, uring, busypoll, auto, and xdp for UDP receivers only (see `netsonde caps`)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l tx-io -d 'I/O strategy of the sending flows (overrides --io)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l rx-io -d 'I/O strategy of the receiving flows (overrides --io)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l cpu-breakdown -d 'Sample the flow threads for the CPU breakdown (where each end\'s CPU went: copy, TCP/IP, ...): auto does for stream tests (under 2% of their goodput) and not for request/response tests, whose every wake-up the sampling slows (a fifth of tcp-rr\'s rate in a VM); on and off force it' -r -f -a "auto\t''
on\t''
off\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l iperf3-fast-receiver -d 'With --peer iperf3: receive with netsonde\'s own receiver (reads of up to 1 MiB, woken once about 1 ms of data is queued) instead of as iperf3\'s client reads (one -l per read, woken per segment, the session\'s streams on one thread), which is the default so that swapping `iperf3 -c` for `netsonde -c` keeps its -R and --bidir figures'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s u -l udp -d 'UDP, as iperf3\'s -u: the same as --test udp-stream'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s 4 -l ipv4 -d 'Only IPv4 addresses of HOST'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s 6 -l ipv6 -d 'Only IPv6 addresses of HOST (`[::1]` or `::1` work as HOST too)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l probe -d 'Latency under load: probes (a kept TCP connection, UDP datagrams, a new TCP connection each) measure round trips alone for --probe-idle, beside the load, and alone again after it; reports added latency, responsiveness (RPM), fairness and each flow over time. Stream tests'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l no-store -d 'Do not store this test in the results store (by default every test is stored as a run of one point, so `runs`, `report` and `compare` work on it)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l rrul -d 'Realtime response under load (flent\'s RRUL): tcp-stream both ways with -P 4 (unless -P is given), --probe, 2 s warm-up (unless -O is given)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s N -l nodelay -d 'Disable Nagle\'s algorithm (always on for RR tests)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l mptcp -d 'Multipath TCP: each stream\'s (or request/response flow\'s) connection is the kernel\'s MPTCP, over the subflows its path manager opens (`ip mptcp endpoint`); each subflow\'s path and share are reported'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l no-gso -d 'UDP with --io batch: sendmmsg and recvmmsg of 64 without GSO/GRO, so every datagram crosses as a packet of its own (on loopback and veth a GSO super-datagram never does)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l tls-resume -d 'tls-crr, quic-crr: resume the flow\'s earlier TLS sessions (tickets, session IDs) instead of a full handshake on every connection'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s R -l reverse -d 'The server sends'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l bidir -d 'Both directions at once, on separate connections'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s J -l json -d 'One JSON document (see docs/JSON.md); iperf3\'s -J'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l jsonl -d 'JSON Lines: interval records as they happen, then a summary record'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l json-stream -d 'JSON lines as iperf3 3.17\'s --json-stream writes them: one object a line, `{"event": "start" | "interval" | "end", "data": ...}`'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s Z -l zerocopy -d 'Send with zero copy, as iperf3\'s -Z: the senders use sendfile (the same as --tx-io sendfile; --tx-io zerocopy is MSG_ZEROCOPY)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l verify -d 'Check every received byte against the pattern the sender writes'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -l no-cpu-breakdown -d 'The same as --cpu-breakdown off'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand client" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand keygen" -l out -d 'Where to write the key (created with mode 600; never overwritten)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand keygen" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand keygen" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand keygen" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand keygen" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand caps" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand caps" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand caps" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand caps" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s p -l port -d 'Server control port [default: 5300; 5201 with --peer iperf3]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l tests -d 'Tests: tcp-stream,udp-stream,tcp-rr,udp-rr,tcp-crr, and the encrypted ones: tls-stream,tls-rr,tls-crr,quic-stream,quic-rr,quic-crr' -r -f -a "tcp-stream\t''
udp-stream\t''
tcp-rr\t''
udp-rr\t''
tcp-crr\t''
tls-stream\t''
quic-stream\t''
tls-crr\t''
tls-rr\t''
quic-rr\t''
quic-crr\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l directions -d 'Directions: out,in,bidir' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l sizes -d 'Message sizes: 64,256,1K..64K (x2 steps), 1K..1M*4, 1K..8K+1K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l windows -d 'Windows: default,64K,256K' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l parallel -d 'Parallel streams: 1,2,4' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l io -d 'I/O strategies to compare: copy,batch,zerocopy,uring,auto (see `netsonde caps`)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l pacing -d 'Pacing per stream, an axis on any path: 100M,1G,0 (0: unpaced; stream tests)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l repeat -d 'Repetitions per point' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s t -l time -d 'Measured time per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l warmup -d 'Warm-up per repetition' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l seed -d 'Seed of the randomised run order' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l line-rate -d 'Line rate for efficiency figures: 10G' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l label -d 'A label for `runs list`' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l mtus -d 'Lab link axis (inside `netsonde lab run`): MTUs, 1500,9000,65535' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l rates -d 'Lab link axis: rates, 100M,1G (0 is unlimited)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l delays -d 'Lab link axis: one-way delays each way, 0,10ms,100ms' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l losses -d 'Lab link axis: random losses each way, 0,1% (Gilbert-Elliott in a file)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l queues -d 'Lab link axis: bottleneck queues each way, 10p,1000p (packets), 64K (bytes) or 5ms,50ms (time at the rate)' -r -f
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l offloads -d 'Lab link axis: segmentation and receive offloads (TSO/GSO and GRO on the veth link): off,on' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l resume -d 'Finish an interrupted run (number or `latest`)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l out -d 'Report folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l engine -d 'Measurement engine: `real`, or `fake` (scripted, deterministic; for tests)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l auth-key -d 'Authenticate with this pre-shared key' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l fake-delay-ms -d 'Delay per fake repetition in milliseconds (tests)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l fake-scale -d 'Fake engine speed factor (tests: 0.8 is a 20% regression)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l samples -d 'Each point over time: every TCP sender\'s TCP_INFO read each sample period, and the report a page per point (point-N.html) with each flow\'s goodput, RTT, cwnd and retransmissions over time'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l no-report -d 'Do not write a report'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s q -l quiet -d 'End with only where the report and the run are, not the summary of every point'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -l json -d 'End with the summary as one JSON document on standard output (the progress and the report\'s path go to standard error)'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand sweep" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l out -d 'Report folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l engine -d 'Measurement engine: `real`, or `fake` (scripted, deterministic; for tests)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l auth-key -d 'Authenticate with this pre-shared key' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l fake-delay-ms -d 'Delay per fake repetition in milliseconds (tests)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l fake-scale -d 'Fake engine speed factor (tests: 0.8 is a 20% regression)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l no-report -d 'Do not write a report'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -s q -l quiet -d 'End with only where the report and the run are, not the summary of every point'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -l json -d 'End with the summary as one JSON document on standard output (the progress and the report\'s path go to standard error)'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand run" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s p -l port -d 'Server control port' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l test -d 'What to search: `udp`, the highest rate of datagrams with no loss; or `tcp`, the highest paced rate of one TCP connection with no retransmission (messages sent one segment each, TCP_NODELAY)' -r -f -a "udp\t'UDP datagrams: loss is datagrams that never arrived'
tcp\t'One TCP connection: loss is retransmitted segments'"
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l frames -d 'Ethernet frame sizes in bytes (MAC header and FCS included, as RFC 2544 counts them); the UDP payload is the frame less 46 B, a TCP segment\'s the frame less 70 B [default: 64,128,256,512,1024,1280,1518; for tcp from 128]' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l io -d 'I/O strategies to search, each on its own: copy,batch,uring,xdp,... (both ends; a strategy that only receives, xdp, sends with copy)' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l tx-io -d 'One sender for every point, so the receivers of --io are compared behind it: `--tx-io batch --io copy,xdp`' -r -f -a "copy\t''
epoll\t''
batch\t''
zerocopy\t''
sendfile\t''
splice\t''
uring\t''
busypoll\t''
auto\t''
xdp\t''"
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l trial -d 'Measured time of one trial' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l warmup -d 'Warm-up before each trial\'s measured time (its traffic is not counted)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s w -l window -d 'Socket buffers of both ends (the kernel caps them at net.core.rmem_max and wmem_max): the tester\'s own receive buffer should not be what loses the packets when its thread is late by a millisecond. `default` leaves the kernel\'s (about 200 KB: a third of a millisecond of 1518 B frames at 10 Gbit/s)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l precision -d 'The bounds\' width, relative to the rate, at which a rate counts as found' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l pdr-loss -d 'PDR\'s loss ratio: the highest rate losing at most this share' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l final-trials -d 'Trials at the NDR found that must lose nothing' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l max-trials -d 'At most this many trials per frame size and strategy (and as many bursts with --back-to-back)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l repeat -d 'Search each frame size and strategy this many times, one search after another: one search\'s rate moves between runs (on loopback by 10% and more), so `compare` judges two searches by their repeats (5 a side let it judge a table of 7 sizes)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l label -d 'A label for the stored run' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l resume -d 'Go on with a stored search that was interrupted or left incomplete (run id, or `last`): its trials so far are kept and its searches pick up from them' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l out -d 'Report folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l engine -d 'Measurement engine: `real`, or `fake` (scripted, deterministic; for tests)' -r -f -a "real\t'Real tests, over sockets'
fake\t'The scripted engine\'s reports at once, no traffic'"
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l auth-key -d 'Authenticate with this pre-shared key' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l fake-delay-ms -d 'Delay per fake repetition in milliseconds (tests)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l fake-scale -d 'Fake engine speed factor (tests: 0.8 is a 20% regression)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l peer -d 'What the server is: netsonde, or an unmodified `iperf3 -s` (stream tests with whole-second times; other points are skipped with why), so a fleet with only iperf3 installed can be characterised' -r -f -a "netsonde\t'`netsonde server`'
iperf3\t'An unmodified `iperf3 -s`'
quic-perf\t'Another QUIC stack\'s perf server (draft-banks-quic-performance), for -T quic-stream and quic-rr: this end measured as always, the server\'s side what the protocol confirms'"
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l back-to-back -d 'Also find the longest burst at the sender\'s full rate that loses nothing (RFC 2544 §26.4 back-to-back frames), after NDR and PDR'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l latency -d 'Also measure latency beside a load at 10, 50, 90 and 100% of the NDR found (RFC 2544 §26.2): UDP probes echoed by the server, 100 a second, alone for 0.5 s and then beside at least 2 s of the load; round-trip percentiles and the one-way delay on one clock'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l no-report -d 'Do not write a report'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s q -l quiet -d 'End with only where the report and the run are, not the summary of every point'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -l json -d 'End with the summary as one JSON document on standard output (the progress and the report\'s path go to standard error)'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand search" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -f -a "list" -d 'One line per run, newest first'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -f -a "show" -d 'A run\'s summary: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -f -a "export" -d 'A run\'s points and statistics as CSV or JSON'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -f -a "delete" -d 'Delete a run and everything recorded for it'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and not __fish_seen_subcommand_from list show export delete help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -l full -d 'Every table of the report, as Markdown'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -l json -d 'The summary as one JSON document'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from show" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -l csv -d 'CSV, one row per point and metric'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -l json -d 'JSON: the analysed run'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from export" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from delete" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "list" -d 'One line per run, newest first'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "show" -d 'A run\'s summary: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "export" -d 'A run\'s points and statistics as CSV or JSON'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete a run and everything recorded for it'
complete -c netsonde -n "__fish_netsonde_using_subcommand runs; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -l threshold -l min-change -d 'Raise every metric\'s smallest relative change that counts to at least this (5% or 0.05). Without it each kind of metric has its own: throughput and median latency 5%, CPU 10%, tail latency 20% (docs/EXPERIMENTS.md)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand compare" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -l out -d 'Output folder (default netsonde-report-RUN)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -l format -d 'Format' -r -f -a "html\t'One self-contained HTML file, plus the SVG plots beside it'
md\t'Markdown tables'"
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c netsonde -n "__fish_netsonde_using_subcommand report" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l out -d 'Output folder for the report and its figures (default study-NAME; for `all`, one folder per study under it, default studies/)' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l db -d 'Results database: a SQLite file (default: the platform data directory, netsonde/netsonde.db) or a shared PostgreSQL database, postgres://USER@HOST:PORT/DB (password from PGPASSWORD; TLS as libpq\'s ?sslmode=, sslrootcert=, sslcert=, sslkey= say). Read from $NETSONDE_DB when not given' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l db-file -d 'Read --db from FILE\'s first line (a mounted secret), so a database URL and its password never sit in the process\'s arguments' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l list -d 'List the studies and their parts'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l quick -d 'Fewer points, one repetition, short trials: under two minutes, for CI'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -s q -l quiet -d 'End with only the findings and where the report is, not each part\'s summary'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -l json -d 'End with each part\'s summary and the findings as one JSON document'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand study" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "run" -d 'Build a lab, run a client or sweep invocation in it against a server in it, and tear it down: `netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "up" -d 'Build a lab with a server in it and leave it running'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "mesh" -d 'Build a cluster (hosts h1..hN on one bridge, each in its own namespace running `netsonde agent`, some pairs slower), run `mesh ...` from the bridge against every host, and tear it down: `netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "down" -d 'Tear down a lab made by `lab up`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "clean" -d 'Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by `lab up`. Never touches anything a lab did not make'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "list" -d 'List labs'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "emulate" -d 'Run the userspace emulator of a `lab up` lab (started by `lab up`)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and not __fish_seen_subcommand_from run up mesh down clean list emulate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l mtu -d 'MTU of the link\'s interfaces, 68 to 65535' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l rate -d 'Line rate (decimal, 38 B of Ethernet framing per packet): 100M, 1G' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l delay -d 'One-way delay: 10ms' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l jitter -d 'Uniform jitter around the delay (does not reorder): 1ms' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l loss -d 'Loss: 1% (random) or gemodel:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and GOOD optional, default 100% and 0%)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l reorder -d 'Share of packets sent ahead of the delay (reordered): 5%' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l duplicate -d 'Share of packets delivered twice: 1%' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l queue -d 'Bottleneck queue: 100p (packets) or bytes (256K). Default 50 ms at the rate' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l shaper -d 'Rate limiter on veth links: tbf or htb' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l mechanism -d 'auto (veth; netem or the userspace emulator for impairments), kernel, or emulator' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l seed -d 'Seed of the emulator\'s random source (loss, reordering, duplication, jitter)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l second-path -d 'A second path between the hosts at this rate (10.77.1.0/30, a veth pair of its own, the first path\'s MTU, no impairments), for `--mptcp` to add to the first: 50M, or UP/DOWN' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l offloads -d 'Segmentation and receive offloads (TSO and GSO where a direction sends, GRO where it receives; veth links): on (the default) or off, every packet then through the stack alone; or UP/DOWN' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l name -d 'Lab name (namespaces sonde-NAME-cli and sonde-NAME-srv); default rPID' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l stats -d 'Write the userspace emulator\'s counters (packets, drops, delivery error percentiles per direction) to this file as JSON at the end' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from run" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l mtu -d 'MTU of the link\'s interfaces, 68 to 65535' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l rate -d 'Line rate (decimal, 38 B of Ethernet framing per packet): 100M, 1G' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l delay -d 'One-way delay: 10ms' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l jitter -d 'Uniform jitter around the delay (does not reorder): 1ms' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l loss -d 'Loss: 1% (random) or gemodel:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and GOOD optional, default 100% and 0%)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l reorder -d 'Share of packets sent ahead of the delay (reordered): 5%' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l duplicate -d 'Share of packets delivered twice: 1%' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l queue -d 'Bottleneck queue: 100p (packets) or bytes (256K). Default 50 ms at the rate' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l shaper -d 'Rate limiter on veth links: tbf or htb' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l mechanism -d 'auto (veth; netem or the userspace emulator for impairments), kernel, or emulator' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l seed -d 'Seed of the emulator\'s random source (loss, reordering, duplication, jitter)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l second-path -d 'A second path between the hosts at this rate (10.77.1.0/30, a veth pair of its own, the first path\'s MTU, no impairments), for `--mptcp` to add to the first: 50M, or UP/DOWN' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l offloads -d 'Segmentation and receive offloads (TSO and GSO where a direction sends, GRO where it receives; veth links): on (the default) or off, every packet then through the stack alone; or UP/DOWN' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l name -d 'Lab name' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -s p -l port -d 'Control port of the server in the lab' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from up" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -l hosts -d 'Hosts, 2 to 64: h1 at 10.78.0.1 ... hN at 10.78.0.N' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -l rate -d 'Every host\'s egress rate, counted as an Ethernet line: 1G (default: unshaped, as fast as the host\'s CPU moves it)' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -l slow -d 'A slower link between two hosts, each way: h2-h4=100M (repeat for more); h2-h4=100M@30s slows it only 30 s after the mesh or monitor starts, so a monitor sees the link get worse between its rounds' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -l name -d 'Lab name (namespaces sonde-NAME-h1 ... and sonde-NAME-br); default mPID' -r
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from mesh" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from down" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from down" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from down" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from down" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from clean" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from clean" -l all -d 'Also remove labs made by `lab up`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from clean" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from clean" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from clean" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from list" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from list" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from list" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from list" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from emulate" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from emulate" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from emulate" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from emulate" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "run" -d 'Build a lab, run a client or sweep invocation in it against a server in it, and tear it down: `netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "up" -d 'Build a lab with a server in it and leave it running'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "mesh" -d 'Build a cluster (hosts h1..hN on one bridge, each in its own namespace running `netsonde agent`, some pairs slower), run `mesh ...` from the bridge against every host, and tear it down: `netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "down" -d 'Tear down a lab made by `lab up`'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "clean" -d 'Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by `lab up`. Never touches anything a lab did not make'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "list" -d 'List labs'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "emulate" -d 'Run the userspace emulator of a `lab up` lab (started by `lab up`)'
complete -c netsonde -n "__fish_netsonde_using_subcommand lab; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand completions" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand completions" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand completions" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand completions" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand man" -l logfile -d 'Append everything this command prints (results and messages alike) to FILE instead of the terminal, as iperf3\'s --logfile' -r -F
complete -c netsonde -n "__fish_netsonde_using_subcommand man" -s v -l verbose -d 'More detail: a test\'s text report adds each end\'s kernel, network sysctls and interface (iperf3\'s -V/--verbose; here -V is --version, as elsewhere)'
complete -c netsonde -n "__fish_netsonde_using_subcommand man" -s h -l help -d 'Print help'
complete -c netsonde -n "__fish_netsonde_using_subcommand man" -s V -l version -d 'Print version'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "server" -d 'Listen for tests (one at a time unless --max-sessions says more; others are told "busy" with the time left). Serves iperf3 clients too, on the same port (`netsonde -s` works as `netsonde server`)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "agent" -d 'A server that also takes jobs from a controller (`netsonde mesh`): it runs the tests it is asked for as a client against other agents and sends back the reports. Needs --auth-key: only a holder of the key may direct it'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "mesh" -d 'Measure between many hosts, each running `netsonde agent`: every ordered pair of a pattern (all-to-all, ring, star, listed pairs) runs the sweep\'s tests, one pair at a time, stored as one run whose points are (source, destination, test...); prints the matrix of pairs'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "monitor" -d 'Watch a mesh over time: its tests round after round on a schedule (with random jitter, an overrunning round\'s slot skipped), each round stored; every pair judged against its own normal (its past rounds): ok, learning, degraded or failed. Serves each pair\'s state on --metrics'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "dashboard" -d 'A read-only web page over the store: each monitor\'s grid of pairs coloured by state, a pair\'s history with its baseline band, the runs with their reports, and `compare` of two. Binds 127.0.0.1 by default'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "client" -d 'Run one test against a server, or against an embedded loopback server when no HOST is given'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "keygen" -d 'Write a new random pre-shared key for --auth-key'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "caps" -d 'Which I/O strategies this host supports, probed on real sockets'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "sweep" -d 'Characterize: a grid of tests over sizes, windows, directions and streams, with repetitions, stored and reported. With no arguments, a short characterization of this host\'s stack on loopback'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "run" -d 'Run a sweep described by an experiment file (TOML, see docs/EXPERIMENTS.md)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "search" -d 'Loss-free rate search (RFC 2544 throughput): per UDP frame size and I/O strategy, the highest offered rate with no loss (NDR) and with loss at or below a ratio (PDR)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "runs" -d 'Browse stored runs'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "compare" -d 'Compare two runs point by point; exits 3 when RUN_B regressed beyond noise'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "report" -d 'Write a run\'s report (HTML with plots, or Markdown) from the store'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "study" -d 'Rerun a reference study (000 oc48c, 001 dsnic, 002 hp-atm, 003 kisti-lfn, 004 copy-semantics): its sweeps, in the lab where it needs a link, stored; then a report that sets the seed\'s published figures beside today\'s and decides each of its findings from the data'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "lab" -d 'Emulated paths on this host: namespaces joined by a link with MTU, rate, delay, jitter, loss and reordering (root)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "completions" -d 'Print a shell completion script: netsonde completions bash > /usr/share/bash-completion/completions/netsonde (zsh, fish likewise)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "man" -d 'Write the man pages (netsonde.1 and one per command) into DIR'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and not __fish_seen_subcommand_from server agent mesh monitor dashboard client keygen caps sweep run search runs compare report study lab completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "list" -d 'One line per run, newest first'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "show" -d 'A run\'s summary: one line per point (figures, CPU, verdict), the warnings, as a sweep ends with it; --full for every table (Markdown)'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "export" -d 'A run\'s points and statistics as CSV or JSON'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from runs" -f -a "delete" -d 'Delete a run and everything recorded for it'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "run" -d 'Build a lab, run a client or sweep invocation in it against a server in it, and tear it down: `netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr`'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "up" -d 'Build a lab with a server in it and leave it running'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "mesh" -d 'Build a cluster (hosts h1..hN on one bridge, each in its own namespace running `netsonde agent`, some pairs slower), run `mesh ...` from the bridge against every host, and tear it down: `netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3`'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "down" -d 'Tear down a lab made by `lab up`'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "clean" -d 'Remove what killed lab runs left (namespaces, processes, state); with --all, also every lab made by `lab up`. Never touches anything a lab did not make'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "list" -d 'List labs'
complete -c netsonde -n "__fish_netsonde_using_subcommand help; and __fish_seen_subcommand_from lab" -f -a "emulate" -d 'Run the userspace emulator of a `lab up` lab (started by `lab up`)'
