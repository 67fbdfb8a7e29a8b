//! What a test's report says for the diagnosis: [`input_from_report`] reads a
//! [`TestReport`] into the [`DiagnosisInput`] that [`crate::diagnose()`] judges.
//!
//! Every figure is the one in force, not the one asked: the window the kernel
//! granted (the receiver's advertised window from TCP_INFO), the payload the
//! segments carried on the wire, the flow threads' own CPU clocks.

use netsonde_model::cpu::CpuReport;
use netsonde_model::result::{FlowResult, Role, SideResult, TestReport};
use netsonde_model::spec::IoStrategy;
use netsonde_model::units::Nanos;

use netsonde_model::nic::NicFinding;

use crate::diagnose::{CoreLoad, DiagnosisInput, PeerProcess, SideFinding, SideQuota, ThreadLoad};

/// A peer process above this share of one core runs more than one thread.
const ONE_THREAD_PCT: f64 = 105.0;

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Sender => "sender",
        Role::Receiver => "receiver",
        Role::Requester => "requester",
        Role::Responder => "responder",
    }
}

/// The busiest core of one end.
/// The busiest core of one end, with the test's share of that end's host
/// (`test_pct`, from the attribution's costs) and who else ran there.
fn busiest_core(side: &SideResult, peer: &SideResult, test_pct: Option<f64>) -> Option<CoreLoad> {
    let cpu = side.cpu.as_ref()?;
    let c = cpu
        .cores
        .iter()
        .max_by(|a, b| a.busy().0.total_cmp(&b.busy().0))?;
    Some(CoreLoad {
        core: c.core,
        busy: c.busy().0,
        user: c.user.0 + c.nice.0,
        sys: c.sys.0,
        softirq: c.irq.0 + c.softirq.0,
        test_pct,
        foreign: cpu.foreign_named(peer.cpu.as_ref().map(|p| p.pid)),
    })
}

/// The test's share of an end's host's busy time, percent: on one host, both
/// ends' CPU over the host's. Only from the attribution that apportions the
/// kernel's work (a cost with its stack share); `None` before it.
fn test_pct(r: &TestReport, server: bool, one_host: bool) -> Option<f64> {
    let cost = |c: &Option<netsonde_model::result::SideCost>| {
        c.as_ref()
            .filter(|c| c.stack_share.is_some())
            .and_then(|c| Some((c.test_cores?, c.busy_cores)))
    };
    let (test, busy) = match (one_host, server) {
        (true, _) => {
            let (a, busy) = cost(&r.client_cost)?;
            let (b, _) = cost(&r.server_cost)?;
            (a + b, busy)
        }
        (false, false) => cost(&r.client_cost)?,
        (false, true) => cost(&r.server_cost)?,
    };
    (busy > 0.0).then(|| (100.0 * test / busy).min(100.0))
}

/// Each flow thread of one end, with what its flows did.
/// `pinned`: the spec pinned this end's flows (`-A`, `--server-affinity`), so
/// a thread's last core is the one it ran on all along; else it may have moved
/// between cores, and the steal of all of them is its estimate.
fn thread_loads(
    name: &str,
    side: &SideResult,
    (verify, encrypts, quic): (bool, bool, bool),
    pinned: bool,
) -> Vec<ThreadLoad> {
    let Some(cpu) = side.cpu.as_ref() else {
        return Vec::new();
    };
    let pct = |n: u64| 100.0 * n as f64 / cpu.elapsed.0.max(1) as f64;
    let idle = idle_cores(cpu);
    cpu.flow_threads
        .iter()
        .filter(|_| cpu.elapsed.0 > 0)
        .map(|t| {
            let flows: Vec<_> = side
                .flows
                .iter()
                .filter(|f| t.flows.contains(&f.id))
                .collect();
            let role = flows.first().map_or("", |f| role_name(f.role));
            let spins = flows.iter().any(|f| {
                f.io.as_ref()
                    .is_some_and(|io| io.strategy == IoStrategy::Busypoll.name())
            });
            let core_softirq = t.core.and_then(|c| {
                let u = cpu.cores.iter().find(|u| u.core == Some(c))?;
                Some(u.irq.0 + u.softirq.0)
            });
            let (busy, waited) = (100.0 * cpu.cores_of(t), t.wait.map(|n| pct(n.0)));
            let sum = |f: fn(&FlowResult) -> Option<Nanos>| {
                flows
                    .iter()
                    .filter_map(|x| f(x))
                    .map(|n| n.0)
                    .reduce(|a, b| a + b)
                    .map(pct)
            };
            // Timed on the wall clock, a sample the thread was preempted in
            // can still pass what it ran: the crypto is never more than the
            // thread's own CPU.
            let crypto = sum(FlowResult::crypto_in_interval).map(|k| k.min(busy));
            // A handshake per transaction shows; the one a kept connection
            // made before the interval does not.
            let handshakes = sum(FlowResult::handshakes_in_interval)
                .map(|h| h.min(crypto.unwrap_or(busy)))
                .filter(|&h| h >= 0.5);
            ThreadLoad {
                side: name.into(),
                flows: t.flows.clone(),
                role: role.into(),
                busy,
                user: t.user.map(|n| pct(n.0)),
                sys: t.sys.map(|n| pct(n.0)),
                waited,
                stolen: stolen(cpu, t.core.filter(|_| pinned), busy + waited.unwrap_or(0.0)),
                core: t.core,
                core_softirq,
                idle_cores: idle,
                spins,
                verifies: verify && role == "receiver",
                encrypts,
                quic,
                crypto,
                handshakes,
                spent: cpu
                    .profile
                    .as_ref()
                    .and_then(|p| p.breakdown())
                    .and_then(|b| b.threads.iter().find(|s| s.tid == t.tid))
                    .map(|s| netsonde_model::profile::shares(&s.categories))
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// What the hypervisor took from a thread that ran or waited `wanted` percent of
/// the interval: the steal share of its core (of all cores, when its core is
/// unknown) applied to the time it wanted, as a share of the interval. While
/// its vCPU is stolen the guest counts the time neither as the thread's nor as
/// its wait, so a thread that never blocked shows `100 − steal` percent.
fn stolen(cpu: &CpuReport, core: Option<u32>, wanted: f64) -> Option<f64> {
    let on_core = core.and_then(|c| cpu.cores.iter().find(|u| u.core == Some(c)));
    let steal = match on_core {
        Some(u) => u.steal.0,
        None if !cpu.cores.is_empty() => {
            cpu.cores.iter().map(|u| u.steal.0).sum::<f64>() / cpu.cores.len() as f64
        }
        None => return None,
    };
    (steal > 0.0 && steal < 100.0).then(|| wanted * steal / (100.0 - steal))
}

fn idle_cores(cpu: &CpuReport) -> Option<f64> {
    (!cpu.cores.is_empty()).then(|| (cpu.cores.len() as f64 - cpu.busy_cores).max(0.0))
}

/// A peer tool's process, as it reported its CPU.
fn peer_process(r: &TestReport) -> Option<PeerProcess> {
    let p = r.peer.as_ref()?;
    let threads = if p.cpu_util_total > ONE_THREAD_PCT {
        r.spec.parallel.max(1)
    } else {
        1
    };
    // A peer on a loopback address ran on this host: its vCPU time was stolen
    // as this host's was.
    // (`server_address` reads `iperf3 HOST:PORT` for an iperf3 peer.)
    let local = r
        .server_address
        .split_whitespace()
        .last()
        .and_then(|a| a.parse::<std::net::SocketAddr>().ok())
        .is_some_and(|a| a.ip().is_loopback());
    let stolen = r
        .client
        .cpu
        .as_ref()
        .filter(|_| local)
        .and_then(|c| stolen(c, None, p.cpu_util_total));
    Some(PeerProcess {
        tool: p.tool.clone(),
        side: "server".into(),
        busy: p.cpu_util_total,
        user: p.cpu_util_user,
        sys: p.cpu_util_system,
        threads,
        stolen,
    })
}

/// The window in force when the user set one, and where it came from: the least
/// advertised window a sender saw (TCP_INFO `snd_wnd`), else half the least
/// receive buffer the kernel granted (Linux doubles the request, half for its
/// bookkeeping).
fn window_in_force(r: &TestReport) -> (Option<f64>, String) {
    if r.spec.window.is_none() && r.spec.rcv_window.is_none() {
        return (None, String::new());
    }
    if r.spec.test.is_quic() {
        // netsonde-quic makes `-w` the flow-control windows exactly.
        return match r.spec.window_of(None) {
            Some(w) => (Some(w.0 as f64), "QUIC's flow-control window, -w".into()),
            None => (None, String::new()),
        };
    }
    let advertised = crate::link::tcp_senders(r)
        .iter()
        .filter_map(|(_, t)| t.snd_wnd)
        .min();
    if let Some(w) = advertised {
        return (
            Some(w as f64),
            "the receiver's advertised window, TCP_INFO".into(),
        );
    }
    let granted = [&r.client, &r.server]
        .iter()
        .filter(|s| s.flows.iter().any(|f| f.role == Role::Receiver))
        .filter_map(|s| s.socket.as_ref().map(|k| k.rcvbuf))
        .min();
    match granted {
        Some(g) => (
            Some(g as f64 / 2.0),
            "half the receive buffer granted".into(),
        ),
        None => (r.spec.window.map(|w| w.0 as f64), "as asked".into()),
    }
}

/// The socket buffers the kernel granted: the TCP senders' when the user set
/// them (`-w`; an unset one grows by autotuning from what was read), and the
/// receivers' (an autotuned one only grows from it). The least of each.
fn granted_buffers(r: &TestReport) -> (Option<f64>, Option<f64>) {
    let granted = |role: Role, pick: fn(&netsonde_model::result::SocketFacts) -> u64| {
        [&r.client, &r.server]
            .iter()
            .filter(|s| s.flows.iter().any(|f| f.role == role))
            .filter_map(|s| s.socket.as_ref().map(pick))
            .filter(|b| *b > 0)
            .min()
            .map(|b| b as f64)
    };
    let set = r.spec.window.is_some() || !r.spec.flow_windows.is_empty();
    let tcp = !r.spec.test.is_datagram() && !r.spec.test.is_quic();
    (
        granted(Role::Sender, |k| k.sndbuf).filter(|_| set && tcp),
        granted(Role::Receiver, |k| k.rcvbuf),
    )
}

/// The NIC rules' findings of both ends ([`crate::nic::findings`]): each end's
/// interface facts and counters, its cores, the cores its flow threads ran on.
/// On one host the kernel's per-core receive counters (`softnet_stat`) are the
/// same for both ends: they are taken once, as the host's.
fn nic_findings(r: &TestReport, line_rate_bps: Option<f64>, goodput: f64) -> Vec<SideFinding> {
    let one_host = r.client.same_host(&r.server);
    let mut out: Vec<SideFinding> = Vec::new();
    for (name, side) in [("client", &r.client), ("server", &r.server)] {
        let facts = side.host.interface.as_ref().and_then(|i| i.nic.as_ref());
        let cpu = side.cpu.as_ref();
        let activity = cpu.and_then(|c| c.nic.as_ref());
        let cores = cpu.map_or(&[][..], |c| &c.cores[..]);
        let flow_cores: Vec<u32> = cpu
            .map(|c| c.flow_threads.iter().filter_map(|t| t.core).collect())
            .unwrap_or_default();
        for finding in
            crate::nic::findings(facts, activity, cores, &flow_cores, line_rate_bps, goodput)
        {
            let host_wide = matches!(
                finding,
                NicFinding::SoftnetDrops { .. } | NicFinding::TimeSqueeze { .. }
            );
            if one_host
                && (out.iter().any(|o| o.finding == finding) || host_wide && name == "server")
            {
                continue;
            }
            let side = if one_host && host_wide { "host" } else { name };
            out.push(SideFinding {
                side: side.into(),
                finding,
            });
        }
    }
    out
}

/// What the UDP senders offered over the measured interval, all directions.
fn offered(r: &TestReport) -> Option<f64> {
    if r.spec.test.is_tcp() {
        return None;
    }
    let sum: f64 = r
        .directions
        .iter()
        .filter_map(|d| {
            let sent = d.datagrams_sent_measured?;
            let secs = d.elapsed.as_secs_f64();
            (secs > 0.0).then(|| sent as f64 * r.spec.size.0 as f64 * 8.0 / secs)
        })
        .sum();
    (sum > 0.0).then_some(sum)
}

/// Each end's cgroup CPU limits where one has a quota: one entry, `host`,
/// when both ends are one process (an embedded server).
fn quotas(r: &TestReport, one_host: bool) -> Vec<SideQuota> {
    let (c, s) = (r.client.cpu.as_ref(), r.server.cpu.as_ref());
    let one_process = one_host && c.zip(s).is_some_and(|(c, s)| c.pid == s.pid && c.pid != 0);
    let ends: Vec<(&str, Option<&CpuReport>)> = if one_process {
        vec![("host", c)]
    } else {
        vec![("client", c), ("server", s)]
    };
    ends.into_iter()
        .filter_map(|(side, cpu)| {
            let g = cpu?.cgroup.as_ref()?;
            g.quota_cores.map(|_| SideQuota {
                side: side.into(),
                cgroup: g.clone(),
            })
        })
        .collect()
}

/// What a single test's report says, for [`crate::diagnose()`]. `line_rate_bps`
/// is the user's `--line-rate`; in the lab the link's own rate stands in when
/// none is given.
pub fn input_from_report(r: &TestReport, line_rate_bps: Option<f64>) -> DiagnosisInput {
    let spec = &r.spec;
    let (line, theoretical) = crate::link::path_ceiling(r, line_rate_bps);
    let directions = r.directions.len().max(1) as f64;
    // The TCP senders' TCP_INFO: how their busy time was limited, RTT, segments.
    let senders = crate::link::tcp_senders(r);
    let busy: u64 = senders.iter().map(|(_, t)| t.busy.0).sum();
    let share = |v: u64| (busy > 0).then(|| v as f64 / busy as f64);
    // A transport in user space (QUIC) keeps its own: its senders' mean.
    let own_rtts: Vec<f64> = [&r.client, &r.server]
        .iter()
        .flat_map(|s| s.flows.iter())
        .filter(|f| f.role == Role::Sender)
        .filter_map(|f| f.io.as_ref()?.rtt)
        .map(|n| n.0 as f64)
        .collect();
    let rtt = if senders.is_empty() {
        (!own_rtts.is_empty()).then(|| own_rtts.iter().sum::<f64>() / own_rtts.len() as f64)
    } else {
        Some(senders.iter().map(|(_, t)| t.srtt.0 as f64).sum::<f64>() / senders.len() as f64)
    };
    let base_rtt = senders
        .iter()
        .map(|(_, t)| t.min_rtt.0)
        .filter(|&m| m > 0)
        .min()
        .map(|m| m as f64);
    let segments: f64 = senders
        .iter()
        .map(|(f, t)| f.bytes_total.0 as f64 / f64::from(t.mss.max(1)))
        .sum();
    // Retransmissions the receiver reported as duplicates were needless: the
    // segments were reordered, not lost.
    let spurious: u64 = senders
        .iter()
        .map(|(_, t)| t.dsack_dups.min(t.retransmits))
        .sum();
    let retrans: u64 = senders.iter().map(|(_, t)| t.retransmits).sum::<u64>() - spurious;
    let goodput: f64 = r.directions.iter().map(|d| d.goodput.bps()).sum();
    let loss = r
        .directions
        .iter()
        .filter_map(|d| d.loss.map(|l| l.0))
        .reduce(f64::max);
    let (tps, bound) = match &r.rr {
        Some(rr) if rr.latency.mean.0 > 0 => (
            Some(rr.transactions_per_sec),
            Some(f64::from(spec.parallel) / (rr.latency.mean.0 as f64 * 1e-9)),
        ),
        _ => (None, None),
    };
    let one_host = r.client.same_host(&r.server);
    let mut threads = thread_loads(
        "client",
        &r.client,
        (spec.verify, spec.test.is_tls(), spec.test.is_quic()),
        !spec.client_affinity.is_empty(),
    );
    threads.extend(thread_loads(
        "server",
        &r.server,
        (spec.verify, spec.test.is_tls(), spec.test.is_quic()),
        !spec.server_affinity.is_empty(),
    ));
    let (window_bytes, window_source) = window_in_force(r);
    let (sender_buffer_bytes, receiver_buffer_bytes) = granted_buffers(r);
    DiagnosisInput {
        goodput_bps: goodput,
        line_rate_bps: line,
        theoretical_bps: theoretical,
        client_core: busiest_core(&r.client, &r.server, test_pct(r, false, one_host)),
        // One host: one /proc/stat, read by both ends.
        server_core: if one_host {
            None
        } else {
            busiest_core(&r.server, &r.client, test_pct(r, true, one_host))
        },
        one_host,
        threads,
        peer_process: peer_process(r),
        quotas: quotas(r, one_host),
        spec: Some(spec.clone()),
        window_bytes,
        window_source,
        sender_buffer_bytes,
        receiver_buffer_bytes,
        congestion: [&r.client, &r.server]
            .iter()
            .filter(|s| s.flows.iter().any(|f| f.role == Role::Sender))
            .find_map(|s| s.socket.as_ref().and_then(|k| k.congestion.clone())),
        rtt_ns: rtt,
        base_rtt_ns: base_rtt,
        segment_bytes: crate::link::segment_payload(r).map(|s| s as f64),
        rwnd_limited: share(senders.iter().map(|(_, t)| t.rwnd_limited.0).sum()),
        sndbuf_limited: share(senders.iter().map(|(_, t)| t.sndbuf_limited.0).sum()),
        retransmit_pct: (segments > 0.0).then(|| 100.0 * retrans as f64 / segments),
        spurious_pct: (segments > 0.0).then(|| 100.0 * spurious as f64 / segments),
        loss_pct: loss,
        datagrams: spec.test.is_datagram() && !spec.test.is_rr(),
        offered_bps: offered(r),
        paced_bps: spec
            .rate
            .filter(|_| !spec.test.is_rr())
            .map(|r| r.bps() * f64::from(spec.parallel) * directions),
        transactions_per_sec: tps,
        round_trip_bound: bound,
        nic: nic_findings(r, line, goodput),
        steal_pct: [&r.client, &r.server]
            .iter()
            .filter_map(|s| s.cpu.as_ref())
            .filter(|c| !c.cores.is_empty())
            .map(|c| c.cores.iter().map(|u| u.steal.0).sum::<f64>() / c.cores.len() as f64)
            .reduce(f64::max),
    }
}
