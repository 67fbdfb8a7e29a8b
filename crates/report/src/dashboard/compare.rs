//! The compare page: a form for two run ids, and their comparison as tables
//! (each compared metric of each matched point; a search's loss-free rates),
//! the regressions highlighted, with the notes `netsonde compare` prints.

use std::fmt::Write;

use netsonde_analysis::comparison::{Compared, Comparison};
use netsonde_analysis::Verdict;
use netsonde_model::search::Goal;
use netsonde_model::units::PacketRate;

use super::esc;
use crate::compare::{p_value, verdict};

/// The compare form for `a` and `b` as typed, and under it the comparison
/// (or why there is none, in a line).
pub fn compare(
    a: Option<&str>,
    b: Option<&str>,
    result: Option<Result<&Comparison, &str>>,
) -> String {
    let mut o = format!(
        "<form method=\"get\" action=\"/compare\">baseline run <input name=\"a\" value=\"{}\" size=\"6\"> \
         against run <input name=\"b\" value=\"{}\" size=\"6\"> <button>compare</button></form>\n",
        esc(a.unwrap_or_default()),
        esc(b.unwrap_or_default())
    );
    match result {
        None => {}
        Some(Err(why)) => {
            let _ = write!(o, "<p class=\"error\">{}</p>", esc(why));
        }
        Some(Ok(c)) => table(&mut o, c),
    }
    o
}

fn row_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Worse => "worse",
        Verdict::Better => "better",
        Verdict::Same | Verdict::Undecided | Verdict::NotJudged => "",
    }
}

fn table(o: &mut String, c: &Comparison) {
    for w in &c.warnings {
        let _ = write!(o, "<p class=\"note\">warning: {}</p>", esc(w));
    }
    let _ = writeln!(
        o,
        "<div class=\"scroll\"><table class=\"comparison\"><tr><th>point</th><th>metric</th>\
         <th>run {a}: median</th><th>run {b}: median</th><th>change</th><th>counts from</th>\
         <th>p</th><th>verdict</th></tr>",
        a = c.a,
        b = c.b
    );
    match &c.body {
        Compared::Sweeps(s) => {
            for (label, d) in &s.rows {
                let (word, p) = verdict(d.verdict, d.p_worse, d.p_better);
                let why = d
                    .not_judged
                    .as_ref()
                    .map(|w| format!(": {w}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    o,
                    "<tr class=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{:+.1}%</td><td class=\"num\">{:.0}%</td><td class=\"num\">{}</td><td>{}</td></tr>",
                    row_class(d.verdict),
                    esc(label),
                    d.metric.name(),
                    esc(&d.metric.format(d.a.median)),
                    esc(&d.metric.format(d.b.median)),
                    100.0 * d.rel_change,
                    100.0 * d.min_change,
                    p_value(p),
                    esc(&format!("{word}{why}")),
                );
            }
            o.push_str("</table></div>\n");
            for n in &s.not_comparable {
                let _ = write!(
                    o,
                    "<p class=\"note\">not compared (the options differ): {}</p>",
                    esc(n)
                );
            }
        }
        Compared::Searches(s) => {
            for r in &s.rows {
                let d = &r.delta;
                let (word, p) = verdict(d.verdict, d.p_worse, d.p_better);
                let _ = writeln!(
                    o,
                    "<tr class=\"{}\"><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{:+.1}%</td><td class=\"num\">{:.1}%</td><td class=\"num\">{}</td><td>{word}</td></tr>",
                    row_class(d.verdict),
                    esc(&r.key),
                    if d.goal == Goal::Ndr { "NDR" } else { "PDR" },
                    PacketRate(d.a.median),
                    PacketRate(d.b.median),
                    100.0 * d.rel_change,
                    100.0 * d.min_change,
                    p_value(p),
                );
            }
            o.push_str("</table></div>\n");
            for n in &s.unjudged {
                let _ = write!(o, "<p class=\"note\">{}</p>", esc(n));
            }
        }
    }
}
