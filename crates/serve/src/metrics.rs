//! `--metrics ADDR`: a renderer's OpenMetrics text on `GET /metrics`, off the
//! data path. A scraper that asks for OpenMetrics (Prometheus does) gets it;
//! anything else (`curl`, `promtool check metrics`) gets the Prometheus text
//! format 0.0.4 it reads: a counter's HELP and TYPE name its `_total` sample,
//! and no `# UNIT` or `# EOF` lines.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use hyper::StatusCode;

use crate::http::{serve, Get, Handler, Page, ServeError};

/// What renders the OpenMetrics text at each scrape.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Serves `render()` on `GET /metrics` at `addr` until the process ends;
/// returns the address bound. Anything else is 404.
pub fn serve_metrics(addr: SocketAddr, render: Render) -> Result<SocketAddr, ServeError> {
    let handler: Handler = Arc::new(move |get: &Get| {
        if get.path != "/metrics" {
            return Page::not_found();
        }
        let text = render();
        if wants_openmetrics(get.accept.as_deref()) {
            Page {
                status: StatusCode::OK,
                content_type: OPENMETRICS,
                body: text,
            }
        } else {
            Page {
                status: StatusCode::OK,
                content_type: PROMETHEUS_TEXT,
                body: prometheus_text(&text),
            }
        }
    });
    serve(addr, "--metrics", handler)
}

/// Whether an `Accept` header asks for OpenMetrics.
fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.contains("application/openmetrics-text"))
}

/// OpenMetrics text as the Prometheus text format 0.0.4.
pub fn prometheus_text(openmetrics: &str) -> String {
    let counters: BTreeSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|p| {
            let rest = line.strip_prefix(p)?;
            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            counters
                .contains(name)
                .then(|| format!("{p}{name}_total {tail}"))
        });
        match renamed {
            Some(l) => out.push_str(l.trim_end()),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_by_their_samples_and_openmetrics_lines_go() {
        let om = "# HELP netsonde_rounds Rounds run.\n# TYPE netsonde_rounds counter\n\
                  netsonde_rounds_total 3\n# HELP netsonde_interval_seconds The interval.\n\
                  # TYPE netsonde_interval_seconds gauge\n# UNIT netsonde_interval_seconds seconds\n\
                  netsonde_interval_seconds 60.0\n# EOF\n";
        let text = prometheus_text(om);
        assert_eq!(
            text,
            "# HELP netsonde_rounds_total Rounds run.\n# TYPE netsonde_rounds_total counter\n\
             netsonde_rounds_total 3\n# HELP netsonde_interval_seconds The interval.\n\
             # TYPE netsonde_interval_seconds gauge\nnetsonde_interval_seconds 60.0\n"
        );
        assert!(wants_openmetrics(Some(
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        )));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(None));
    }
}
