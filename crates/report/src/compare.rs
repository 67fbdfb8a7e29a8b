//! A [`Comparison`] of two runs as text (`netsonde compare`): the warnings, how
//! the changes were judged, one line per compared metric (or per search point's
//! NDR and PDR) with both medians, the change, the threshold, the p-value and the
//! verdict, and what was not compared and why.

use netsonde_analysis::comparison::{Compared, Comparison, SearchComparison, SweepComparison};
use netsonde_analysis::{reps_for, smallest_p, Verdict, FAMILY_ALPHA};
use netsonde_model::search::Goal;
use netsonde_model::sweep::Estimate;
use netsonde_model::units::PacketRate;

/// The comparison as `netsonde compare` prints it.
pub fn text(c: &Comparison) -> String {
    let mut o = String::new();
    for w in &c.warnings {
        o.push_str(&format!("warning: {w}\n"));
    }
    match &c.body {
        Compared::Sweeps(s) => sweeps(&mut o, c, s),
        Compared::Searches(s) => searches(&mut o, c, s),
    }
    o
}

pub(crate) fn p_value(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// The word and the p-value a verdict is shown with.
pub(crate) fn verdict(v: Verdict, p_worse: f64, p_better: f64) -> (&'static str, f64) {
    match v {
        Verdict::Better => ("better", p_better),
        Verdict::Worse => ("REGRESSION", p_worse),
        Verdict::Same => ("same", p_worse.min(p_better)),
        Verdict::Undecided => ("undecided", p_worse.min(p_better)),
        Verdict::NotJudged => ("not judged", p_worse.min(p_better)),
    }
}

fn sweeps(o: &mut String, c: &Comparison, s: &SweepComparison) {
    let (a, b) = (c.a, c.b);
    let family = s.family();
    o.push_str(&format!(
        "{family} comparisons over {} point(s); a change is significant when the exact one-sided \
         Mann-Whitney test passes Holm's procedure at a 5% family level and exceeds its metric's \
         practical change (column min){}\n",
        s.points(),
        match s.rows.len() - family {
            0 => String::new(),
            n => format!("; {n} shown, not judged (why under each)"),
        }
    ));
    let need = reps_for(family, FAMILY_ALPHA);
    if s.min_reps < need {
        o.push_str(&format!(
            "note: with {} repetition(s) a side, the smallest p-value is {:.3}; {family} \
             comparisons need {need} per run for any change to be significant (--repeat {need})\n",
            s.min_reps,
            smallest_p(s.min_reps, s.min_reps),
        ));
    }
    o.push_str(&format!(
        "\n  {:<20} {:>34} {:>34} {:>8} {:>4} {:>8}  {}\n",
        "metric",
        format!("run {a}: median [interval]"),
        format!("run {b}: median [interval]"),
        "change",
        "min",
        "p",
        "verdict"
    ));
    let mut last = "";
    for (label, d) in &s.rows {
        if label != last {
            o.push_str(&format!("{label}\n"));
            last = label;
        }
        let shown = |e: &Estimate| {
            let f = |v| d.metric.format(v);
            match (e.ci_low, e.ci_high) {
                (Some(l), Some(h)) => format!("{} [{}, {}]", f(e.median), f(l), f(h)),
                _ => format!("{} (n = {})", f(e.median), e.n),
            }
        };
        let (word, p) = verdict(d.verdict, d.p_worse, d.p_better);
        o.push_str(&format!(
            "  {:<20} {:>34} {:>34} {:>+7.1}% {:>3.0}% {:>8}  {word}\n",
            d.metric.name(),
            shown(&d.a),
            shown(&d.b),
            d.rel_change * 100.0,
            d.min_change * 100.0,
            p_value(p)
        ));
        if let Some(why) = &d.not_judged {
            o.push_str(&format!("    not judged: {why}; {}\n", why.hint()));
        }
    }
    let worse: Vec<String> = s
        .rows
        .iter()
        .filter(|(_, d)| d.verdict == Verdict::Worse)
        .map(|(label, d)| {
            format!(
                "  {label}: {} {:+.1}%\n",
                d.metric.name(),
                d.rel_change * 100.0
            )
        })
        .collect();
    if worse.is_empty() && s.min_reps < need {
        o.push_str(&format!(
            "\nnothing is judged worse in run {b}, but with {} repetition(s) a side no change \
             could be (--repeat {need})\n",
            s.min_reps
        ));
    } else if worse.is_empty() {
        o.push_str(&format!("\nnothing got worse in run {b} beyond noise\n"));
    } else {
        o.push_str(&format!("\nworse in run {b}:\n{}", worse.concat()));
    }
    if !s.moved.is_empty() {
        o.push_str(
            "\nwhere the CPU moved (each end's flow threads, medians; the category that \
             changed most, against the whole breakdown's change):\n",
        );
        for m in &s.moved {
            o.push_str(&format!(
                "  {} {}: {} {:.3} -> {:.3} {} ({:+.3}), of {:.3} -> {:.3} ({:+.3})\n",
                m.point,
                m.side,
                m.category.label(),
                m.cost.0,
                m.cost.1,
                m.unit,
                m.cost.1 - m.cost.0,
                m.total.0,
                m.total.1,
                m.total.1 - m.total.0
            ));
        }
    }
    for n in &s.not_comparable {
        o.push_str(&format!("not compared (the options differ): {n}\n"));
    }
    if s.unmatched > 0 {
        o.push_str(&format!(
            "{} point(s) of run {b} have no counterpart in run {a}\n",
            s.unmatched
        ));
    }
}

fn searches(o: &mut String, c: &Comparison, s: &SearchComparison) {
    let (a, b) = (c.a, c.b);
    if let Some((la, lb)) = s.pdr_skipped {
        o.push_str(&format!(
            "note: PDR not compared: run {a} allows {:.2}% loss and run {b} {:.2}%\n",
            100.0 * la,
            100.0 * lb
        ));
    }
    let n = s.rows.len();
    o.push_str(&format!(
        "{n} comparisons of loss-free rates: each point's repeated searches (search --repeat) \
         are its repetitions; a change is significant when the exact one-sided Mann-Whitney \
         test passes Holm's procedure at a 5% family level and exceeds {:.1}%\n",
        100.0 * s.rows.first().map_or(0.0, |r| r.delta.min_change)
    ));
    let need = reps_for(n, FAMILY_ALPHA);
    if s.min_reps < need {
        o.push_str(&format!(
            "note: with {} search(es) a point, the smallest p-value is {:.3}; {n} comparisons \
             need {need} searches a point in each run for any change to be significant \
             (search --repeat {need}); one search's rate moves between runs (on loopback by 10% \
             and more)\n",
            s.min_reps,
            smallest_p(s.min_reps, s.min_reps),
        ));
    }
    let shown = |e: &Estimate, xs: &[f64]| {
        let r = |v: f64| PacketRate(v).to_string();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        if e.n > 1 {
            format!("{} [{} – {}, {}]", r(e.median), r(lo), r(hi), e.n)
        } else {
            format!("{} (1 search)", r(e.median))
        }
    };
    o.push_str(&format!(
        "\n  {:<16} {:<4} {:>40} {:>40} {:>8} {:>8}  verdict\n",
        "point",
        "",
        format!("run {a}: median [range, searches]"),
        format!("run {b}: median [range, searches]"),
        "change",
        "p"
    ));
    for r in &s.rows {
        let d = &r.delta;
        // A search's rate has no sample count to fall short of: never "not judged".
        let v = match d.verdict {
            Verdict::NotJudged => Verdict::Same,
            v @ (Verdict::Better | Verdict::Worse | Verdict::Same | Verdict::Undecided) => v,
        };
        let (word, p) = verdict(v, d.p_worse, d.p_better);
        o.push_str(&format!(
            "  {:<16} {:<4} {:>40} {:>40} {:>+7.1}% {:>8}  {word}\n",
            r.key,
            if d.goal == Goal::Ndr { "NDR" } else { "PDR" },
            shown(&d.a, &r.values[0]),
            shown(&d.b, &r.values[1]),
            100.0 * d.rel_change,
            p_value(p)
        ));
    }
    for u in &s.unjudged {
        o.push_str(&format!("{u}\n"));
    }
    if s.unmatched > 0 {
        o.push_str(&format!(
            "{} point(s) of run {b} have no counterpart in run {a}\n",
            s.unmatched
        ));
    }
}
