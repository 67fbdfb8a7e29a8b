//! Fixed reports for golden tests, built through `TestReport::assemble` so that the
//! summary logic is covered by the snapshots too.

use std::collections::BTreeMap;

use netsonde_model::cpu::{CoreUsage, CpuReport, ProcessUsage};
use netsonde_model::host::{HostFacts, InterfaceFacts};
use netsonde_model::result::*;
use netsonde_model::spec::{Direction, FlowDir, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos, Percent};

fn host(name: &str) -> HostFacts {
    let mut sysctls = BTreeMap::new();
    sysctls.insert("net.core.rmem_max".into(), "4194304".into());
    HostFacts {
        hostname: name.into(),
        kernel: "6.1.0-test".into(),
        cpu_model: "Test CPU @ 3.0GHz".into(),
        cores: 2,
        sysctls,
        interface: Some(InterfaceFacts {
            name: "lo".into(),
            mtu: 65536,
            nic: None,
        }),
        tool_version: "0.1.0".into(),
        boot_id: String::new(),
    }
}

fn core(n: Option<u32>, user: f64, sys: f64, softirq: f64) -> CoreUsage {
    CoreUsage {
        core: n,
        user: Percent(user),
        sys: Percent(sys),
        softirq: Percent(softirq),
        idle: Percent(100.0 - user - sys - softirq),
        ..CoreUsage::default()
    }
}

fn cpu(busy: f64) -> CpuReport {
    CpuReport {
        elapsed: Nanos::from_secs(10),
        cores: vec![
            core(Some(0), 10.0, 40.0, 10.0),
            core(Some(1), 5.0, 30.0, 5.0),
        ],
        total: core(None, 7.5, 35.0, 7.5),
        busy_cores: busy,
        process: ProcessUsage {
            user: Nanos::from_millis(700),
            sys: Nanos::from_millis(4200),
            voluntary_ctxsw: 1200,
            involuntary_ctxsw: 30,
        },
        threads: Some(Nanos::from_millis(3500)),
        others: Some(Nanos::from_millis(200)),
        pid: 1,
        udp_drops: None,
        flow_threads: Vec::new(),
        nic: None,
        ..CpuReport::default()
    }
}

fn flow(id: u32, dir: FlowDir, role: Role, bytes: u64) -> FlowResult {
    FlowResult {
        id,
        dir,
        role,
        bytes_total: Bytes(bytes + 1000),
        bytes: Bytes(bytes),
        messages: bytes / 131_072,
        calls: bytes / 131_072 + 7,
        transactions: 0,
        transactions_total: 0,
        elapsed: Nanos::from_secs(10),
        datagrams_sent: None,
        tcp_info: None,
        udp: None,
        latency: None,
        io: None,
        mptcp: None,
        stall: None,
    }
}

fn tcp_info() -> TcpInfoSummary {
    TcpInfoSummary {
        retransmits: 3,
        cwnd: 120,
        mss: 65483,
        pmtu: 65535,
        srtt: Nanos(45_000),
        rttvar: Nanos(12_000),
        delivery_rate: BitRate(2.5e10),
        busy: Nanos::from_secs(10),
        rwnd_limited: Nanos::from_millis(120),
        sndbuf_limited: Nanos::from_millis(3400),
        min_rtt: Nanos(30_000),
        bytes_sent: 31_300_000_000,
        bytes_retrans: 4_344,
        ..TcpInfoSummary::default()
    }
}

/// A bidirectional TCP stream with intervals.
pub fn stream_report() -> TestReport {
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.direction = Direction::Bidir;
    spec.interval = Some(Nanos::from_secs(5));
    spec.window = Some(Bytes(4 << 20));
    let mut up_s = flow(0, FlowDir::Up, Role::Sender, 10_000_000_000);
    up_s.tcp_info = Some(tcp_info());
    let down_r = flow(1, FlowDir::Down, Role::Receiver, 8_000_000_000);
    let up_r = flow(0, FlowDir::Up, Role::Receiver, 10_000_000_000);
    let mut down_s = flow(1, FlowDir::Down, Role::Sender, 8_000_000_000);
    down_s.tcp_info = Some(tcp_info());
    let socket = SocketFacts {
        sndbuf: 4_194_304,
        rcvbuf: 4_194_304,
        mss: Some(65483),
        congestion: Some("bbr".into()),
    };
    let client = SideResult {
        tcp_samples: Vec::new(),
        host: host("client"),
        flows: vec![up_s, down_r],
        cpu: Some(cpu(1.0)),
        socket: Some(socket.clone()),
    };
    let server = SideResult {
        tcp_samples: Vec::new(),
        host: host("server"),
        flows: vec![up_r, down_s],
        cpu: Some(cpu(0.75)),
        socket: Some(socket),
    };
    let intervals = [FlowDir::Up, FlowDir::Down]
        .into_iter()
        .flat_map(|dir| {
            (0..2).map(move |i| IntervalRecord {
                start: Nanos::from_secs(5 * i),
                end: Nanos::from_secs(5 * i + 5),
                dir,
                bytes: Bytes(5_000_000_000),
                rate: BitRate(8e9),
                messages: 38_147,
                transactions: 0,
                udp: None,
                subflows: None,
            })
        })
        .collect();
    TestReport::assemble(
        spec,
        "192.0.2.1:5300".into(),
        client,
        server,
        intervals,
        None,
    )
}

/// A TCP request/response test.
pub fn rr_report() -> TestReport {
    let spec = TestSpec::new(TestKind::TcpRr);
    let mut req = flow(0, FlowDir::Up, Role::Requester, 160_000);
    req.transactions = 80_000;
    req.transactions_total = 80_000;
    req.messages = 80_000;
    req.calls = 160_000;
    let mut resp = req.clone();
    resp.role = Role::Responder;
    let latency = LatencySummary {
        count: 80_000,
        min: Nanos(95_000),
        mean: Nanos(124_000),
        stddev: Nanos(9_000),
        p50: Nanos(121_000),
        p90: Nanos(131_000),
        p99: Nanos(170_000),
        p999: Nanos(420_000),
        max: Nanos(2_100_000),
    };
    let client = SideResult {
        tcp_samples: Vec::new(),
        host: host("client"),
        flows: vec![req],
        cpu: Some(cpu(0.5)),
        socket: None,
    };
    let server = SideResult {
        tcp_samples: Vec::new(),
        host: host("server"),
        flows: vec![resp],
        cpu: Some(cpu(0.5)),
        socket: None,
    };
    TestReport::assemble(
        spec,
        "embedded 127.0.0.1:40000".into(),
        client,
        server,
        vec![],
        Some(latency),
    )
}

/// A plan's points measured by the scripted engine; each point in `failed`
/// failed with a reason instead; with `diagnose`, each done point carries the
/// verdict of its first repetition.
fn fake_points(
    plan: &netsonde_sweep::Plan,
    failed: &[u32],
    diagnose: bool,
) -> Vec<crate::view::PointView> {
    use netsonde_sweep::exec::{summarize, Runner};
    use netsonde_sweep::fake::FakeRunner;

    let (points, _) = plan.points();
    let mut runner = FakeRunner::new(42);
    let line_rate = plan.line_rate.map(|r| r.bps());
    points
        .iter()
        .map(|p| {
            let base = crate::view::PointView {
                breakdown: Vec::new(),
                diagnosis: None,
                search: None,
                idx: p.idx,
                axes: p.axes.clone(),
                spec: p.spec.clone(),
                status: "failed".into(),
                reason: Some("agent c did not answer within 10 s".into()),
                summary: None,
            };
            if failed.contains(&p.idx) {
                return base;
            }
            let reports: Vec<_> = (0..plan.repeat)
                .map(|_| runner.run(&p.spec).unwrap())
                .collect();
            let reps: Vec<_> = reports
                .iter()
                .map(netsonde_model::sweep::Metrics::from_report)
                .collect();
            crate::view::PointView {
                breakdown: Vec::new(),
                diagnosis: diagnose.then(|| {
                    netsonde_analysis::diagnose(&netsonde_analysis::input_from_report(
                        &reports[0],
                        line_rate,
                    ))
                }),
                status: "done".into(),
                reason: None,
                summary: Some(summarize(&p.spec, &reps)),
                ..base
            }
        })
        .collect()
}

/// A fixture run's metadata.
fn meta(id: i64, label: &str, plan: &netsonde_sweep::Plan) -> crate::view::RunMeta {
    let mut h = host("client");
    h.interface = Some(InterfaceFacts {
        name: "veth0".into(),
        mtu: 1500,
        nic: None,
    });
    crate::view::RunMeta {
        id,
        label: label.into(),
        created_at: 1_700_000_000,
        tool_version: "0.1.0".into(),
        command: "netsonde sweep --fake".into(),
        status: "complete".into(),
        client_host: Some(h),
        server_host: Some(host("server")),
        line_rate: plan.line_rate.map(|r| r.bps()),
        repeat: plan.repeat,
        link: None,
        link_rtt_ns: None,
        mesh_agents: Vec::new(),
        search: None,
    }
}

/// A deterministic sweep, run through the scripted engine: stream tests in three
/// directions and two windows, and an RR test, over four sizes.
pub fn study() -> crate::view::RunView {
    let mut plan = netsonde_sweep::Plan::default_characterization();
    plan.directions = vec![Direction::Out, Direction::In, Direction::Bidir];
    plan.sizes = netsonde_sweep::axes::parse_sizes("64..16K*4").unwrap();
    plan.windows = vec![Some(Bytes(16 * 1024)), Some(Bytes(64 * 1024))];
    plan.line_rate = Some(BitRate(1e10));
    crate::view::RunView::build(meta(7, "fixture", &plan), fake_points(&plan, &[], false))
}

/// A sweep of tcp-stream, tls-stream, quic-stream and udp-stream over three
/// sizes, through the scripted engine.
pub fn transports() -> crate::view::RunView {
    use netsonde_model::spec::TestKind;
    let mut plan = netsonde_sweep::Plan::default_characterization();
    plan.tests = vec![
        TestKind::TcpStream,
        TestKind::TlsStream,
        TestKind::QuicStream,
        TestKind::UdpStream,
    ];
    plan.directions = vec![Direction::Out];
    plan.sizes = netsonde_sweep::axes::parse_sizes("1K,16K,64K").unwrap();
    crate::view::RunView::build(meta(9, "transports", &plan), fake_points(&plan, &[], false))
}

/// The scripted engine's default sweep, each point with its verdict.
pub fn sweep() -> crate::view::RunView {
    let plan = netsonde_sweep::Plan::default_characterization();
    crate::view::RunView::build(
        meta(3, "characterization", &plan),
        fake_points(&plan, &[], true),
    )
}

/// A mesh of three agents, all to all, a stream and an RR test of 64 KiB;
/// the pair c -> a failed.
pub fn mesh() -> crate::view::RunView {
    use netsonde_sweep::mesh::{Agent, Mesh, Pattern};
    let mut plan = netsonde_sweep::Plan::default_characterization();
    plan.sizes = vec![Bytes(1024), Bytes(64 * 1024)];
    plan.tests = vec![TestKind::TcpStream];
    let agents = ["a=10.0.0.1", "b=10.0.0.2", "c=10.0.0.3"]
        .iter()
        .map(|a| Agent::parse(a, 5300).unwrap())
        .collect();
    plan.mesh = Some(Mesh::new(agents, Pattern::parse("all-to-all").unwrap()).unwrap());
    let points = fake_points(&plan, &[], true);
    let failed: Vec<u32> = points
        .iter()
        .filter(|p| p.axes.get("src").is_some_and(|s| s == "c") && p.axes["dst"] == "a")
        .map(|p| p.idx)
        .collect();
    let mut m = meta(5, "mesh", &plan);
    m.mesh_agents = vec!["a".into(), "b".into(), "c".into()];
    crate::view::RunView::build(m, fake_points(&plan, &failed, true))
}

/// A UDP loss-free rate search of two frame sizes by two strategies: the
/// large frames found, the small ones' search spent its trials, and one
/// strategy's sender the limit.
pub fn search() -> crate::view::RunView {
    use netsonde_model::search::{Bounds, SearchConfig, SearchOutcome, Trial};
    use netsonde_sweep::search_plan::SearchPlan;
    let plan = SearchPlan {
        tcp: false,
        frames: Some(vec![64, 1518]),
        io: vec!["copy".parse().unwrap(), "batch".parse().unwrap()],
        tx_io: None,
        trial: Nanos::from_secs(1),
        warmup: Nanos::from_millis(250),
        window: Some(Bytes(4 << 20)),
        back_to_back: false,
    }
    .plan()
    .unwrap();
    let (points, _) = plan.points();
    let trial = |pps: f64, lost: u64| Trial {
        asked_pps: Some(pps),
        offered_pps: pps,
        sent: pps as u64,
        lost,
        rcvbuf_errors: Some(lost),
        sndbuf_errors: Some(0),
        ring_drops: None,
    };
    let views = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ndr = [310e3, 820e3, 81.2e3, 81.2e3][i % 4];
            let bounds = |lower: f64| Bounds {
                lower: Some(lower),
                upper: Some(lower * 1.008),
                found: true,
            };
            crate::view::PointView {
                breakdown: Vec::new(),
                diagnosis: None,
                idx: p.idx,
                axes: p.axes.clone(),
                spec: p.spec.clone(),
                status: "done".into(),
                reason: None,
                summary: None,
                search: Some(SearchOutcome {
                    ndr: bounds(ndr),
                    pdr: bounds(ndr * 1.02),
                    sender_bound: i == 3,
                    trials: vec![
                        trial(ndr * 2.0, 1000),
                        trial(ndr, 0),
                        trial(ndr * 1.008, 12),
                    ],
                    converged: i != 0,
                    back_to_back: None,
                    latency: Vec::new(),
                    repeats: Vec::new(),
                }),
            }
        })
        .collect();
    let mut m = meta(9, "search", &plan);
    m.search = Some(crate::view::SearchMeta {
        config: SearchConfig::default(),
        trial: Nanos::from_secs(1),
        warmup: Nanos::from_millis(250),
        tcp: false,
        link_bps: None,
    });
    crate::view::RunView::build(m, views)
}

/// A load-latency test (`--probe`): [`stream_report`] with 20 ms round trips
/// idle, 200 ms loaded, and each flow's readings every 100 ms.
pub fn load_report() -> TestReport {
    use netsonde_model::load::{
        FlowSamples, LoadLatency, Phases, ProbeKind, ProbeSample, TcpSample,
    };
    let mut r = stream_report();
    r.spec.probe = Some(netsonde_model::spec::ProbeSpec::default());
    let phases = Phases {
        load_start: Nanos::from_secs(2),
        measured_start: Nanos::from_secs(2),
        measured_end: Nanos::from_secs(12),
        load_end: Nanos::from_secs(12),
        end: Nanos::from_secs(14),
    };
    let mut probes = Vec::new();
    for i in 0..280u64 {
        let t = Nanos::from_millis(i * 50);
        let rtt = if phases.at(t) == netsonde_model::load::Phase::Loaded {
            Nanos::from_millis(200 + i % 7)
        } else {
            Nanos::from_millis(20)
        };
        for kind in ProbeKind::ALL {
            probes.push(ProbeSample {
                kind,
                t,
                rtt: Some(rtt),
                connect: (kind == ProbeKind::Connect).then_some(rtt),
                up: (kind == ProbeKind::Udp).then(|| rtt.0 as i64 - 10_000_000),
                down: (kind == ProbeKind::Udp).then_some(10_000_000),
            });
        }
    }
    let samples = |flow: u32, rate: u64| FlowSamples {
        flow,
        samples: (0..=100u64)
            .map(|k| TcpSample {
                t: Nanos::from_millis(k * 100),
                bytes_acked: rate / 8 * k / 10,
                srtt: Nanos::from_millis(190),
                cwnd: 100,
                retransmits: k / 10,
            })
            .collect(),
    };
    r.client.tcp_samples = vec![samples(0, 8_000_000_000)];
    r.server.tcp_samples = vec![samples(1, 6_400_000_000)];
    let mut load = LoadLatency {
        phases,
        probes,
        same_clock: true,
        summary: None,
    };
    r.load = Some(load.clone());
    load.summary = netsonde_analysis::load::summarize(&r);
    r.load = Some(load);
    r
}
