//! `netsonde server`: its limits and deadlines from the arguments, iperf3
//! clients' sessions stored by a thread of their own, and a drain on SIGTERM or
//! Ctrl-C.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use netsonde_driver::agent;
use netsonde_driver::policy::{Limits, LogFormat};
use netsonde_driver::server::{Server, ServerConfig};
use netsonde_store::Location;

use netsonde_args::{self as args, ServerArgs};

/// The server's configuration from its arguments, its limits validated.
fn config(a: &ServerArgs) -> anyhow::Result<ServerConfig> {
    let mut cfg = ServerConfig::new(SocketAddr::new(a.bind, a.port));
    cfg.iperf3_fast_receiver = a.iperf3_fast_receiver;
    cfg.auth_key = crate::keys::load_opt(a.auth_key.as_deref())?;
    cfg.log = match a.log_format {
        args::LogFormatArg::Text => LogFormat::Text,
        args::LogFormatArg::Json => LogFormat::Json,
    };
    let defaults = Limits::default();
    let session_memory = a.max_session_memory.unwrap_or(defaults.max_session_memory);
    cfg.limits = Limits {
        max_duration: a.max_duration,
        max_parallel: a.max_parallel,
        max_size: a.max_size,
        max_rate: a.max_rate,
        max_tests: a.max_tests,
        max_connections: a.max_connections,
        max_per_address: a.max_per_address,
        max_session_memory: session_memory,
        max_memory: a.max_memory.unwrap_or_else(|| {
            let tests = a.max_tests.max(1) as u64;
            netsonde_model::units::Bytes(
                (session_memory.0.saturating_mul(tests))
                    .min(netsonde_driver::budget::default_memory().0)
                    .max(session_memory.0),
            )
        }),
        // The metrics endpoint's connections and its listener.
        other_fds: if a.metrics.is_some() {
            netsonde_serve::MAX_CONNECTIONS + 1
        } else {
            0
        },
    };
    if let Some(t) = a.phase_timeout {
        cfg.deadlines.hello = t;
        cfg.deadlines.setup = t;
        cfg.deadlines.connect = t;
        cfg.deadlines.done = t;
    }
    cfg.limits
        .validate()
        .map_err(|e| args::UsageError(e.to_string()))?;
    if a.phase_timeout.is_some_and(|t| t.0 == 0) {
        return Err(args::UsageError("--phase-timeout must be above 0".into()).into());
    }
    Ok(cfg)
}

/// This host's name in metrics: the address it listens on, or its host name
/// when it listens on every address.
/// With its port, so agents that share an address (one host, a NAT) are told
/// apart, as their targets are (`HOST:PORT`).
fn own_name(bind: std::net::IpAddr, port: u16) -> String {
    let host = if bind.is_unspecified() {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".into())
    } else {
        bind.to_string()
    };
    format!("{host}:{port}")
}

/// What the QUIC perf server has answered so far.
fn perf_counts(t: &netsonde_quic::PerfTotals) -> netsonde_model::health::QuicPerfCounts {
    let n = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    netsonde_model::health::QuicPerfCounts {
        connections: n(&t.connections),
        refused: n(&t.refused),
        requests: n(&t.requests),
        read_bytes: n(&t.read),
        sent_bytes: n(&t.sent),
    }
}

/// The QUIC perf server beside the netsonde server (`--quic-perf PORT`), on
/// a thread of its own until `stop`.
fn quic_perf(
    a: &ServerArgs,
    port: u16,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<(std::thread::JoinHandle<()>, Arc<netsonde_quic::PerfTotals>)> {
    if a.auth_key.is_some() {
        return Err(args::UsageError(
            "--quic-perf answers any client (the perf protocol has no authentication): \
             not with --auth-key"
                .into(),
        )
        .into());
    }
    let addr = std::net::SocketAddr::new(a.bind, port);
    let sock = std::net::UdpSocket::bind(addr).with_context(|| format!("--quic-perf {addr}"))?;
    let bound = sock.local_addr()?;
    let limits = netsonde_quic::PerfLimits {
        connections: 16,
        answer: std::time::Duration::from_nanos(a.max_duration.0),
    };
    let totals = Arc::new(netsonde_quic::PerfTotals::default());
    let t = totals.clone();
    let thread = std::thread::Builder::new()
        .name("quic-perf".into())
        .spawn(move || {
            let far = std::time::Instant::now() + std::time::Duration::from_secs(10 * 365 * 86_400);
            if let Err(e) = netsonde_quic::perf_serve(sock, far, &stop, limits, t) {
                eprintln!("netsonde: QUIC perf server: {e}");
            }
        })?;
    eprintln!(
        "netsonde: QUIC perf server on udp {bound} (draft-banks-quic-performance, ALPN perf; any \
         client, at most {} connections)",
        limits.connections
    );
    Ok((thread, totals))
}

/// Serves until told to stop; an agent (`jobs`: how it measures them) also
/// takes jobs from a controller that holds its key.
pub fn run(a: ServerArgs, jobs: Option<(agent::Measure, agent::Targets)>) -> anyhow::Result<()> {
    let mut cfg = config(&a)?;
    if jobs.is_some() && cfg.auth_key.is_none() {
        return Err(args::UsageError(
            "an agent runs tests on a controller's word: it needs --auth-key FILE (the \
             controller's and every other agent's key; make one with `netsonde keygen`)"
                .into(),
        )
        .into());
    }
    let results = Arc::new(netsonde_run::agents::LastResults::default());
    let on_report = a
        .metrics
        .map(|_| netsonde_run::agents::keep_job_results(results.clone(), own_name(a.bind, a.port)));
    let is_agent = jobs.is_some();
    // Said after the listening line, which scripts wait for first.
    let targets = jobs.as_ref().map(|(_, allow)| match allow {
        None => "any (restrict them with --allow-targets)".to_string(),
        Some(nets) => nets
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    });
    cfg.jobs = jobs.map(|(measure, allow)| agent::handler(on_report, measure, allow));
    let bind = cfg.bind;
    let storer = if a.no_store {
        None
    } else {
        let db = a.store.db.clone().unwrap_or_else(Location::default_file);
        let (sink, stored_all) =
            netsonde_run::sessions::iperf3_storer(db, bind.port(), crate::command_line());
        cfg.iperf3_sessions = Some(sink);
        Some(stored_all)
    };
    let server = Server::bind(cfg)?;
    eprintln!(
        "netsonde {} listening on {} (protocol {}, {}, at most {} test(s) at once)",
        if is_agent { "agent" } else { "server" },
        server.local_addr(),
        netsonde_proto::PROTOCOL_VERSION,
        if a.auth_key.is_some() {
            "authenticated"
        } else {
            "unauthenticated"
        },
        a.max_tests
    );
    if let Some(t) = targets {
        eprintln!("netsonde: agent targets: {t}");
    }
    // SIGTERM or Ctrl-C: stop accepting, let running tests finish, exit 0.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let perf = match a.quic_perf {
        Some(port) => Some(quic_perf(&a, port, stop.clone())?),
        None => None,
    };
    if let Some(addr) = a.metrics {
        let health = server.health();
        let perf_totals = perf.as_ref().map(|(_, t)| t.clone());
        let render = Arc::new(move || {
            let mut h = health();
            h.quic_perf = perf_totals.as_deref().map(perf_counts);
            netsonde_report::openmetrics::render(Some(&h), &results.all())
        });
        let bound = netsonde_serve::serve_metrics(addr, render)?;
        eprintln!("netsonde: metrics on http://{bound}/metrics");
    }
    server.run(stop.clone())?;
    if let Some((thread, totals)) = perf {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = thread.join();
        let c = perf_counts(&totals);
        eprintln!(
            "netsonde: QUIC perf: {} connections ({} refused), {} requests, {} B read, {} B sent",
            c.connections, c.refused, c.requests, c.read_bytes, c.sent_bytes
        );
    }
    // The server and its sink are gone: the storer ends once it has
    // stored what waits (bounded, should a session still hold the sink).
    if let Some(stored_all) = storer {
        let _ = stored_all.recv_timeout(std::time::Duration::from_secs(10));
    }
    eprintln!("netsonde server: drained, exiting");
    Ok(())
}
