//! `netsonde dashboard`'s pages, rendered on the server from the store (no
//! script, no build step): each monitor's grid of pairs per test coloured by
//! state against each pair's own normal, with the change against it; its
//! agents; a pair's history as plots over time with its normal's band, its
//! degraded and failed rounds marked; the runs with links to their reports;
//! and two runs compared as a table. The pages that change refresh
//! themselves. Pure: the `serve` crate reads the store and serves them.

use std::collections::BTreeMap;
use std::fmt::Write;

use netsonde_model::sweep::{Metric, Unit};
use netsonde_model::watch::{AgentWatch, PairState, PairWatch};

mod compare;
mod pair;

pub use compare::compare;
pub use pair::pair_history;

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}\
nav a{margin-right:1em}h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}\
table{border-collapse:collapse;font-size:.9em;margin:.5em 0}td,th{border:1px solid #ccc;padding:4px 8px}\
th{background:#f0f0f0}td.cell{text-align:center;min-width:7em}td.cell a{color:inherit;text-decoration:none;display:block}\
.ok{background:#d8f0d8}.learning{background:#e6e9f2}.inconclusive{background:#eeeeee;color:#555}\
.degraded{background:#f7c873}.failed{background:#e8837b;color:#fff}.down{background:#e8837b;color:#fff}\
td.none{color:#bbb;text-align:center}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.legend span{padding:1px 6px;margin-right:4px}tr.worse td{background:#fbe3cf}tr.better td{background:#e0f3e0}\
.note{color:#555;font-size:.9em}.plots{display:flex;flex-wrap:wrap;gap:12px}.plots svg{max-width:100%;height:auto}\
.scroll{overflow-x:auto}";

/// How often the pages that change reload themselves, seconds.
pub const REFRESH_SECS: u32 = 60;

/// `<`, `>`, `&` and quotes escaped.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A query string's value, escaped for a link.
fn q(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// A page with its title and the navigation; `refresh`: it reloads itself
/// every [`REFRESH_SECS`] (a `<meta>` refresh: no script).
pub fn page(title: &str, body: &str, refresh: bool) -> String {
    let meta = if refresh {
        format!("<meta http-equiv=\"refresh\" content=\"{REFRESH_SECS}\">")
    } else {
        String::new()
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{meta}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t} — netsonde</title><style>{STYLE}</style></head><body>\n<nav><a href=\"/\">pairs</a>\
         <a href=\"/agents\">agents</a><a href=\"/runs\">runs</a><a href=\"/compare\">compare</a></nav>\n\
         <h1>{t}</h1>\n{body}</body></html>\n",
        t = esc(title)
    )
}

/// A pair's latest headline figure as a cell shows it.
fn figure(p: &PairWatch) -> String {
    p.metrics
        .first()
        .map(|m| show(&m.metric, m.latest))
        .unwrap_or_default()
}

/// A relative change as a cell shows it: `-40%`, `+3%`.
fn change(c: Option<f64>) -> String {
    c.map(|c| format!("{:+.0}%", 100.0 * c)).unwrap_or_default()
}

/// A figure of a stored metric in its unit.
pub fn show(metric: &str, v: f64) -> String {
    use netsonde_model::units::{BitRate, Nanos};
    match Metric::from_name(metric).map(Metric::unit) {
        Some(Unit::BitRate) => BitRate(v).to_string(),
        Some(Unit::Nanos) => Nanos(v.max(0.0) as u64).to_string(),
        Some(Unit::Percent) => format!("{v:.2}%"),
        Some(Unit::UsPerKib) => format!("{v:.3} µs/KiB"),
        Some(Unit::Micros) => format!("{v:.2} µs"),
        Some(Unit::PerSecond) => format!("{v:.0}/s"),
        _ => format!("{v:.3}"),
    }
}

/// The states' legend.
fn legend() -> String {
    let mut o = String::from("<p class=\"legend note\">Each pair against its own normal: ");
    for (s, what) in [
        (PairState::Ok, "within it"),
        (PairState::Learning, "too few rounds yet"),
        (
            PairState::Inconclusive,
            "a host was busy or throttled: not judged",
        ),
        (
            PairState::Degraded,
            "worse in 2 of its last 3 judged rounds",
        ),
        (PairState::Failed, "its test failed"),
    ] {
        let _ = write!(o, "<span class=\"{n}\">{n}</span>{what}; ", n = s.name());
    }
    o.push_str("the percentage is the latest figure against the normal.</p>");
    o
}

/// One cell of a grid: the pair's latest figure, its change against its
/// normal and its state, linked to its history.
fn cell(label: &str, p: &PairWatch) -> String {
    let title = match &p.verdict {
        Some(v) => format!("{}; verdict: {v}", p.why),
        None => p.why.clone(),
    };
    format!(
        "<td class=\"cell {state}\" data-src=\"{s}\" data-dst=\"{d}\" data-state=\"{state}\" \
         title=\"{title}\"><a href=\"/pair?monitor={ql}&amp;src={qs}&amp;dst={qd}&amp;test={qt}\">\
         {fig}<br><small><span class=\"change\">{ch}</span> {state}</small></a></td>",
        state = p.state.name(),
        s = esc(&p.src),
        d = esc(&p.dst),
        title = esc(&title),
        ql = q(label),
        qs = q(&p.src),
        qd = q(&p.dst),
        qt = q(&p.test),
        fig = esc(&figure(p)),
        ch = esc(&change(p.change)),
    )
}

/// The grids of one monitor: a table per test, rows the source agent,
/// columns the destination, each cell its latest figure, its change against
/// its normal and its state, linked to the pair's history.
pub fn grids(label: &str, pairs: &[PairWatch], last_round: Option<i64>) -> String {
    let mut o = format!(
        "<section class=\"monitor\" data-monitor=\"{}\">",
        esc(label)
    );
    let count = |s: PairState| pairs.iter().filter(|p| p.state == s).count();
    let _ = writeln!(
        o,
        "<h2>{}</h2><p>{} pair test(s): {} degraded, {} failed, {} inconclusive; latest round {}.</p>{}",
        esc(label),
        pairs.len(),
        count(PairState::Degraded),
        count(PairState::Failed),
        count(PairState::Inconclusive),
        last_round.map_or("-".into(), when),
        legend()
    );
    let mut tests: Vec<&str> = Vec::new();
    for p in pairs {
        if !tests.contains(&p.test.as_str()) {
            tests.push(&p.test);
        }
    }
    for test in tests {
        let cells: BTreeMap<(&str, &str), &PairWatch> = pairs
            .iter()
            .filter(|p| p.test == test)
            .map(|p| ((p.src.as_str(), p.dst.as_str()), p))
            .collect();
        let mut names: Vec<&str> = cells.keys().flat_map(|(s, d)| [*s, *d]).collect();
        names.sort_unstable();
        names.dedup();
        let _ = write!(
            o,
            "<h3>{}</h3><div class=\"scroll\"><table class=\"grid\" data-test=\"{}\"><tr><th>from \\ to</th>",
            esc(test),
            esc(test)
        );
        for n in &names {
            let _ = write!(o, "<th>{}</th>", esc(n));
        }
        o.push_str("</tr>\n");
        for src in &names {
            let _ = write!(o, "<tr><th>{}</th>", esc(src));
            for dst in &names {
                match cells.get(&(*src, *dst)) {
                    None => o.push_str("<td class=\"none\">·</td>"),
                    Some(p) => o.push_str(&cell(label, p)),
                }
            }
            o.push_str("</tr>\n");
        }
        o.push_str("</table></div>\n");
    }
    o.push_str("</section>\n");
    o
}

/// A monitor's agents: up or down (down: none of its tests in the latest
/// round was measured), its failed pair-tests, when a round last measured it.
pub fn agents(label: &str, agents: &[AgentWatch]) -> String {
    let mut o = format!(
        "<section class=\"agents\" data-monitor=\"{l}\"><h2>{l}</h2><table class=\"agents\">\
         <tr><th>agent</th><th>state</th><th>failed pair-tests (latest round)</th><th>last measured</th><th>why</th></tr>\n",
        l = esc(label)
    );
    for a in agents {
        let state = if a.up { "up" } else { "down" };
        let _ = writeln!(
            o,
            "<tr data-agent=\"{n}\" data-state=\"{state}\"><td>{n}</td><td class=\"{cls}\">{state}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>",
            a.failed_pairs,
            a.last_seen_unix_s.map_or("never".into(), when),
            esc(a.why.as_deref().unwrap_or("")),
            n = esc(&a.name),
            cls = if a.up { "ok" } else { "down" },
        );
    }
    o.push_str("</table></section>\n");
    o
}

/// Unix seconds as `YYYY-MM-DD HH:MM UTC`.
pub fn when(unix: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| unix.to_string())
}

/// A stored run as the runs page lists it.
#[derive(Debug, Clone)]
pub struct RunLine {
    /// Its id.
    pub id: i64,
    /// When it started, Unix seconds.
    pub at: i64,
    /// Its label.
    pub label: String,
    /// Its status.
    pub status: String,
    /// Points done.
    pub done: u64,
    /// Points planned.
    pub total: u64,
}

/// The stored runs, newest first, each linked to its report.
pub fn runs(rows: &[RunLine]) -> String {
    let mut o = String::from(
        "<table class=\"runs\"><tr><th>run</th><th>started</th><th>label</th><th>status</th><th>points</th></tr>\n",
    );
    for r in rows {
        let _ = writeln!(
            o,
            "<tr><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}/{}</td></tr>",
            when(r.at),
            esc(&r.label),
            esc(&r.status),
            r.done,
            r.total,
            id = r.id,
        );
    }
    o.push_str("</table>\n");
    o
}

#[cfg(test)]
mod tests;
