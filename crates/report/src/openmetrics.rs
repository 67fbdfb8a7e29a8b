//! The OpenMetrics text a server, agent or mesh serves on `--metrics`: its own
//! health (sessions by outcome, tests running, the budget held) and the last
//! result of each pair and test (goodput, latency percentiles, loss, CPU per
//! byte, and the verdict as a labelled gauge), through `prometheus-client`.

use netsonde_model::health::{PairResult, ServerHealth};
use netsonde_model::result::TestReport;
use netsonde_model::sweep::{Metric, Metrics};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// A finished test's last figures as one pair's result (`src` ran the client
/// against `dst`); `at_unix_s` is when it ended.
pub fn pair_result(src: &str, dst: &str, report: &TestReport, at_unix_s: u64) -> PairResult {
    let m = Metrics::from_report(report);
    let quota = report
        .client
        .cpu
        .as_ref()
        .and_then(|c| c.cgroup.as_ref())
        .filter(|g| g.quota_cores.is_some());
    let test = if report.spec.test.is_rr() {
        report.spec.test.name().to_string()
    } else {
        format!(
            "{} {}",
            report.spec.test.name(),
            report.spec.direction.name()
        )
    };
    PairResult {
        src: src.into(),
        dst: dst.into(),
        test,
        goodput_bps: m.value(Metric::Goodput),
        latency_p50_s: m.value(Metric::LatencyP50).map(|ns| ns / 1e9),
        latency_p99_s: m.value(Metric::LatencyP99).map(|ns| ns / 1e9),
        loss_ratio: m.value(Metric::Loss).map(|pct| pct / 100.0),
        rpm: report
            .load
            .as_ref()
            .and_then(|l| l.summary.as_ref())
            .and_then(|s| s.responsiveness.as_ref())
            .map(|r| r.rpm),
        client_us_per_kib: m.value(Metric::ClientUsPerKib),
        client_cpu_quota_cores: quota.and_then(|g| g.quota_cores),
        client_throttled_ratio: quota.and_then(|g| g.throttled_pct()).map(|p| p / 100.0),
        verdict: report
            .diagnosis
            .as_ref()
            .and_then(|d| serde_json::to_value(&d.bottleneck).ok())
            .and_then(|v| v["kind"].as_str().map(str::to_string))
            .unwrap_or_else(|| "undiagnosed".into()),
        at_unix_s,
    }
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn health(reg: &mut Registry, h: &ServerHealth) {
    let sessions = Family::<Labels, Counter>::default();
    for ((protocol, outcome), n) in &h.sessions {
        sessions
            .get_or_create(&labels(&[("protocol", protocol), ("outcome", outcome)]))
            .inc_by(*n);
    }
    reg.register(
        "netsonde_sessions",
        "Sessions ended, by protocol (netsonde, iperf3, netsonde-job) and outcome (ok, refused, failed, dropped)",
        sessions,
    );
    let gauge = |reg: &mut Registry, name: &str, help: &str, v: u64| {
        let g = Gauge::<i64>::default();
        g.set(v as i64);
        reg.register(name, help, g);
    };
    gauge(
        reg,
        "netsonde_running_tests",
        "Tests running now",
        h.running_tests,
    );
    gauge(
        reg,
        "netsonde_connections",
        "Control connections open now",
        h.connections,
    );
    let budget = Family::<Labels, Gauge<i64>>::default();
    for (kind, held, total) in [
        ("memory_bytes", h.held.memory, h.budget.memory),
        ("threads", h.held.threads, h.budget.threads),
        ("fds", h.held.fds, h.budget.fds),
    ] {
        budget
            .get_or_create(&labels(&[("resource", kind), ("of", "held")]))
            .set(held as i64);
        budget
            .get_or_create(&labels(&[("resource", kind), ("of", "budget")]))
            .set(total as i64);
    }
    reg.register(
        "netsonde_budget",
        "What running sessions hold of the budget, and its size, per resource",
        budget,
    );
    if let Some(q) = &h.quic_perf {
        quic_perf(reg, q);
    }
}

/// A `--quic-perf` server's counts since it started.
fn quic_perf(reg: &mut Registry, q: &netsonde_model::health::QuicPerfCounts) {
    let conns = Family::<Labels, Counter>::default();
    for (outcome, n) in [("accepted", q.connections), ("refused", q.refused)] {
        conns
            .get_or_create(&labels(&[("outcome", outcome)]))
            .inc_by(n);
    }
    reg.register(
        "netsonde_quic_perf_connections",
        "Connections the QUIC perf server (--quic-perf) accepted, and refused at its limit",
        conns,
    );
    let requests = Counter::<u64>::default();
    requests.inc_by(q.requests);
    reg.register(
        "netsonde_quic_perf_requests",
        "Perf-protocol requests the QUIC perf server answered",
        requests,
    );
    let bytes = Family::<Labels, Counter>::default();
    for (dir, n) in [("read", q.read_bytes), ("sent", q.sent_bytes)] {
        bytes
            .get_or_create(&labels(&[("direction", dir)]))
            .inc_by(n);
    }
    reg.register(
        "netsonde_quic_perf_bytes",
        "Bytes the QUIC perf server read from uploads and handed to the stack in answers",
        bytes,
    );
}

fn results(reg: &mut Registry, results: &[PairResult]) {
    let family = || Family::<Labels, FloatGauge>::default();
    let (quota, throttled) = (family(), family());
    let (goodput, p50, p99, loss, rpm, cpu, verdict, at) = (
        family(),
        family(),
        family(),
        family(),
        family(),
        family(),
        family(),
        family(),
    );
    for r in results {
        let l = labels(&[("src", &r.src), ("dst", &r.dst), ("test", &r.test)]);
        for (g, v) in [
            // Base units, as Prometheus asks: bytes and seconds.
            (&goodput, r.goodput_bps.map(|b| b / 8.0)),
            (&p50, r.latency_p50_s),
            (&p99, r.latency_p99_s),
            (&loss, r.loss_ratio),
            (&rpm, r.rpm),
            (&cpu, r.client_us_per_kib.map(|us| us * 1e-6 / 1024.0)),
            (&quota, r.client_cpu_quota_cores),
            (&throttled, r.client_throttled_ratio),
            (&at, Some(r.at_unix_s as f64)),
        ] {
            if let Some(v) = v {
                g.get_or_create(&l).set(v);
            }
        }
        let mut vl = l.clone();
        vl.push(("verdict".into(), r.verdict.clone()));
        verdict.get_or_create(&vl).set(1.0);
    }
    let with_unit = |reg: &mut Registry, name: &str, help: &str, unit: Unit, f| {
        reg.register_with_unit(name, help, unit, f)
    };
    reg.register(
        "netsonde_pair_client_cpu_quota_cores",
        "The CPU quota of the client's cgroup (a container's limit), in cores; absent without one",
        quota,
    );
    reg.register(
        "netsonde_pair_client_throttled_ratio",
        "Share of the client cgroup's quota periods in which it was throttled over the last test",
        throttled,
    );
    with_unit(
        reg,
        "netsonde_pair_goodput",
        "Last goodput of the pair's test, all directions",
        Unit::Other("bytes_per_second".into()),
        goodput,
    );
    with_unit(
        reg,
        "netsonde_pair_latency_p50",
        "Last median transaction latency",
        Unit::Seconds,
        p50,
    );
    with_unit(
        reg,
        "netsonde_pair_latency_p99",
        "Last 99th percentile transaction latency",
        Unit::Seconds,
        p99,
    );
    with_unit(
        reg,
        "netsonde_pair_loss",
        "Last share of datagrams lost",
        Unit::Other("ratio".into()),
        loss,
    );
    reg.register(
        "netsonde_pair_rpm",
        "Last responsiveness, round trips per minute (--probe)",
        rpm,
    );
    with_unit(
        reg,
        "netsonde_pair_client_cpu",
        "Last client CPU time per byte moved (service demand)",
        Unit::Other("seconds_per_byte".into()),
        cpu,
    );
    reg.register(
        "netsonde_pair_verdict",
        "What limited the pair's last test: 1 for its verdict",
        verdict,
    );
    with_unit(
        reg,
        "netsonde_pair_last_result_timestamp",
        "When the pair's last test ended",
        Unit::Seconds,
        at,
    );
}

/// A watched metric's name with its base unit, as Prometheus asks, and its
/// value in that unit (`goodput` in bit/s is `goodput_bytes_per_second`).
fn in_base_unit(metric: &str, v: f64) -> (String, f64) {
    use netsonde_model::sweep::Unit as U;
    let (suffix, value) = match Metric::from_name(metric).map(Metric::unit) {
        Some(U::BitRate) => ("bytes_per_second", v / 8.0),
        Some(U::Nanos) => ("seconds", v / 1e9),
        Some(U::Percent) => ("ratio", v / 100.0),
        Some(U::UsPerKib) => ("seconds_per_byte", v * 1e-6 / 1024.0),
        Some(U::Micros) => ("seconds", v * 1e-6),
        Some(U::PerSecond) => ("per_second", v),
        _ => ("", v),
    };
    let name = match (metric.strip_suffix("_per_sec"), suffix) {
        (Some(stem), "per_second") => format!("{stem}_per_second"),
        (_, "") => metric.to_string(),
        _ => format!("{metric}_{suffix}"),
    };
    (name, value)
}

/// A monitor's view: each pair's state (one gauge per state, 1 for the one
/// it is in), its latest figures and its baseline (median, low, high), in
/// base units, labelled by agent names; and how the rounds go.
fn watch(reg: &mut Registry, w: &netsonde_model::watch::Watched) {
    let with_unit = |reg: &mut Registry, name: &str, help: &str, unit: Unit, f| {
        reg.register_with_unit(name, help, unit, f)
    };
    use netsonde_model::watch::PairState;
    let family = || Family::<Labels, FloatGauge>::default();
    let (state, latest, baseline, worse) = (family(), family(), family(), family());
    for p in &w.pairs {
        let pair = [
            ("src", p.src.as_str()),
            ("dst", p.dst.as_str()),
            ("test", p.test.as_str()),
        ];
        if let Some(r) = p.worse_ratio {
            worse.get_or_create(&labels(&pair)).set(r);
        }
        for s in PairState::ALL {
            let mut l = labels(&pair);
            l.push(("state".into(), s.name().into()));
            state
                .get_or_create(&l)
                .set(if s == p.state { 1.0 } else { 0.0 });
        }
        for m in &p.metrics {
            let (name, v) = in_base_unit(&m.metric, m.latest);
            let mut l = labels(&pair);
            l.push(("metric".into(), name.clone()));
            latest.get_or_create(&l).set(v);
            if let Some(b) = m.baseline {
                for (bound, x) in [("median", b.median), ("low", b.low), ("high", b.high)] {
                    let mut lb = l.clone();
                    lb.push(("bound".into(), bound.into()));
                    baseline
                        .get_or_create(&lb)
                        .set(in_base_unit(&m.metric, x).1);
                }
            }
        }
    }
    reg.register(
        "netsonde_pair_state",
        "The pair's test against its own normal: 1 for its state (ok, learning, inconclusive, degraded, failed)",
        state,
    );
    with_unit(
        reg,
        "netsonde_pair_worse",
        "How much worse than its normal the pair's worst watched metric is (0.9: 90% below a normal that is better higher); 0 when none is worse",
        Unit::Other("ratio".into()),
        worse,
    );
    reg.register(
        "netsonde_pair_latest",
        "The pair's latest round, per metric, in the base unit its name ends with",
        latest,
    );
    reg.register(
        "netsonde_pair_baseline",
        "The pair's normal over its past rounds, per metric: median, low and high",
        baseline,
    );
    let g = |v: f64| {
        let g = FloatGauge::default();
        g.set(v);
        g
    };
    let c = |v: u64| {
        let c = Counter::<u64>::default();
        c.inc_by(v);
        c
    };
    reg.register(
        "netsonde_monitor_rounds",
        "Rounds this monitor ran",
        c(w.rounds),
    );
    reg.register(
        "netsonde_monitor_skipped_rounds",
        "Slots skipped because a round ran past the next one's start",
        c(w.skipped),
    );
    reg.register_with_unit(
        "netsonde_monitor_interval",
        "The interval between rounds",
        Unit::Seconds,
        g(w.every_s),
    );
    if let Some(t) = w.last_round_unix_s {
        reg.register_with_unit(
            "netsonde_monitor_last_round_timestamp",
            "When the last round started",
            Unit::Seconds,
            g(t as f64),
        );
    }
    reg.register(
        "netsonde_monitor_store_up",
        "1 when the last write to the results store worked, 0 while it is out of reach",
        g(if w.store_up { 1.0 } else { 0.0 }),
    );
    reg.register(
        "netsonde_monitor_held_rounds",
        "Rounds measured and held in memory until the results store takes them",
        g(w.held_rounds as f64),
    );
    agents(reg, &w.agents);
}

/// Each agent as the monitor's latest round saw it.
fn agents(reg: &mut Registry, agents: &[netsonde_model::watch::AgentWatch]) {
    let family = || Family::<Labels, FloatGauge>::default();
    let (up, failed, seen) = (family(), family(), family());
    for a in agents {
        let l = labels(&[("agent", &a.name)]);
        up.get_or_create(&l).set(if a.up { 1.0 } else { 0.0 });
        failed.get_or_create(&l).set(f64::from(a.failed_pairs));
        if let Some(t) = a.last_seen_unix_s {
            seen.get_or_create(&l).set(t as f64);
        }
    }
    reg.register(
        "netsonde_agent_up",
        "1 unless none of the agent's pair-tests in the latest round was measured and some failed",
        up,
    );
    reg.register(
        "netsonde_agent_failed_pairs",
        "The agent's pair-tests that failed in the latest round, at either end",
        failed,
    );
    reg.register_with_unit(
        "netsonde_agent_last_seen_timestamp",
        "When a round last measured a test of the agent",
        Unit::Seconds,
        seen,
    );
}

/// What a monitor serves on `--metrics`: its view of every pair
/// (each pair's state, latest figures and baseline) and each pair's last result.
pub fn render_monitor(w: &netsonde_model::watch::Watched, last: &[PairResult]) -> String {
    let mut reg = Registry::default();
    watch(&mut reg, w);
    results(&mut reg, last);
    let mut out = String::new();
    let _ = encode(&mut out, &reg);
    out
}

/// The OpenMetrics exposition of a server's health (if it is one) and of the
/// last results it knows.
pub fn render(health_now: Option<&ServerHealth>, last: &[PairResult]) -> String {
    let mut reg = Registry::default();
    if let Some(h) = health_now {
        health(&mut reg, h);
    }
    results(&mut reg, last);
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = encode(&mut out, &reg);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_and_results_render_as_openmetrics() {
        let mut h = ServerHealth::default();
        h.sessions.insert(("netsonde".into(), "ok".into()), 3);
        h.sessions
            .insert(("netsonde-job".into(), "refused".into()), 1);
        h.running_tests = 1;
        h.held.memory = 1 << 20;
        h.budget.memory = 1 << 30;
        let r = PairResult {
            src: "h1".into(),
            dst: "h2".into(),
            test: "tcp-stream out".into(),
            goodput_bps: Some(9.4e7),
            latency_p50_s: None,
            latency_p99_s: None,
            loss_ratio: None,
            rpm: None,
            client_us_per_kib: Some(0.5),
            client_cpu_quota_cores: Some(0.3),
            client_throttled_ratio: Some(1.0),
            verdict: "link".into(),
            at_unix_s: 1_800_000_000,
        };
        let text = render(Some(&h), &[r]);
        assert!(
            text.contains(r#"netsonde_sessions_total{protocol="netsonde",outcome="ok"} 3"#),
            "{text}"
        );
        assert!(text.contains("netsonde_running_tests 1"), "{text}");
        assert!(
            text.contains(r#"netsonde_budget{resource="memory_bytes",of="held"} 1048576"#),
            "{text}"
        );
        assert!(text.contains(r#"netsonde_pair_goodput_bytes_per_second{src="h1",dst="h2",test="tcp-stream out"} 11750000"#), "{text}");
        assert!(
            text.contains(
                r#"netsonde_pair_verdict{src="h1",dst="h2",test="tcp-stream out",verdict="link"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"netsonde_pair_client_cpu_quota_cores{src="h1",dst="h2",test="tcp-stream out"} 0.3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"netsonde_pair_client_throttled_ratio{src="h1",dst="h2",test="tcp-stream out"} 1.0"#),
            "{text}"
        );
        // A figure the test did not have is not exported as zero.
        assert!(
            !text.contains("netsonde_pair_latency_p50_seconds{"),
            "{text}"
        );
        assert!(!text.contains("netsonde_quic_perf"), "{text}");
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
        // A server with a QUIC perf server says what it answered.
        h.quic_perf = Some(netsonde_model::health::QuicPerfCounts {
            connections: 5,
            refused: 1,
            requests: 9,
            read_bytes: 1000,
            sent_bytes: 2000,
        });
        let text = render(Some(&h), &[]);
        for line in [
            r#"netsonde_quic_perf_connections_total{outcome="accepted"} 5"#,
            r#"netsonde_quic_perf_connections_total{outcome="refused"} 1"#,
            "netsonde_quic_perf_requests_total 9",
            r#"netsonde_quic_perf_bytes_total{direction="sent"} 2000"#,
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }

    /// Issue 38: a monitor serves each pair's state (one series per state, 1
    /// for the one it is in) and its baseline, in base units.
    #[test]
    fn a_monitor_serves_each_pairs_state_and_baseline() {
        use netsonde_model::watch::{
            AgentWatch, Baseline, MetricWatch, PairState, PairWatch, Watched,
        };
        let pair = |src: &str, state| PairWatch {
            src: src.into(),
            dst: "h9".into(),
            test: "tcp-stream".into(),
            state,
            why: String::new(),
            verdict: None,
            metrics: vec![MetricWatch {
                metric: "goodput".into(),
                latest: 8e9,
                baseline: Some(Baseline {
                    median: 9.6e9,
                    low: 9.2e9,
                    high: 9.8e9,
                    spread: 0.1e9,
                    rounds: 5,
                }),
                change: Some(-0.17),
                worse: true,
            }],
            change: Some(-0.17),
            worse_ratio: Some(if state == PairState::Degraded {
                0.17
            } else {
                0.0
            }),
            worse_of: (2, 3),
            run: 3,
            at_unix_s: 1_700_000_000,
        };
        let agent = |name: &str, up| AgentWatch {
            name: name.into(),
            up,
            failed_pairs: if up { 0 } else { 4 },
            why: None,
            last_seen_unix_s: Some(1_700_000_000),
        };
        let w = Watched {
            pairs: vec![pair("h1", PairState::Degraded), pair("h2", PairState::Ok)],
            rounds: 6,
            skipped: 1,
            last_round_unix_s: Some(1_700_000_000),
            every_s: 600.0,
            agents: vec![agent("h1", true), agent("h3", false)],
            store_up: false,
            held_rounds: 2,
        };
        let text = render_monitor(&w, &[]);
        for want in [
            r#"netsonde_pair_state{src="h1",dst="h9",test="tcp-stream",state="degraded"} 1.0"#,
            r#"netsonde_pair_state{src="h1",dst="h9",test="tcp-stream",state="ok"} 0.0"#,
            r#"netsonde_pair_state{src="h2",dst="h9",test="tcp-stream",state="ok"} 1.0"#,
            r#"netsonde_pair_baseline{src="h1",dst="h9",test="tcp-stream",metric="goodput_bytes_per_second",bound="median"} 1200000000.0"#,
            r#"netsonde_pair_latest{src="h1",dst="h9",test="tcp-stream",metric="goodput_bytes_per_second"} 1000000000.0"#,
            "netsonde_monitor_skipped_rounds_total 1",
            "netsonde_monitor_interval_seconds 600.0",
            r#"netsonde_pair_worse_ratio{src="h1",dst="h9",test="tcp-stream"} 0.17"#,
            r#"netsonde_pair_worse_ratio{src="h2",dst="h9",test="tcp-stream"} 0.0"#,
            r#"netsonde_pair_state{src="h1",dst="h9",test="tcp-stream",state="inconclusive"} 0.0"#,
            r#"netsonde_agent_up{agent="h3"} 0.0"#,
            r#"netsonde_agent_failed_pairs{agent="h3"} 4.0"#,
            r#"netsonde_agent_last_seen_timestamp_seconds{agent="h1"} 1700000000.0"#,
            "netsonde_monitor_store_up 0.0",
            "netsonde_monitor_held_rounds 2.0",
        ] {
            assert!(text.contains(want), "{want}\n{text}");
        }
    }
}
