//! The Markdown report (`netsonde report RUN --format md`).

use std::fmt::Write;

use crate::tables::tables;
use crate::view::RunView;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// One table as a Markdown section: its title as a heading, its note, its rows.
pub fn table(t: &crate::tables::Table) -> String {
    format!("\n## {}\n\n{}", t.title, table_body(t))
}

/// A table's note and rows.
fn table_body(t: &crate::tables::Table) -> String {
    let mut o = String::new();
    if !t.note.is_empty() {
        let _ = writeln!(o, "{}\n", t.note);
    }
    let row = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    o.push_str(&row(&t.headers));
    let _ = writeln!(o, "|{}", "---|".repeat(t.headers.len()));
    for r in &t.rows {
        o.push_str(&row(r));
    }
    o
}

/// Renders the report as Markdown tables.
pub fn render(s: &RunView) -> String {
    render_inner(s, false)
}

/// The report with its figures linked (`ID.svg`, which the caller writes beside
/// it, as `netsonde report --format md` does).
pub fn with_figures(s: &RunView) -> String {
    render_inner(s, true)
}

fn render_inner(s: &RunView, figures: bool) -> String {
    let mut o = String::new();
    let r = &s.run;
    let _ = writeln!(o, "# netsonde run {}: {}\n", r.id, r.label);
    let _ = writeln!(
        o,
        "- status: {}, {}, netsonde {}",
        r.status,
        s.measured_as(),
        r.tool_version
    );
    let _ = writeln!(o, "- command: `{}`", r.command);
    if let Some(l) = &r.link {
        let _ = writeln!(o, "- lab link: {l}");
    }
    for (name, h) in [("client", &r.client_host), ("server", &r.server_host)] {
        if h.as_ref().is_some_and(|h| h.kernel.is_empty()) {
            // An iperf3 server says nothing of its host.
            let _ = writeln!(
                o,
                "- {name}: its host is unknown (a peer that does not report it, such as iperf3)"
            );
        } else if let Some(h) = h {
            let _ = writeln!(
                o,
                "- {name}: {} kernel {}, {} cores, {}{}",
                h.hostname,
                h.kernel,
                h.cores,
                h.cpu_model,
                h.interface
                    .as_ref()
                    .map(|i| format!(", {} MTU {}", i.name, i.mtu))
                    .unwrap_or_default()
            );
        }
    }
    // The answer first: what was measured, each test's best, each point's
    // figure and verdict, the warnings once.
    let sum = crate::summary::Summary::of(s);
    let _ = writeln!(o, "\n## Summary\n\n{}\n", sum.measured());
    for h in sum.headlines() {
        let _ = writeln!(o, "- {h}");
    }
    o.push('\n');
    o.push_str(&table_body(&sum.table()));
    if !sum.warnings.is_empty() {
        o.push_str("\nWhat to keep in mind:\n\n");
        for w in crate::summary::warning_lines(&sum) {
            let _ = writeln!(o, "- {}", cell(&w));
        }
    }
    if figures && !s.plots.is_empty() {
        let _ = writeln!(o, "\n## Figures\n");
        for p in &s.plots {
            // `netsonde report --format md` writes each figure beside the report.
            let _ = writeln!(o, "![{}]({}.svg)\n", p.title, p.id);
        }
    }
    for t in tables(s) {
        o.push_str(&table(&t));
    }
    o
}
