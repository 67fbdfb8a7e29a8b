//! The human summary. Sections appear only when they have content: intervals,
//! stream directions, request/response latency, per-stream `TCP_INFO`, CPU on both
//! ends (with per-core detail), granted socket buffers and warnings.

use std::fmt::Write;

use netsonde_model::cpu::CpuReport;
use netsonde_model::result::{SideCost, SideResult, TestReport};
use netsonde_model::units::{BitRate, RateUnit};

/// How a text report is written (the client's `--verbose`, `-f`, `--title`).
#[derive(Debug, Clone, Default)]
pub struct TextOptions {
    /// Add each end's kernel, sysctls and host ([`render_verbose`]).
    pub verbose: bool,
    /// Rates in this unit rather than the one that suits each (iperf3's `-f`).
    pub rate_unit: Option<RateUnit>,
    /// Begin every line with this and a colon (iperf3's `--title`).
    pub title: Option<String>,
    /// The terminal's width, which prose is wrapped to (0: 80 columns, as
    /// off a terminal).
    pub width: usize,
}

impl TextOptions {
    /// The width text is fitted to: the terminal's, or 80 columns.
    pub fn columns(&self) -> usize {
        match self.width {
            0 => crate::summary::WIDTH,
            w => w.max(40),
        }
    }

    /// `b` in the chosen unit.
    pub fn rate(&self, b: BitRate) -> String {
        self.rate_unit
            .map_or_else(|| b.to_string(), |u| u.format(b.0))
    }

    /// `text` with the title before each line, if there is one.
    pub fn titled(&self, text: &str) -> String {
        match &self.title {
            None => text.to_string(),
            Some(t) => text.lines().map(|l| format!("{t}:  {l}\n")).collect(),
        }
    }
}

/// The report written as `opts` say.
pub fn render_with(r: &TestReport, opts: &TextOptions) -> String {
    let mut o = body(r, opts);
    if opts.verbose {
        facts(&mut o, r);
    }
    opts.titled(&crate::layout::prose_fitted(&o, opts.columns()))
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

/// [`render`], and the facts behind the figures (`--verbose`): each end's
/// kernel, network sysctls and interface.
pub fn render_verbose(r: &TestReport) -> String {
    render_with(
        r,
        &TextOptions {
            verbose: true,
            ..TextOptions::default()
        },
    )
}

/// Each end's kernel, network sysctls and host.
fn facts(o: &mut String, r: &TestReport) {
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        let h = &side.host;
        if h.kernel.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "{name} host: {} kernel {} {} cores {}",
            h.hostname, h.kernel, h.cores, h.cpu_model
        );
        for (k, v) in &h.sysctls {
            let _ = writeln!(o, "  {k} = {v}");
        }
    }
}

/// Renders the report for a terminal (80 columns).
pub fn render(r: &TestReport) -> String {
    render_with(r, &TextOptions::default())
}

fn body(r: &TestReport, opts: &TextOptions) -> String {
    let mut o = String::new();
    header(&mut o, r, opts);
    intervals(&mut o, r, opts);
    directions(&mut o, r, opts);
    transactions(&mut o, r, opts);
    cpu(&mut o, r, opts);
    threads(&mut o, r, opts);
    verdict(&mut o, r, opts);
    o
}

/// `fields` two spaces apart, a new line where the next would pass `width`.
fn fields_lines(o: &mut String, fields: &[String], width: usize) {
    let mut line = String::new();
    for f in fields.iter().filter(|f| !f.is_empty()) {
        let len = |s: &str| s.chars().count();
        if !line.is_empty() && len(&line) + 2 + len(f) > width {
            let _ = writeln!(o, "{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push_str("  ");
        }
        line.push_str(f);
    }
    let _ = writeln!(o, "{line}");
}

/// The test, its settings and both hosts.
fn header(o: &mut String, r: &TestReport, opts: &TextOptions) {
    let s = &r.spec;
    let size = if s.test.is_rr() {
        format!("request {}  response {}", s.request_size, s.response_size)
    } else {
        format!("size {}", s.size)
    };
    let end = match s.volume {
        Some(v) => format!("bytes {v} each way (time cap {})", s.duration),
        None => format!("time {}", s.duration),
    };
    let fields = [
        format!("netsonde {}", r.tool_version),
        format!("{} {}", s.test, s.direction),
        size,
        format!("parallel {}", s.parallel),
        end,
        format!(
            "warmup {}",
            if s.warmup.0 == 0 {
                "none".to_string()
            } else {
                s.warmup.to_string()
            }
        ),
    ];
    let width = if opts.width == 0 {
        crate::summary::WIDTH
    } else {
        opts.width
    };
    fields_lines(o, &fields, width);
    let h = &r.server.host;
    match &r.peer {
        // A peer that reports nothing of itself (a QUIC perf server).
        None if h.kernel.is_empty() => {
            let _ = writeln!(o, "server {}", r.server_address);
        }
        None => {
            // A five-digit port and a long CPU model passed 80 columns on
            // one line.
            let server = [
                format!("server {}", r.server_address),
                format!("kernel {}", h.kernel),
                format!("{} cores", h.cores),
                h.cpu_model.clone(),
            ];
            fields_lines(o, &server, width);
        }
        Some(p) => {
            let _ = writeln!(
                o,
                "server {}: its per-stream figures are its own report; its CPU, by its \
                 own count over its whole test: {:.1}% of one core ({:.1}% user, {:.1}% \
                 system){}{}",
                r.server_address,
                p.cpu_util_total,
                p.cpu_util_user,
                p.cpu_util_system,
                p.retransmits
                    .map(|n| format!("; {n} retransmissions"))
                    .unwrap_or_default(),
                p.congestion
                    .as_deref()
                    .map(|c| format!("; congestion control {c}"))
                    .unwrap_or_default(),
            );
            // Which receiver this end used: the figures of -R and --bidir
            // depend on it.
            let _ = writeln!(
                o,
                "this end reads {}",
                if r.spec.iperf3_io {
                    "as iperf3 does (one message per read, woken per segment); \
                     --iperf3-fast-receiver reads with netsonde's receiver"
                } else {
                    "with netsonde's receiver (up to 1 MiB per read, woken per ~1 ms of data), \
                     not as iperf3 does (--iperf3-fast-receiver)"
                }
            );
        }
    }
}

/// Each interval's rate.
fn intervals(o: &mut String, r: &TestReport, opts: &TextOptions) {
    if !r.intervals.is_empty() {
        let mut rows = vec![["interval", "direction", "bytes", "rate", "msgs", "trans"]
            .map(String::from)
            .to_vec()];
        for i in &r.intervals {
            rows.push(vec![
                format!("{:.2}-{:.2} s", i.start.as_secs_f64(), i.end.as_secs_f64()),
                i.dir.name().to_string(),
                i.bytes.to_string(),
                opts.rate(i.rate),
                i.messages.to_string(),
                i.transactions.to_string(),
            ]);
        }
        o.push('\n');
        o.push_str(&crate::layout::table(&rows, 2, &[0, 1], opts.columns()));
        let mut any = false;
        for i in r.intervals.iter().filter(|i| i.subflows.is_some()) {
            if !any {
                o.push_str("\nsubflows per interval:\n");
                any = true;
            }
            let line = format!(
                "  {:.2}-{:.2} s {}",
                i.start.as_secs_f64(),
                i.end.as_secs_f64(),
                i.dir.name()
            );
            let _ = writeln!(
                o,
                "{}",
                crate::text_mptcp::with_subflows(i, |b| opts.rate(b), line)
            );
        }
    }
    crate::text_mptcp::events(o, r);
}

/// Each direction's totals.
fn directions(o: &mut String, r: &TestReport, opts: &TextOptions) {
    if !r.directions.is_empty() {
        let mut rows = vec![[
            "direction",
            "goodput",
            "measured",
            "msgs/s",
            "retrans",
            "sent (B)",
            "received (B)",
        ]
        .map(String::from)
        .to_vec()];
        for d in &r.directions {
            rows.push(vec![
                d.dir.name().to_string(),
                opts.rate(d.goodput),
                d.bytes.to_string(),
                format!("{:.0}", d.messages_per_sec),
                d.retransmits
                    .map(|x| x.to_string())
                    .unwrap_or_else(|| "-".into()),
                d.sender_bytes_total.0.to_string(),
                d.receiver_bytes_total.0.to_string(),
            ]);
            if let (Some(u), Some(sent)) = (&d.udp, d.datagrams_sent_measured) {
                let counted = if u.by_sequence {
                    "received and lost by sequence number over the test, as iperf3 counts"
                } else {
                    "measured interval"
                };
                // GSO and GRO hand the stack one buffer for many datagrams: the
                // rate is of datagrams, which on loopback never crossed as packets.
                let coalesced = r
                    .client
                    .flows
                    .iter()
                    .chain(&r.server.flows)
                    .filter_map(|f| f.io.as_ref())
                    .filter_map(|io| io.note.as_deref())
                    .any(|n| n.contains("GSO") || n.contains("GRO"));
                let per_sec = if coalesced {
                    "datagrams/s (GSO/GRO: counted as datagrams; the stack moved them as fewer, larger packets, which on loopback and veth never became wire packets)"
                } else {
                    "datagrams/s"
                };
                rows.push(vec![format!(
                    "  datagrams sent {sent}, received {}, lost {} ({}), duplicate {}, reordered {} (late arrivals, RFC 4737), jitter {}, {:.0} {per_sec} ({counted}; whole test: sent {}, received {})",
                    u.packets,
                    u.lost,
                    d.loss.unwrap_or_default(),
                    u.duplicates,
                    u.reordered,
                    u.jitter,
                    d.packets_per_sec.unwrap_or(0.0),
                    d.datagrams_sent.unwrap_or(0),
                    u.packets_total
                )]);
            }
        }
        if r.directions.len() == 2 {
            let total: f64 = r.directions.iter().map(|d| d.goodput.bps()).sum();
            rows.push(vec!["sum".into(), opts.rate(BitRate(total))]);
        }
        o.push('\n');
        o.push_str(&crate::layout::table(&rows, 1, &[0], opts.columns()));
    }
}

/// Request/response: transactions and latency.
fn transactions(o: &mut String, r: &TestReport, opts: &TextOptions) {
    if let Some(rr) = &r.rr {
        let l = &rr.latency;
        let _ = writeln!(
            o,
            "\ntransactions {} ({:.1}/s)  client total {}  server total {}",
            rr.transactions,
            rr.transactions_per_sec,
            rr.client_transactions_total,
            rr.server_transactions_total
        );
        let _ = writeln!(
            o,
            "latency: min {}, mean {}, p50 {}, p90 {}, p99 {}, p99.9 {}, max {} (stddev {})",
            l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max, l.stddev
        );
    }
    tcp_info(o, "client", &r.client, opts);
    tcp_info(o, "server", &r.server, opts);
    crate::text_mptcp::subflows(o, "client", &r.client);
    crate::text_mptcp::subflows(o, "server", &r.server);
}

/// Both ends' CPU.
fn cpu(o: &mut String, r: &TestReport, opts: &TextOptions) {
    let mut rows = vec![[
        "cpu",
        "busy",
        "test",
        "foreign",
        "user",
        "sys",
        "irq",
        "softirq",
        "idle",
        "process",
        "ctxsw v/i",
        "us/KiB",
        "us/trans",
        "msgs/call",
        "ctxsw/MB",
    ]
    .map(String::from)
    .to_vec()];
    rows.push(cpu_row(
        "client",
        r.client.cpu.as_ref(),
        r.client_cost.as_ref(),
    ));
    match &r.peer {
        None if r.server.cpu.is_none() && r.server.host.kernel.is_empty() => {
            rows.push(vec![
                "server  (no figures: the peer reports none of its own)".into(),
            ]);
        }
        None => rows.push(cpu_row(
            "server",
            r.server.cpu.as_ref(),
            r.server_cost.as_ref(),
        )),
        Some(p) => rows.push(vec![format!(
            "server  ({}: no per-core figures; its own CPU count is on the server line)",
            p.tool
        )]),
    }
    o.push('\n');
    o.push_str(&crate::layout::table(&rows, 1, &[0], opts.columns()));
    let system: Vec<String> = [("client", &r.client_cost), ("server", &r.server_cost)]
        .into_iter()
        .filter_map(|(name, c)| {
            let c = c.as_ref()?;
            let kib = c.system_us_per_kib.map(|v| format!("{v:.3} us/KiB"));
            let trans = c
                .system_us_per_transaction
                .map(|v| format!("{v:.2} us/trans"));
            let v: Vec<String> = [kib, trans].into_iter().flatten().collect();
            (!v.is_empty()).then(|| format!("{name} {}", v.join(", ")))
        })
        .collect();
    if r.client_cost
        .as_ref()
        .is_some_and(|c| c.test_cores.is_some())
    {
        let _ = writeln!(
            o,
            "  busy: host cores; foreign: other processes'; test: this end's flow threads \
             and the rest of the host's busy time (half each when both ends share the host); \
             us/KiB and us/trans from the test's CPU{}",
            if system.is_empty() {
                String::new()
            } else {
                format!("; system-wide: {}", system.join("; "))
            }
        );
    }
    breakdown(o, r);
    // A container's CPU quota is that end's ceiling: every figure above is
    // under it. (One line per process: an embedded server shares the client's.)
    let one_process = r.client.cpu.as_ref().map(|c| c.pid) == r.server.cpu.as_ref().map(|c| c.pid);
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        if name == "server" && one_process {
            continue;
        }
        if let Some(g) = side
            .cpu
            .as_ref()
            .and_then(|c| c.cgroup.as_ref())
            .filter(|g| g.quota_cores.is_some())
        {
            let _ = writeln!(
                o,
                "  {name} {}: the quota is this end's CPU ceiling",
                g.describe()
            );
        }
    }
}

/// Each end's flow threads, TCP state and socket.
fn threads(o: &mut String, r: &TestReport, _opts: &TextOptions) {
    // Per flow thread: the evidence of a thread-bound verdict.
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        if let Some(c) = side.cpu.as_ref().filter(|c| !c.flow_threads.is_empty()) {
            let per: Vec<String> = c
                .flow_threads
                .iter()
                .map(|t| {
                    let ids: Vec<String> = t.flows.iter().map(u32::to_string).collect();
                    let label = if t.flows.len() == 1 { "flow" } else { "flows" };
                    let share = |n: Option<netsonde_model::units::Nanos>| {
                        n.map(|n| n.0 as f64 / c.elapsed.0.max(1) as f64)
                    };
                    let mut parts = Vec::new();
                    if let (Some(u), Some(s)) = (share(t.user), share(t.sys)) {
                        parts.push(format!("usr {u:.2} sys {s:.2}"));
                    }
                    // TLS's records or QUIC's packets sealed and opened (timed).
                    let crypto = side
                        .flows
                        .iter()
                        .filter(|f| t.flows.contains(&f.id))
                        .filter_map(|f| f.crypto_in_interval())
                        .reduce(|a, b| netsonde_model::units::Nanos(a.0 + b.0))
                        // Never more than the thread ran (a preempted sample).
                        .map(|k| netsonde_model::units::Nanos(k.0.min(t.cpu.0)));
                    if let Some(k) = share(crypto) {
                        parts.push(format!("crypto {k:.2}"));
                    }
                    // Of it, the handshakes' public-key operations, where a
                    // transaction is a connection.
                    let shakes = side
                        .flows
                        .iter()
                        .filter(|f| t.flows.contains(&f.id))
                        .filter_map(|f| f.handshakes_in_interval())
                        .reduce(|a, b| netsonde_model::units::Nanos(a.0 + b.0));
                    if let Some(h) = share(shakes).filter(|h| *h >= 0.005) {
                        parts.push(format!("of it handshakes {h:.2}"));
                    }
                    if let Some(w) = share(t.wait).filter(|w| *w >= 0.005) {
                        parts.push(format!("waited {w:.2}"));
                    }
                    if let Some(core) = t.core {
                        parts.push(format!("last on cpu{core}"));
                    }
                    let detail = if parts.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", parts.join(", "))
                    };
                    format!("{label} {} {:.2}{detail}", ids.join(","), c.cores_of(t))
                })
                .collect();
            let _ = writeln!(o, "  {name} flow threads (cores): {}", per.join("; "));
        }
    }
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        if let Some(c) = &side.cpu {
            let cores: Vec<String> = c
                .cores
                .iter()
                .map(|u| {
                    format!(
                        "cpu{} usr {} sys {} irq {} sirq {} idle {}",
                        u.core.unwrap_or(0),
                        u.user,
                        u.sys,
                        u.irq,
                        u.softirq,
                        u.idle
                    )
                })
                .collect();
            let _ = writeln!(o, "  {name} per core: {}", cores.join(" | "));
        }
    }
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        for f in &side.flows {
            let Some(io) = &f.io else { continue };
            let mut line = format!(
                "{name} io: flow {} {} {}",
                f.id,
                format!("{:?}", f.role).to_lowercase(),
                io.strategy
            );
            if io.zc_sends > 0 {
                line.push_str(&format!(
                    ", zero-copy sends {} completed {} copied {}",
                    io.zc_sends, io.zc_completions, io.zc_copied
                ));
            }
            if let Some(e) = io.verify_errors {
                line.push_str(&format!(", verify: {e} bad bytes"));
            }
            if let Some(k) = io.thread_flows {
                let flows = if k == 1 { "flow" } else { "flows" };
                line.push_str(&format!(", {k} {flows} on its thread"));
            }
            if let Some(n) = &io.note {
                line.push_str(&format!(" ({n})"));
            }
            let _ = writeln!(o, "{line}");
        }
    }
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        if let Some(sf) = &side.socket {
            // Read as the socket opened: without -w a TCP socket's buffers grow
            // from there (a 46 KiB send buffer with 360 KiB in flight is no
            // contradiction), so the line says so.
            let tuned = if r.spec.window.is_none() && sf.mss.is_some() {
                " (as opened; the kernel grows them without -w)"
            } else {
                ""
            };
            let _ = writeln!(
                o,
                "{name} socket: sndbuf {} rcvbuf {}{tuned}{}{}",
                sf.sndbuf,
                sf.rcvbuf,
                sf.mss.map(|m| format!(" mss {m}")).unwrap_or_default(),
                sf.congestion
                    .as_ref()
                    .map(|c| format!(" cc {c}"))
                    .unwrap_or_default()
            );
        }
        if let Some(i) = &side.host.interface {
            let _ = writeln!(o, "{name} interface: {} mtu {}", i.name, i.mtu);
        }
    }
}

/// Warnings, RFC 6349's figures, the load's latency and the verdict.
fn verdict(o: &mut String, r: &TestReport, _opts: &TextOptions) {
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w} (hint: {})", w.hint());
    }
    if let Some(m) = &r.rfc6349 {
        let mut parts = vec![
            format!("baseline RTT {}", m.baseline_rtt),
            format!("mean RTT {}", m.mean_rtt),
            format!("buffer delay {:.1}%", m.buffer_delay_pct),
        ];
        if m.host_queueing {
            parts[2].push_str(&format!(
                " (host queueing: a baseline RTT under {} is the host's own, so this is its \
                 queues, not a path buffer)",
                netsonde_model::result::HOST_RTT
            ));
        } else if m.buffer_delay_pct >= 100.0 {
            parts[2].push_str(&format!(
                " (the mean RTT is {:.1}x the baseline: the bottleneck's queue, a path buffer)",
                m.mean_rtt.0 as f64 / m.baseline_rtt.0.max(1) as f64
            ));
        }
        if let Some(e) = m.tcp_efficiency_pct {
            parts.push(format!("TCP efficiency {e:.3}%"));
        }
        if let (Some(i), Some(t)) = (m.ideal, m.transfer_time_ratio) {
            parts.push(format!("ideal {i}, transfer time ratio {t:.3}"));
            if t < 1.0 {
                parts.push(
                    "(below 1: the goodput passed the computed ceiling; a shaper that charges \
                     its frame overhead once per GSO packet lets up to 1.6% more through)"
                        .into(),
                );
            }
        }
        if let Some(b) = m.bdp {
            parts.push(format!("BDP {b}"));
        }
        let _ = writeln!(o, "RFC 6349: {}", parts.join(", "));
    }
    if let Some(l) = r.load.as_ref().and_then(|l| l.summary.as_ref()) {
        load(o, l);
    }
    if let Some(d) = &r.diagnosis {
        let _ = writeln!(o, "verdict: {}: {}", d.bottleneck, d.evidence);
        if !d.candidates.is_empty() {
            let _ = writeln!(o, "  candidates: {}", d.candidates.join(", "));
        }
        if !d.advice.is_empty() {
            let _ = writeln!(o, "  try: {}", d.advice);
        }
        for c in &d.caveats {
            let _ = writeln!(o, "  caveat: {c}");
        }
    }
}

fn tcp_info(o: &mut String, name: &str, side: &SideResult, opts: &TextOptions) {
    let rows: Vec<_> = side
        .flows
        .iter()
        .filter_map(|f| f.tcp_info.as_ref().map(|t| (f, t)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let mut table = vec![[
        format!("{name} TCP_INFO").as_str(),
        "flow",
        "role",
        "retrans",
        "cwnd",
        "srtt",
        "rttvar",
        "delivery",
        "busy",
        "rwnd-lim",
        "sndbuf-lim",
    ]
    .map(String::from)
    .to_vec()];
    for (f, t) in rows {
        table.push(vec![
            String::new(),
            f.id.to_string(),
            format!("{:?}", f.role).to_lowercase(),
            t.retransmits.to_string(),
            t.cwnd.to_string(),
            t.srtt.to_string(),
            t.rttvar.to_string(),
            opts.rate(t.delivery_rate),
            t.busy.to_string(),
            t.rwnd_limited.to_string(),
            t.sndbuf_limited.to_string(),
        ]);
    }
    o.push('\n');
    o.push_str(&crate::layout::table(&table, 3, &[0, 2], opts.columns()));
}

/// One end's row of the CPU table, or a note when it has no figures.
fn cpu_row(name: &str, cpu: Option<&CpuReport>, cost: Option<&SideCost>) -> Vec<String> {
    let Some(c) = cpu else {
        return vec![format!(
            "{name:<7} (no CPU figures: the test ended before its measured interval)"
        )];
    };
    let t = &c.total;
    let p = &c.process;
    vec![
        name.to_string(),
        format!("{:.2}", c.busy_cores),
        opt(cost.and_then(|c| c.test_cores), 2),
        opt(cost.and_then(|c| c.foreign_cores), 2),
        t.user.to_string(),
        t.sys.to_string(),
        t.irq.to_string(),
        t.softirq.to_string(),
        t.idle.to_string(),
        c.process_percent().to_string(),
        format!("{}/{}", p.voluntary_ctxsw, p.involuntary_ctxsw),
        opt(cost.and_then(|c| c.us_per_kib), 3),
        opt(cost.and_then(|c| c.us_per_transaction), 2),
        opt(cost.and_then(|c| c.messages_per_call), 2),
        opt(cost.and_then(|c| c.ctxsw_per_mb), 2),
    ]
}

#[path = "text_breakdown.rs"]
mod breakdown_text;
use breakdown_text::breakdown;

#[path = "text_load.rs"]
mod load_text;
use load_text::load;

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
