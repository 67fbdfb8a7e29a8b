//! A scripted engine: deterministic reports from a cost model with seeded noise.
//!
//! The model is the reference study's: a message of `B` bytes costs `a*B + b`
//! nanoseconds. Streams deliver `B*8 / (a*B + b_stream)` bit/s, capped by a window
//! over a 100 µs round trip when a window is set; a request/response round trip of
//! `B` bytes each way takes `2*(a*B + b_rr)`. Noise is ±2%, drawn from a generator
//! seeded by the run seed, the spec and how often that spec ran, so the same plan
//! always yields the same numbers in any order.

use std::collections::HashMap;

use netsonde_model::cpu::{CoreUsage, CpuReport, ProcessUsage};
use netsonde_model::host::{HostFacts, InterfaceFacts};
use netsonde_model::result::{
    FlowResult, IntervalRecord, LatencySummary, Role, SideResult, SocketFacts, TestReport,
};
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos, Percent};
use rand::{Rng, SeedableRng};

use crate::exec::{RunError, Runner};

/// Slope of the cost model, ns per byte (0.4 ns/B is a 20 Gbit/s asymptote).
pub const A_NS_PER_BYTE: f64 = 0.4;
/// Fixed cost of a stream message, ns.
pub const B_STREAM_NS: f64 = 3_000.0;
/// Fixed cost of one direction of a transaction, ns.
pub const B_RR_NS: f64 = 10_000.0;
/// Fixed cost of receiving one UDP datagram, ns: a UDP receiver takes at most
/// `1 / (a*B + b_udp_rx)` datagrams per second and loses the rest, fewer than
/// the sender offers for short datagrams, so a loss-free rate search has a limit
/// to find. Receive strategies that batch (`batch`, `uring`, `xdp`) halve it.
pub const B_UDP_RX_NS: f64 = 5_000.0;

/// Datagrams the scripted UDP receiver's socket buffer holds: a burst at a rate
/// above the receiver's loses nothing until it overflows them.
pub const UDP_RX_BUFFERED: u64 = 1000;

/// The datagrams per second the scripted UDP receiver of `spec` takes.
pub fn udp_receiver_pps(spec: &TestSpec) -> f64 {
    use netsonde_model::spec::IoStrategy;
    let fixed = match spec.rx_io {
        IoStrategy::Batch | IoStrategy::Uring | IoStrategy::Xdp => B_UDP_RX_NS / 2.0,
        _ => B_UDP_RX_NS,
    };
    1e9 / (A_NS_PER_BYTE * spec.size.0 as f64 + fixed)
}

/// The scripted engine.
#[derive(Debug)]
pub struct FakeRunner {
    seed: u64,
    runs: HashMap<u64, u64>,
    /// Fail every run of specs with this message size, with this message.
    pub fail_size: Option<(Bytes, String)>,
    /// Multiplies throughput and divides latency (0.8: a 20% regression).
    pub scale: f64,
}

impl FakeRunner {
    /// A runner with a seed.
    pub fn new(seed: u64) -> FakeRunner {
        FakeRunner {
            seed,
            runs: HashMap::new(),
            fail_size: None,
            scale: 1.0,
        }
    }
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn host() -> HostFacts {
    HostFacts {
        hostname: "fake".into(),
        kernel: "fake-kernel".into(),
        cpu_model: "Scripted CPU".into(),
        cores: 2,
        sysctls: Default::default(),
        interface: Some(InterfaceFacts {
            name: "lo".into(),
            mtu: 65536,
            nic: None,
        }),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        boot_id: String::new(),
    }
}

fn cpu(busy: f64, secs: f64) -> CpuReport {
    let core = |n: Option<u32>, b: f64| CoreUsage {
        core: n,
        user: Percent(b * 10.0),
        sys: Percent(b * 60.0),
        softirq: Percent(b * 30.0),
        idle: Percent(100.0 - b * 100.0),
        ..CoreUsage::default()
    };
    CpuReport {
        elapsed: Nanos((secs * 1e9) as u64),
        cores: vec![core(Some(0), busy / 2.0), core(Some(1), busy / 2.0)],
        total: core(None, busy / 2.0),
        busy_cores: busy,
        process: ProcessUsage {
            user: Nanos((busy * secs * 1e8) as u64),
            sys: Nanos((busy * secs * 6e8) as u64),
            voluntary_ctxsw: 1000,
            involuntary_ctxsw: 10,
        },
        // The user and system shares ran in the test's threads; softirq did not.
        threads: Some(Nanos((busy * secs * 0.7e9) as u64)),
        others: Some(Nanos(0)),
        pid: 1,
        udp_drops: None,
        flow_threads: Vec::new(),
        nic: None,
        ..CpuReport::default()
    }
}

fn flow(
    id: u32,
    dir: FlowDir,
    role: Role,
    bytes: u64,
    msgs: u64,
    trans: u64,
    secs: f64,
) -> FlowResult {
    FlowResult {
        id,
        dir,
        role,
        bytes_total: Bytes(bytes),
        bytes: Bytes(bytes),
        messages: msgs,
        calls: msgs,
        transactions: trans,
        transactions_total: trans,
        elapsed: Nanos((secs * 1e9) as u64),
        datagrams_sent: None,
        tcp_info: None,
        udp: None,
        latency: None,
        io: None,
        mptcp: None,
        stall: None,
    }
}

impl Runner for FakeRunner {
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        if let Some((size, msg)) = &self.fail_size {
            let s = if spec.test.is_rr() {
                spec.request_size
            } else {
                spec.size
            };
            if s == *size {
                return Err(RunError::failed(msg.clone()));
            }
        }
        let key = fnv(&serde_json::to_string(spec).expect("specs serialize"));
        let n = self.runs.entry(key).or_insert(0);
        *n += 1;
        let mut rng = rand::rngs::StdRng::seed_from_u64(
            self.seed ^ key ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        );
        let mut noise = || 1.0 + rng.random_range(-0.02..0.02);
        let secs = spec.duration.as_secs_f64();
        let (mut cflows, mut sflows) = (Vec::new(), Vec::new());
        let mut intervals = Vec::new();
        let udp = spec.test == netsonde_model::spec::TestKind::UdpStream;
        // Datagrams the scripted receivers' sockets dropped.
        let mut lost = 0u64;
        let latency;
        // The load's share of the receiver's capacity, for the probes' queueing.
        let mut utilization = 0.5;
        if spec.test.is_rr() {
            let b = spec.request_size.0 as f64;
            let rtt = 2.0 * (A_NS_PER_BYTE * b + B_RR_NS) * noise() / self.scale;
            let (c, s, l) = scripted_rr(spec, secs, rtt);
            (cflows, sflows, latency) = (c, s, Some(l));
        } else {
            let b = spec.size.0 as f64;
            let mut rate = b * 8.0 / ((A_NS_PER_BYTE * b + B_STREAM_NS) * 1e-9);
            if let Some(w) = spec.window {
                rate = rate.min(w.0 as f64 * 8.0 / 100e-6);
            }
            // The scale is the host's: a paced sender still reaches its rate.
            rate *= self.scale;
            if let Some(r) = spec.rate {
                rate = rate.min(r.bps());
            }
            if udp {
                utilization = rate / 8.0 / b.max(1.0) / (udp_receiver_pps(spec) * self.scale);
            }
            let dirs: Vec<FlowDir> = [FlowDir::Up, FlowDir::Down]
                .into_iter()
                .filter(|d| match d {
                    FlowDir::Up => spec.direction.client_sends(),
                    FlowDir::Down => spec.direction.server_sends(),
                })
                .collect();
            for (i, &dir) in dirs.iter().enumerate() {
                let r = rate * noise();
                let mut bytes = (r / 8.0 * secs) as u64;
                // A test that ends by volume sends its share, no more.
                if let Some(v) = spec.volume {
                    bytes = bytes.min(v.0);
                }
                let msgs = bytes / spec.size.0.max(1);
                let (snd, rcv) = match dir {
                    FlowDir::Up => (&mut cflows, &mut sflows),
                    FlowDir::Down => (&mut sflows, &mut cflows),
                };
                snd.push(flow(i as u32, dir, Role::Sender, bytes, msgs, 0, secs));
                let mut got = flow(i as u32, dir, Role::Receiver, bytes, msgs, 0, secs);
                if udp {
                    snd.last_mut().expect("pushed").datagrams_sent = Some(msgs);
                    lost += udp_received(spec, self.scale, secs, r, &mut got);
                }
                rcv.push(got);
                let steps = 5u64;
                for k in 0..steps {
                    let len = secs / steps as f64;
                    let rr = r * noise();
                    intervals.push(IntervalRecord {
                        start: Nanos((len * k as f64 * 1e9) as u64),
                        end: Nanos((len * (k + 1) as f64 * 1e9) as u64),
                        dir,
                        bytes: Bytes((rr / 8.0 * len) as u64),
                        rate: BitRate(rr),
                        messages: msgs / steps,
                        transactions: 0,
                        udp: None,
                        subflows: None,
                    });
                }
            }
            latency = None;
        }
        let moved: f64 = cflows.iter().map(|f| f.bytes.0 as f64).sum::<f64>() / secs * 8.0;
        let busy = (0.3 + moved / 40e9).min(1.9) * noise();
        let socket = spec.window.map(|w| SocketFacts {
            sndbuf: 2 * w.0,
            rcvbuf: 2 * w.0,
            mss: None,
            congestion: None,
        });
        // One host: both ends see the same drop counters.
        let drops = |c: CpuReport| CpuReport {
            udp_drops: udp.then_some(netsonde_model::cpu::UdpDrops {
                rcvbuf_errors: lost,
                in_errors: lost,
                sndbuf_errors: 0,
            }),
            ..c
        };
        let client = SideResult {
            tcp_samples: Vec::new(),
            host: host(),
            flows: cflows,
            cpu: Some(drops(cpu(busy, secs))),
            socket: socket.clone(),
        };
        let server = SideResult {
            tcp_samples: Vec::new(),
            host: host(),
            flows: sflows,
            cpu: Some(drops(cpu(busy, secs))),
            socket,
        };
        let mut report = TestReport::assemble(
            spec.clone(),
            "fake".into(),
            client,
            server,
            intervals,
            latency,
        );
        if let Some(p) = spec.probe {
            report.load = Some(probes(spec, p, utilization, &mut noise));
        }
        Ok(report)
    }
}

/// What a scripted UDP receiver took of `got.messages` datagrams offered at
/// `r` bit/s: as many as it can; its socket drops the rest. A burst (a test by
/// volume) also fills the socket's buffer first: it loses only what overflows
/// that. Sets `got`'s counts; returns the datagrams lost.
fn udp_received(spec: &TestSpec, scale: f64, secs: f64, r: f64, got: &mut FlowResult) -> u64 {
    let msgs = got.messages;
    let cap = udp_receiver_pps(spec) * scale;
    let took = match spec.volume {
        None => msgs.min((cap * secs) as u64),
        Some(_) => {
            let offered = r / 8.0 / spec.size.0.max(1) as f64;
            let drained = msgs as f64 * (cap / offered).min(1.0);
            msgs.min(UDP_RX_BUFFERED + drained as u64)
        }
    };
    got.bytes = Bytes(took * spec.size.0);
    got.bytes_total = got.bytes;
    got.messages = took;
    got.udp = Some(netsonde_model::result::UdpStats {
        packets: took,
        lost: msgs - took,
        packets_total: took,
        ..Default::default()
    });
    msgs - took
}

/// A request/response test's flows (client's, server's) and latency, for a
/// round trip of `rtt` ns.
fn scripted_rr(
    spec: &TestSpec,
    secs: f64,
    rtt: f64,
) -> (Vec<FlowResult>, Vec<FlowResult>, LatencySummary) {
    let trans = (secs * 1e9 / rtt) as u64 * u64::from(spec.parallel);
    let bytes = trans * (spec.request_size.0 + spec.response_size.0);
    let client = vec![flow(
        0,
        FlowDir::Up,
        Role::Requester,
        bytes,
        trans,
        trans,
        secs,
    )];
    let server = vec![flow(
        0,
        FlowDir::Up,
        Role::Responder,
        bytes,
        trans,
        trans,
        secs,
    )];
    let ns = |f: f64| Nanos((rtt * f) as u64);
    let latency = LatencySummary {
        count: trans,
        min: ns(0.8),
        mean: ns(1.05),
        stddev: ns(0.1),
        p50: ns(1.0),
        p90: ns(1.15),
        p99: ns(1.5),
        p999: ns(2.5),
        max: ns(6.0),
    };
    (client, server, latency)
}

/// The probes of a load-latency test over a receiver at `utilization` of its
/// capacity: a probe's round trip is [`PROBE_RTT_NS`] alone; beside the load its
/// way up also waits in the receiver's queue, `u / (1 - u)` services (an M/M/1
/// queue) below capacity, a full socket buffer ([`UDP_RX_BUFFERED`]) at or above
/// it. UDP and kept-TCP probes, every `1 / rate` s, on one clock.
fn probes(
    spec: &TestSpec,
    p: netsonde_model::spec::ProbeSpec,
    utilization: f64,
    noise: &mut impl FnMut() -> f64,
) -> netsonde_model::load::LoadLatency {
    use netsonde_model::load::{LoadLatency, Phases, ProbeKind, ProbeSample};
    let load_start = p.idle;
    let measured_start = Nanos(load_start.0 + spec.warmup.0);
    let measured_end = Nanos(measured_start.0 + spec.duration.0);
    let phases = Phases {
        load_start,
        measured_start,
        measured_end,
        load_end: measured_end,
        end: Nanos(measured_end.0 + p.idle.0),
    };
    let service = 1e9 / udp_receiver_pps(spec);
    let wait = if utilization < 1.0 {
        service * utilization / (1.0 - utilization)
    } else {
        service * UDP_RX_BUFFERED as f64
    };
    let period = 1_000_000_000 / u64::from(p.rate.max(1));
    let mut out = Vec::new();
    let mut t = 0;
    while t < phases.end.0 {
        let loaded = (load_start.0..measured_end.0).contains(&t);
        for kind in [ProbeKind::Tcp, ProbeKind::Udp] {
            let half = PROBE_RTT_NS / 2.0 * noise();
            let up = half + if loaded { wait * noise() } else { 0.0 };
            out.push(ProbeSample {
                kind,
                t: Nanos(t),
                rtt: Some(Nanos((up + half) as u64)),
                connect: None,
                up: (kind == ProbeKind::Udp).then_some(up as i64),
                down: (kind == ProbeKind::Udp).then_some(half as i64),
            });
        }
        t += period;
    }
    LoadLatency {
        phases,
        probes: out,
        same_clock: true,
        summary: None,
    }
}

/// A scripted probe's round trip with no load, ns.
pub const PROBE_RTT_NS: f64 = 20_000.0;

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;

    #[test]
    fn deterministic_and_follows_the_model() {
        let mut spec = TestSpec::new(TestKind::TcpRr);
        spec.request_size = Bytes(1000);
        spec.response_size = Bytes(1000);
        let a = FakeRunner::new(7).run(&spec).unwrap();
        let b = FakeRunner::new(7).run(&spec).unwrap();
        assert_eq!(a, b);
        let p50 = a.rr.unwrap().latency.p50.0 as f64;
        let model = 2.0 * (A_NS_PER_BYTE * 1000.0 + B_RR_NS);
        assert!((p50 / model - 1.0).abs() <= 0.021, "{p50} vs {model}");
        let mut r = FakeRunner::new(7);
        let first = r.run(&spec).unwrap();
        let second = r.run(&spec).unwrap();
        assert_ne!(first, second, "repetitions differ by their noise");
    }
}
