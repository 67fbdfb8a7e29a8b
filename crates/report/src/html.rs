//! The HTML report: one self-contained file (inline CSS, inline SVG plots; no
//! scripts, external styles or fonts), so it can be mailed or archived.

use std::fmt::Write;

use crate::markup::esc;
use crate::plot::svg;
use crate::tables::tables;
use crate::view::RunView;

pub(crate) const STYLE: &str =
    "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\
td:nth-child(2),th:nth-child(2){text-align:left}\
th{background:#f0f0f0}.note{color:#555;font-size:.9em}\
.plots{display:flex;flex-wrap:wrap;gap:12px}.plot{border:1px solid #ddd}\
code{background:#f4f4f4;padding:1px 4px}\
table.heat td{text-align:center;min-width:6em}table.heat td.out{outline:3px solid #c0392b}\
table.heat td.failed{background:#eee;color:#777}table.heat td.none{color:#bbb}\
p.legend .scale i{display:inline-block;width:1.2em;height:0.9em;vertical-align:middle}\
p.legend .out{outline:2px solid #c0392b}p.legend .failed{background:#eee;color:#777}";

/// The answer first: what was measured, each test's best figure, a line per
/// point with its verdict, the warnings once; the evidence follows.
fn summary_section(s: &RunView) -> String {
    let sum = crate::summary::Summary::of(s);
    let mut o = String::from("<section id=\"summary\"><h2>Summary</h2>\n");
    let _ = writeln!(o, "<p>{}</p>", esc(&sum.measured()));
    let heads = sum.headlines();
    if !heads.is_empty() {
        o.push_str("<ul class=\"headline\">");
        for h in heads {
            let _ = write!(o, "<li>{}</li>", esc(&h));
        }
        o.push_str("</ul>\n");
    }
    o.push_str(&table_body(&sum.table()));
    if !sum.warnings.is_empty() {
        o.push_str("<p>What to keep in mind:</p><ul class=\"warnings\">");
        for w in crate::summary::warning_lines(&sum) {
            let _ = write!(o, "<li>{}</li>", esc(&w));
        }
        o.push_str("</ul>\n");
    }
    o.push_str(
        "<p class=\"note\">The evidence follows: the plots, then every table.</p></section>\n",
    );
    o
}

/// A titled table.
fn table(t: &crate::tables::Table) -> String {
    format!("<h2>{}</h2>\n{}", esc(&t.title), table_body(t))
}

/// A table's note and cells.
fn table_body(t: &crate::tables::Table) -> String {
    let mut o = String::new();
    if !t.note.is_empty() {
        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(&t.note));
    }
    let _ = write!(o, "<table><tr>");
    for h in &t.headers {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    let _ = writeln!(o, "</tr>");
    for row in &t.rows {
        let _ = write!(o, "<tr>");
        for c in row {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        let _ = writeln!(o, "</tr>");
    }
    let _ = writeln!(o, "</table>");
    o
}

/// The name of point `idx`'s page over time, beside the report.
pub fn point_page(idx: u32) -> String {
    format!("point-{idx}.html")
}

/// Links to each measured point's page over time (`sweep --samples`).
fn over_time(o: &mut String, s: &RunView) {
    let points: Vec<_> = s
        .points
        .iter()
        .filter(|p| p.spec.samples && p.status == "done")
        .collect();
    if points.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "<h2>Over time</h2><p class=\"note\">Each point's first repetition: each \
         flow's goodput, round trip, congestion window and retransmissions over time.</p>\
         <ul class=\"over-time\">"
    );
    for p in points {
        let axes: Vec<String> = p.axes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let _ = writeln!(
            o,
            "<li><a href=\"{}\">point {}: {}</a></li>",
            point_page(p.idx),
            p.idx,
            esc(&axes.join(", "))
        );
    }
    o.push_str("</ul>\n");
}

/// Renders the whole report.
pub fn render(s: &RunView) -> String {
    let mut o = String::new();
    let r = &s.run;
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>netsonde run {} — {}</title><style>{STYLE}</style></head><body>\n",
        r.id,
        esc(&r.label)
    );
    let _ = writeln!(o, "<h1>netsonde run {}: {}</h1>", r.id, esc(&r.label));
    let _ = writeln!(
        o,
        "<p class=\"note\">status {} · {} · netsonde {} · <code>{}</code></p>",
        esc(&r.status),
        esc(&s.measured_as()),
        esc(&r.tool_version),
        esc(&r.command)
    );
    o.push_str(&summary_section(s));
    if let Some(l) = &r.link {
        let _ = writeln!(o, "<p class=\"note\">lab link: {}</p>", esc(l));
    }
    for (name, h) in [("client", &r.client_host), ("server", &r.server_host)] {
        if h.as_ref().is_some_and(|h| h.kernel.is_empty()) {
            // An iperf3 peer says nothing of its host.
            let _ = writeln!(
                o,
                "<p class=\"note\">{name}: its host is unknown (a peer that does not report \
                 it, such as iperf3)</p>"
            );
        } else if let Some(h) = h {
            let _ = writeln!(
                o,
                "<p class=\"note\">{name}: {} · kernel {} · {} cores · {}{}</p>",
                esc(&h.hostname),
                esc(&h.kernel),
                h.cores,
                esc(&h.cpu_model),
                h.interface
                    .as_ref()
                    .map(|i| format!(" · {} MTU {}", esc(&i.name), i.mtu))
                    .unwrap_or_default()
            );
        }
    }
    let matrices = crate::mesh::matrices(s);
    if !matrices.is_empty() {
        let _ = writeln!(
            o,
            "<h2>Pairs</h2><p class=\"note\">Rows: source agent, columns: destination; \
             darker is faster, relative to the fastest pair of the test. Outlined: under \
             a quarter of the pairs' median.</p>"
        );
        for m in &matrices {
            o.push_str(&crate::mesh::html(m));
        }
    }
    if !s.plots.is_empty() {
        let _ = writeln!(o, "<h2>Plots</h2><div class=\"plots\">");
        for p in &s.plots {
            let _ = writeln!(
                o,
                "<div class=\"plot\" id=\"plot-{}\">{}</div>",
                esc(&p.id),
                svg(p)
            );
        }
        let _ = writeln!(o, "</div>");
    }
    o.push_str(&crate::breakdown_bars::section(s));
    over_time(&mut o, s);
    for t in tables(s) {
        o.push_str(&table(&t));
    }
    o.push_str("</body></html>\n");
    o
}
