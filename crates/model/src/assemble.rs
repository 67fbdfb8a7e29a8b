//! How a test's two sides become its report: [`TestReport::assemble`], the pure
//! summary of both ends' results (directions, request/response, service demand,
//! the caveats a reader must see).

use crate::result::*;
use crate::spec::{FlowDir, TestSpec};
use crate::units::{BitRate, Bytes, Nanos, Percent};

impl TestReport {
    /// Combines both ends' figures. `latency` is the merged distribution of every
    /// requester flow (merging histograms needs the histogram library, which this
    /// crate does not depend on).
    pub fn assemble(
        spec: TestSpec,
        server_address: String,
        mut client: SideResult,
        mut server: SideResult,
        intervals: Vec<IntervalRecord>,
        latency: Option<LatencySummary>,
    ) -> TestReport {
        settle_mss(&mut client);
        settle_mss(&mut server);
        let mut warnings = Vec::new();
        let mut directions = Vec::new();
        if !spec.test.is_rr() {
            for dir in [FlowDir::Up, FlowDir::Down] {
                let (snd, rcv) = match dir {
                    FlowDir::Up => (&client, &server),
                    FlowDir::Down => (&server, &client),
                };
                let sflows: Vec<_> = snd.flows.iter().filter(|f| f.dir == dir).collect();
                let rflows: Vec<_> = rcv.flows.iter().filter(|f| f.dir == dir).collect();
                if sflows.is_empty() && rflows.is_empty() {
                    continue;
                }
                directions.push(summarize_direction(dir, spec.test, &sflows, &rflows));
            }
        }
        for d in &directions {
            if !spec.test.is_datagram() && d.sender_bytes_total != d.receiver_bytes_total {
                warnings.push(Warning::ByteCountMismatch {
                    dir: d.dir,
                    sent: d.sender_bytes_total,
                    received: d.receiver_bytes_total,
                });
            }
        }
        warnings.extend(caveats(&spec, &client, &server, &directions));
        let rr = if spec.test.is_rr() {
            let req: Vec<_> = client.flows.iter().collect();
            let transactions: u64 = req.iter().map(|f| f.transactions).sum();
            let elapsed = req.iter().map(|f| f.elapsed).max().unwrap_or_default();
            Some(RrSummary {
                transactions,
                transactions_per_sec: per_sec(transactions, elapsed),
                latency: latency.unwrap_or_default(),
                client_transactions_total: req.iter().map(|f| f.transactions_total).sum(),
                server_transactions_total: server.flows.iter().map(|f| f.transactions_total).sum(),
            })
        } else {
            None
        };
        if let Some(rr) = &rr {
            if rr.transactions < 100 {
                warnings.push(Warning::TooShort {
                    what: format!("only {} transactions measured", rr.transactions),
                });
            }
        }
        let moved: u64 = directions.iter().map(|d| d.bytes.0).sum();
        let transactions = rr.as_ref().map(|r| r.transactions);
        // One host when both ends report the same machine (loopback, the lab's
        // namespaces): its /proc/stat holds both ends' threads.
        let one_host = client.same_host(&server);
        let client_cost = side_cost(&client, &server, one_host, moved, transactions);
        let server_cost = side_cost(&server, &client, one_host, moved, transactions);
        for (name, cost) in [("client", &client_cost), ("server", &server_cost)] {
            if let Some(f) = cost.as_ref().and_then(|c| c.foreign_cores) {
                if f >= FOREIGN_LOAD {
                    let side = if name == "client" { &client } else { &server };
                    warnings.push(Warning::ForeignLoad {
                        side: name.into(),
                        cores: f,
                        busy_cores: cost.as_ref().map_or(0.0, |c| c.busy_cores),
                        top: side.cpu.as_ref().map_or_else(Vec::new, |c| {
                            let peer = if name == "client" { &server } else { &client };
                            c.foreign_named(peer.cpu.as_ref().map(|p| p.pid))
                        }),
                    });
                }
            }
            if one_host && name == "client" {
                // One host: the server's cost reads the same /proc/stat; warn once.
                break;
            }
        }
        for (name, side) in [("client", &client), ("server", &server)] {
            if let (Some(w), Some(s)) = (spec.window, &side.socket) {
                // Linux grants twice the request (half is bookkeeping) unless capped.
                let granted = s.sndbuf.min(s.rcvbuf);
                if granted < w.0 * 2 {
                    // The smaller of the two read back is the one its sysctl capped.
                    let key = if s.rcvbuf <= s.sndbuf {
                        "net.core.rmem_max"
                    } else {
                        "net.core.wmem_max"
                    };
                    warnings.push(Warning::WindowCapped {
                        side: name.into(),
                        requested: w,
                        granted: Bytes(granted),
                        cap: side.host.sysctls.get(key).map(|v| format!("{key} = {v}")),
                    });
                }
            }
            if let Some(cpu) = &side.cpu {
                if let Some(c) = cpu
                    .cores
                    .iter()
                    .max_by(|a, b| a.busy().0.total_cmp(&b.busy().0))
                {
                    // One host: both ends read the same cores; say it once.
                    let said = one_host
                        && warnings
                            .iter()
                            .any(|w| matches!(w, Warning::CpuSaturated { .. }));
                    if c.busy() >= SATURATED && !said {
                        warnings.push(Warning::CpuSaturated {
                            side: if one_host { "host".into() } else { name.into() },
                            core: c.core.unwrap_or(0),
                            busy: c.busy(),
                        });
                    }
                }
            }
        }
        TestReport {
            schema_version: crate::JSON_SCHEMA_VERSION,
            tool_version: client.host.tool_version.clone(),
            spec,
            server_address,
            client,
            server,
            intervals,
            directions,
            rr,
            client_cost,
            server_cost,
            warnings,
            events: Vec::new(),
            link: None,
            diagnosis: None,
            rfc6349: None,
            peer: None,
            load: None,
            synced: None,
        }
    }
}

/// The MSS read when a connection opens is the kernel's first guess (on a
/// 64 KiB-MTU loopback, half the final one); TCP_INFO at the end says what the
/// connection used, and that is what a side's socket facts keep.
fn settle_mss(side: &mut SideResult) {
    let used = side
        .flows
        .iter()
        .filter_map(|f| f.tcp_info.as_ref())
        .map(|t| t.mss)
        .find(|&m| m > 0);
    if let (Some(s), Some(m)) = (side.socket.as_mut(), used) {
        s.mss = Some(m);
    }
}

fn per_sec(count: u64, elapsed: Nanos) -> f64 {
    if elapsed.0 == 0 {
        0.0
    } else {
        count as f64 / elapsed.as_secs_f64()
    }
}

fn summarize_direction(
    dir: FlowDir,
    test: crate::spec::TestKind,
    senders: &[&FlowResult],
    receivers: &[&FlowResult],
) -> DirectionSummary {
    // A reliable stream has no datagrams to lose; only kernel TCP counts
    // retransmitted segments (QUIC's losses are in its report's note).
    let reliable = !test.is_datagram();
    let bytes = Bytes(receivers.iter().map(|f| f.bytes.0).sum());
    let elapsed = receivers
        .iter()
        .map(|f| f.elapsed)
        .max()
        .unwrap_or_default();
    let s_elapsed = senders.iter().map(|f| f.elapsed).max().unwrap_or_default();
    let udp = if reliable {
        None
    } else {
        let mut u = UdpStats::default();
        for r in receivers.iter().filter_map(|f| f.udp.as_ref()) {
            u.packets += r.packets;
            u.packets_total += r.packets_total;
            u.lost += r.lost;
            u.duplicates += r.duplicates;
            u.reordered += r.reordered;
            u.jitter = u.jitter.max(r.jitter);
            u.by_sequence |= r.by_sequence;
        }
        Some(u)
    };
    let datagrams_sent: Option<u64> = if reliable {
        None
    } else {
        Some(senders.iter().filter_map(|f| f.datagrams_sent).sum())
    };
    // The sender counts its measured datagrams by its own clock, and the receivers
    // count the arrivals of exactly those (by the time stamped on them), so the two
    // describe the same datagrams.
    let datagrams_sent_measured: Option<u64> =
        (!reliable).then(|| senders.iter().map(|f| f.messages).sum());
    let mut udp = udp;
    let loss = match (udp.as_mut(), datagrams_sent_measured) {
        // Counted by sequence numbers (an iperf3 end): the receivers' own gaps.
        (Some(u), _) if u.by_sequence => {
            Some(Percent::of(u.lost as f64, (u.packets + u.lost) as f64))
        }
        (Some(u), Some(sent)) => {
            u.lost = sent.saturating_sub(u.packets);
            Some(Percent::of(u.lost as f64, sent as f64))
        }
        _ => None,
    };
    DirectionSummary {
        dir,
        sender_bytes_total: Bytes(senders.iter().map(|f| f.bytes_total.0).sum()),
        receiver_bytes_total: Bytes(receivers.iter().map(|f| f.bytes_total.0).sum()),
        bytes,
        elapsed,
        goodput: BitRate::from_bytes(bytes, elapsed.as_duration()),
        messages_per_sec: per_sec(senders.iter().map(|f| f.messages).sum(), s_elapsed),
        packets_per_sec: udp.as_ref().map(|u| per_sec(u.packets, elapsed)),
        datagrams_sent,
        datagrams_sent_measured,
        loss,
        udp,
        retransmits: if test.is_tcp() {
            Some(
                senders
                    .iter()
                    .filter_map(|f| f.tcp_info.as_ref())
                    .map(|t| t.retransmits)
                    .sum(),
            )
        } else {
            None
        },
    }
}

fn caveats(
    spec: &TestSpec,
    client: &SideResult,
    server: &SideResult,
    directions: &[DirectionSummary],
) -> Vec<Warning> {
    let mut out = Vec::new();
    let strategy = |f: &FlowResult| f.io.as_ref().map(|i| i.strategy.clone());
    for (name, side) in [("client", client), ("server", server)] {
        if let Some(s) = side
            .flows
            .iter()
            .filter(|f| f.role == Role::Receiver)
            .filter_map(strategy)
            .find(|s| {
                let base = s.rsplit(':').next().unwrap_or(s);
                base == "zerocopy" || base == "splice"
            })
        {
            out.push(Warning::DiscardingReceiver {
                side: name.into(),
                strategy: s,
            });
        }
    }
    if spec.test.is_tcp() {
        return out;
    }
    let one_host = client.same_host(server);
    for (name, side) in [("client", client), ("server", server)] {
        let Some(d) = side.cpu.as_ref().and_then(|c| c.udp_drops) else {
            continue;
        };
        if d.rcvbuf_errors + d.sndbuf_errors > 0 {
            out.push(Warning::KernelDrops {
                side: if one_host { "host".into() } else { name.into() },
                rcvbuf: d.rcvbuf_errors,
                sndbuf: d.sndbuf_errors,
            });
        }
        if one_host {
            // One host, one set of counters: say it once.
            break;
        }
    }
    for d in directions {
        let flows: Vec<&FlowResult> = client
            .flows
            .iter()
            .chain(&server.flows)
            .filter(|f| f.dir == d.dir)
            .collect();
        if spec.rate.is_none() && d.datagrams_sent.is_some() {
            out.push(Warning::UnpacedUdp { dir: d.dir });
        }
        if let (Some(sent), Some(loss)) = (d.datagrams_sent_measured, d.loss) {
            if sent > 0 && loss.0 >= TOTAL_LOSS_PCT {
                out.push(Warning::TotalLoss {
                    dir: d.dir,
                    sent,
                    received: d.udp.as_ref().map_or(0, |u| u.packets),
                });
            }
        }
        if let (Some(rate), Some(sent)) = (spec.rate, d.datagrams_sent_measured) {
            let asked = rate.bps() * f64::from(spec.parallel);
            let secs = flows
                .iter()
                .filter(|f| f.role == Role::Sender)
                .map(|f| f.elapsed)
                .max()
                .unwrap_or_default()
                .as_secs_f64();
            if secs > 0.0 {
                let reached = sent as f64 * spec.size.0 as f64 * 8.0 / secs;
                if reached < SENDER_SHORTFALL * asked {
                    out.push(Warning::SenderShortfall {
                        dir: d.dir,
                        asked: BitRate(asked),
                        sent: BitRate(reached),
                    });
                }
            }
        }
        let batched: Vec<String> = flows
            .iter()
            .filter_map(|f| strategy(f))
            .filter(|s| {
                let base = s.rsplit(':').next().unwrap_or(s);
                matches!(base, "batch" | "uring")
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        if !batched.is_empty() {
            out.push(Warning::JitterFromBatches {
                dir: d.dir,
                strategies: batched.join(", "),
            });
        }
    }
    out
}

/// Bytes of headers a packet carries beyond its payload, for the test's share of
/// the bytes the host's interfaces counted: IPv4 (20), TCP with timestamps (32)
/// and Ethernet (14). A UDP datagram carries 42; the difference is within the
/// model's error (docs/DIAGNOSIS.md).
const HEADER_BYTES: f64 = 66.0;

/// The packets the test sent over the measured interval, both ends: each stream
/// sender's segments (`tcpi_data_segs_out`, scaled to the interval) or its
/// messages (datagrams, or writes where TCP_INFO was not read), and every
/// request and response.
fn test_packets(side: &SideResult, peer: &SideResult) -> f64 {
    side.flows
        .iter()
        .chain(&peer.flows)
        .filter(|f| f.role != Role::Receiver)
        .map(|f| {
            let segs = f.tcp_info.as_ref().and_then(|t| t.data_segs_out);
            match segs {
                Some(n) if f.bytes_total.0 > 0 => {
                    n as f64 * f.bytes.0 as f64 / f.bytes_total.0 as f64
                }
                _ => f.messages as f64,
            }
        })
        .sum()
}

/// The test's share of the kernel's network work on this end's host: the bytes
/// its packets put on the host's interfaces (payload and headers; on one host,
/// each counted as sent and again as received, as loopback and a veth pair
/// count them) over the bytes every interface of every namespace counted.
/// `None` when the interfaces were not read.
fn stack_share(
    cpu: &crate::cpu::CpuReport,
    side: &SideResult,
    peer: &SideResult,
    one_host: bool,
    moved: u64,
) -> Option<f64> {
    let host = cpu.stack_bytes?;
    let crossings = if one_host { 2.0 } else { 1.0 };
    let test = crossings * (moved as f64 + HEADER_BYTES * test_packets(side, peer));
    Some(if host == 0 {
        // No interface counted anything: whatever the kernel did was not
        // another flow's.
        1.0
    } else {
        (test / host as f64).clamp(0.0, 1.0)
    })
}

/// The test's CPU and the foreign load on one end, in cores, and the test's
/// share of the kernel's network work (docs/DIAGNOSIS.md, "Whose CPU"):
///
/// - the test's own: its flow threads' CPU clocks, and the rest of its process
///   (control, sampler); when one process is both ends, half of that rest;
/// - the processes that are part of the test (a peer tool's server, the lab's
///   emulator), halved between the ends on one host;
/// - the kernel's work outside any process (interrupts, softirq on idle cores,
///   ksoftirqd and other kernel threads: the host's busy time less every
///   process's), times the test's share of the bytes the interfaces counted,
///   halved between the ends on one host.
///
/// The foreign load is the other processes (less the peer, when it is another
/// process on this host) and the rest of the kernel's work. Reports taken before
/// the interfaces were read keep the older model (the rest of the host's busy
/// time is the test's).
fn attribute(
    cpu: &crate::cpu::CpuReport,
    side: &SideResult,
    peer: &SideResult,
    one_host: bool,
    moved: u64,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let cores = |n: Nanos| {
        if cpu.elapsed.0 == 0 {
            0.0
        } else {
            n.0 as f64 / cpu.elapsed.0 as f64
        }
    };
    let peer_cpu = peer.cpu.as_ref().filter(|_| one_host);
    let same_process = peer_cpu.is_some_and(|p| p.pid == cpu.pid);
    // The peer, when it is another process on this host: in `others`, not foreign.
    let peer_process = peer_cpu
        .filter(|_| !same_process)
        .map_or(0.0, |p| cores(Nanos(p.process.user.0 + p.process.sys.0)));
    let own = cpu.thread_cores();
    let share = stack_share(cpu, side, peer, one_host, moved);
    if let (Some(others), Some(own), Some(share), Some(partners)) =
        (cpu.others, own, share, cpu.partners)
    {
        let half = if one_host { 0.5 } else { 1.0 };
        let process = cores(Nanos(cpu.process.user.0 + cpu.process.sys.0));
        // On one host, a process one end knows is part of the test (the lab's
        // emulator, which the client's process started) is the other end's too:
        // out of its others.
        let known = cores(partners);
        let partners = peer_cpu
            .and_then(|p| p.partners)
            .map_or(known, |p| known.max(cores(p)));
        let others = (cores(others) - (partners - known)).max(0.0);
        let rest = if same_process {
            let peer_own = peer_cpu.and_then(|p| p.thread_cores()).unwrap_or(0.0);
            (process - own - peer_own).max(0.0) / 2.0
        } else {
            (process - own).max(0.0)
        };
        let kernel = (cpu.busy_cores - process - others - partners).max(0.0);
        let test = own + rest + half * (partners + share * kernel);
        let foreign = (others - peer_process).max(0.0) + (1.0 - share) * kernel;
        return (
            Some(test.min(cpu.busy_cores)),
            Some(foreign.clamp(0.0, cpu.busy_cores)),
            Some(share),
        );
    }
    // The older model: the host's other user processes are foreign, the rest of
    // its busy time the test's.
    let foreign_cores = cpu
        .others
        .map(|o| (cores(o) - peer_process).clamp(0.0, cpu.busy_cores));
    let test_cores = match (foreign_cores, own) {
        (Some(f), Some(own)) => {
            let host_test = (cpu.busy_cores - f).max(0.0);
            if one_host {
                let peer_own = peer_cpu.and_then(|p| p.thread_cores()).unwrap_or(0.0);
                let rest = (host_test - own - peer_own).max(0.0);
                Some((own + rest / 2.0).min(cpu.busy_cores))
            } else {
                Some(host_test.max(own).min(cpu.busy_cores))
            }
        }
        (None, Some(own)) => {
            let share = if one_host { 0.5 } else { 1.0 };
            Some((own + share * cpu.interrupt_cores()).min(cpu.busy_cores))
        }
        _ => None,
    };
    (test_cores, foreign_cores, None)
}

fn side_cost(
    side: &SideResult,
    peer: &SideResult,
    one_host: bool,
    moved: u64,
    transactions: Option<u64>,
) -> Option<SideCost> {
    let cpu = side.cpu.as_ref()?;
    let elapsed_us = cpu.elapsed.0 as f64 / 1e3;
    let busy_us = cpu.busy_time().0 as f64 / 1e3;
    let (test_cores, foreign_cores, stack_share) = attribute(cpu, side, peer, one_host, moved);
    let test_us = test_cores.map_or(busy_us, |c| c * elapsed_us);
    let messages: u64 = side.flows.iter().map(|f| f.messages).sum();
    let calls: u64 = side.flows.iter().map(|f| f.calls).sum();
    let ctxsw = cpu.process.voluntary_ctxsw + cpu.process.involuntary_ctxsw;
    let ratio = |n: f64, d: u64| if d == 0 { None } else { Some(n / d as f64) };
    let per_kib = |us: f64| {
        if moved == 0 {
            None
        } else {
            Some(us / (moved as f64 / 1024.0))
        }
    };
    Some(SideCost {
        busy_cores: cpu.busy_cores,
        test_cores,
        foreign_cores,
        stack_share,
        us_per_kib: per_kib(test_us),
        us_per_transaction: transactions.and_then(|t| ratio(test_us, t)),
        system_us_per_kib: per_kib(busy_us),
        system_us_per_transaction: transactions.and_then(|t| ratio(busy_us, t)),
        calls_per_message: ratio(calls as f64, messages),
        ctxsw_per_message: ratio(ctxsw as f64, messages),
        messages_per_call: ratio(messages as f64, calls),
        ctxsw_per_mb: if moved == 0 {
            None
        } else {
            Some(ctxsw as f64 / (moved as f64 / 1e6))
        },
        breakdown: cpu
            .profile
            .as_ref()
            .and_then(|p| p.breakdown())
            .zip(cpu.threads)
            .map(|(b, threads)| {
                // The kernel's work outside processes is the test's by its
                // share of the bytes, half each when both ends share the host.
                let half = if one_host { 0.5 } else { 1.0 };
                let weight = stack_share.map_or(0.0, |s| s * half);
                crate::profile::cost_shares(b, threads, moved, transactions, weight)
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
#[path = "assemble_tests.rs"]
mod tests;
