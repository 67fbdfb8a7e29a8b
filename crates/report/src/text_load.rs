//! A load-latency test's part of the text report: latency per phase, what
//! the load added, one-way delays, responsiveness, fairness.

use std::fmt::Write;

use netsonde_model::load::LoadSummary;
use netsonde_model::units::Nanos;

fn ms(n: Option<Nanos>) -> String {
    n.map_or("-".into(), |n| format!("{:.2}", n.0 as f64 / 1e6))
}

/// A load-latency test: latency per phase, what the load added, one-way delays,
/// responsiveness, fairness and the flows over time.
pub(super) fn load(o: &mut String, l: &LoadSummary) {
    let _ = writeln!(
        o,
        "latency under load (ms; tcp: kept connection, udp: datagram echo, connect: new connection's handshake)"
    );
    let _ = writeln!(
        o,
        "  {:<7} {:<8} {:>8} {:>6} {:>9} {:>9} {:>9} {:>9}",
        "phase", "probe", "answered", "lost", "min", "p50", "p90", "p99"
    );
    for p in &l.phases {
        let _ = writeln!(
            o,
            "  {:<7} {:<8} {:>8} {:>6} {:>9} {:>9} {:>9} {:>9}",
            p.phase.name(),
            p.kind.name(),
            p.answered,
            p.lost,
            ms(p.min),
            ms(p.p50),
            ms(p.p90),
            ms(p.p99)
        );
    }
    if !l.added.is_empty() {
        let parts: Vec<String> = l
            .added
            .iter()
            .map(|a| {
                format!(
                    "{} {:+.2} ms (p90 {:+.2})",
                    a.kind.name(),
                    a.p50_ms,
                    a.p90_ms
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "added by the load (median, loaded - idle): {}",
            parts.join(", ")
        );
    }
    if let Some(w) = &l.one_way {
        let f = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.2}"));
        let clock = if w.clock == "exact" {
            "one clock, exact".to_string()
        } else {
            format!(
                "estimated clock offset {:.3} ms \u{b1} {:.3} ms",
                w.offset_ns as f64 / 1e6,
                w.uncertainty_ns as f64 / 1e6
            )
        };
        let _ = writeln!(
            o,
            "one-way delay (ms, median; {clock}): up {} idle, {} loaded; down {} idle, {} loaded",
            f(w.up_idle_ms),
            f(w.up_loaded_ms),
            f(w.down_idle_ms),
            f(w.down_loaded_ms)
        );
    }
    if let Some(r) = &l.responsiveness {
        let _ = writeln!(
            o,
            "responsiveness: {:.0} RPM ({}; confidence {:?}, {} s loaded{}); foreign {:.0}, loaded {:.0}{}",
            r.rpm,
            r.rating,
            r.confidence,
            r.intervals,
            if r.stable { ", stable" } else { ", not stable" },
            r.foreign_rpm,
            r.loaded_rpm,
            r.idle_rpm.map(|i| format!("; idle {i:.0} RPM")).unwrap_or_default()
        );
        let _ = writeln!(
            o,
            "  trimmed means {:.2} ms handshake, {:.2} ms request, {:.2} ms self; {}",
            r.tm_connect_ms, r.tm_request_ms, r.tm_self_ms, r.probes
        );
    }
    for f in &l.fairness {
        let _ = writeln!(
            o,
            "fairness {}: Jain's index {:.3} over {} flows; slowest {}, fastest {}{}",
            f.dir.name(),
            f.jain,
            f.flows,
            f.slowest,
            f.fastest,
            if f.jain_intervals.is_empty() {
                String::new()
            } else {
                let min = f.jain_intervals.iter().copied().fold(1.0, f64::min);
                format!("; per interval from {min:.3}")
            }
        );
    }
    for c in &l.caveats {
        let _ = writeln!(o, "  caveat: {c}");
    }
}
