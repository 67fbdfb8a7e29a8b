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
}

fn results(reg: &mut Registry, results: &[PairResult]) {
    let family = || Family::<Labels, FloatGauge>::default();
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
        Unit::Ratios,
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
        // A figure the test did not have is not exported as zero.
        assert!(
            !text.contains("netsonde_pair_latency_p50_seconds{"),
            "{text}"
        );
        assert!(text.trim_end().ends_with("# EOF"), "{text}");
    }
}
