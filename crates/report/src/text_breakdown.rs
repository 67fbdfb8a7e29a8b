//! Where each end's CPU went, as the text report's CPU section says it: a line
//! per end from its sampled call chains, or once why they were not taken.

use std::fmt::Write;

use netsonde_model::profile::{Category, CostShare, CpuBreakdown, Profile};
use netsonde_model::result::{SideCost, TestReport};

/// Where each end's flow threads' CPU went, a line per end; or, once, why it
/// was not taken.
pub(super) fn breakdown(o: &mut String, r: &TestReport) {
    let mut why_not: Vec<(&str, &str)> = Vec::new();
    let mut elsewhere_why: Vec<&str> = Vec::new();
    for (name, side, cost) in [
        ("client", &r.client, &r.client_cost),
        ("server", &r.server, &r.server_cost),
    ] {
        match side.cpu.as_ref().and_then(|c| c.profile.as_ref()) {
            Some(Profile::Taken(b)) => {
                if let Some(line) = breakdown_line(name, b, cost.as_ref()) {
                    let _ = writeln!(o, "  {line}");
                }
                if let Some(w) = b.elsewhere_why.as_deref() {
                    if !elsewhere_why.contains(&w) {
                        elsewhere_why.push(w);
                    }
                }
            }
            Some(Profile::NotTaken { why }) => why_not.push((name, why)),
            None => {}
        }
    }
    for w in elsewhere_why {
        let _ = writeln!(o, "  ({w})");
    }
    match why_not.as_slice() {
        [] => {}
        [(_, a), (_, b)] if a == b => {
            let _ = writeln!(o, "  CPU breakdown not taken: {a}");
        }
        ends => {
            for (name, why) in ends {
                let _ = writeln!(o, "  {name} CPU breakdown not taken: {why}");
            }
        }
    }
}

/// "client 0.412 us/KiB in its flow threads = copy 25%, TCP/IP 47%, ...
/// (11858 cpu-clock samples, 4000/s of CPU, 433 unclassified)".
pub(crate) fn breakdown_line(
    name: &str,
    b: &CpuBreakdown,
    cost: Option<&SideCost>,
) -> Option<String> {
    if b.samples == 0 {
        return Some(format!(
            "{name} CPU breakdown: no samples (its flow threads hardly ran)"
        ));
    }
    let shares = cost.map(|c| c.breakdown.as_slice()).unwrap_or_default();
    let per = |f: fn(&CostShare) -> Option<f64>| {
        let v: Vec<f64> = shares.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>())
    };
    let total = match (per(|s| s.us_per_transaction), per(|s| s.us_per_kib)) {
        (Some(t), _) => format!("{t:.2} us/trans"),
        (None, Some(k)) => format!("{k:.3} us/KiB"),
        _ => "CPU".into(),
    };
    let mut cats: Vec<(Category, f64)> = Category::ALL
        .iter()
        .map(|&c| (c, b.share(c)))
        .filter(|(_, s)| *s > 0.0)
        .collect();
    cats.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> = cats
        .iter()
        .filter(|(_, s)| *s >= 0.01)
        .map(|(c, s)| format!("{} {:.0}%", c.label(), 100.0 * s))
        .collect();
    let rest = cats.len() - shown.len();
    let more = if rest > 0 {
        format!(", {rest} under 1%")
    } else {
        String::new()
    };
    let rate = 1e9 / b.period.0.max(1) as f64;
    let mut caveats = format!("{} {} samples, {rate:.0}/s of CPU", b.samples, b.event);
    // The part that is the test's share of the kernel's work outside processes.
    let outside: f64 = shares
        .iter()
        .map(|s| s.elsewhere.unwrap_or(0.0) * s.us_per_transaction.or(s.us_per_kib).unwrap_or(0.0))
        .sum();
    if outside > 0.0 {
        caveats.push_str(&format!(
            "; {outside:.3} of it its share of the kernel's network work outside processes"
        ));
    }
    if b.unclassified > 0 {
        caveats.push_str(&format!(", {} unclassified", b.unclassified));
    }
    if b.lost > 0 {
        caveats.push_str(&format!(", {} lost", b.lost));
    }
    Some(format!(
        "{name} {total} in its flow threads = {}{more} ({caveats})",
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use netsonde_model::profile::CategorySamples;
    use netsonde_model::units::Nanos;

    use super::*;

    fn taken(counts: &[(Category, u64)]) -> Profile {
        Profile::Taken(Box::new(CpuBreakdown {
            event: "cpu-clock".into(),
            period: Nanos(250_000),
            classifier: 1,
            samples: counts.iter().map(|c| c.1).sum::<u64>() + 3,
            lost: 0,
            categories: counts
                .iter()
                .map(|&(category, samples)| CategorySamples {
                    category,
                    samples,
                    user: 0,
                })
                .collect(),
            unclassified: 3,
            top: Vec::new(),
            threads: Vec::new(),
            elsewhere: None,
            elsewhere_why: None,
            clock: None,
        }))
    }

    #[test]
    fn each_end_says_where_its_cpu_went_in_a_line() {
        let mut r = crate::fixture::stream_report();
        let spent = [
            (Category::DataCopy, 550),
            (Category::TcpIp, 290),
            (Category::Locks, 5),
        ];
        for side in [&mut r.client, &mut r.server] {
            side.cpu.as_mut().unwrap().profile = Some(taken(&spent));
            side.cpu.as_mut().unwrap().threads = Some(Nanos(1_000_000_000));
        }
        r = TestReport::assemble(
            r.spec.clone(),
            r.server_address.clone(),
            r.client,
            r.server,
            r.intervals,
            None,
        );
        let mut o = String::new();
        breakdown(&mut o, &r);
        let lines: Vec<&str> = o.lines().collect();
        assert_eq!(lines.len(), 2, "{o}");
        assert!(lines[0].starts_with("  client "), "{o}");
        assert!(lines[0].contains(" us/KiB in its flow threads = copy 65%, TCP/IP 34%, 1 under 1% (848 cpu-clock samples, 4000/s of CPU, 3 unclassified)"), "{o}");
    }

    #[test]
    fn a_breakdown_not_taken_is_said_once() {
        let mut r = crate::fixture::stream_report();
        for side in [&mut r.client, &mut r.server] {
            side.cpu.as_mut().unwrap().profile = Some(Profile::NotTaken {
                why: "not permitted: kernel.perf_event_paranoid is 2".into(),
            });
        }
        let mut o = String::new();
        breakdown(&mut o, &r);
        assert_eq!(
            o,
            "  CPU breakdown not taken: not permitted: kernel.perf_event_paranoid is 2\n"
        );
    }
}
