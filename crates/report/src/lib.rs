//! Renderers for a [`TestReport`]: pure functions from a report to text.
//!
//! - [`text::render`]: the human summary `netsonde client` prints.
//! - [`json::document`]: the `--json` document (`docs/JSON.md` is its specification).
//! - [`json::interval_line`] and [`json::summary_line`]: `--jsonl` records.
//!
//! - [`view`]: the analysed view of a stored sweep run (tables, fits, knees,
//!   efficiency, plot specifications), rendered by [`html`], [`markdown`], [`csv`]
//!   and as JSON; [`plot`] draws plot specifications as SVG, and [`raster`]
//!   turns a figure into PNG (the crate's one I/O: reading the system's fonts).
//! - [`mesh`]: a mesh run's matrices of pairs (goodput per source and
//!   destination, outliers marked, each pair's verdict or failure), as text and
//!   as the HTML report's heat maps.
//! - [`dashboard`]: `netsonde dashboard`'s pages: a monitor's grids of pairs by
//!   state, a pair's history with its baseline band, the runs, compare.
//! - [`openmetrics`]: what `--metrics` serves: a server's health and the last
//!   result of each pair and test, in the OpenMetrics text format.
//! - [`timeseries`]: one test over time (each flow's goodput, RTT, cwnd and
//!   retransmissions, the probes' latency), as `client --report DIR`'s page.
//! - [`search`]: a loss-free rate search's rows and tables.
//! - [`summary`]: what a sweep, a search and a mesh end with on the terminal and
//!   `runs show` prints (one line per point, the warnings once, where the report
//!   and the run are), as text fitted to a width or as one JSON document.
//!
//! Every renderer has a golden test over fixed inputs.
#![forbid(unsafe_code)]

pub mod breakdown_bars;
pub mod compare;
pub mod csv;
pub mod dashboard;
pub mod figure;
pub mod html;
pub mod json;
mod layout;
pub use layout::{prose_fitted, wrapped};
pub mod load_plot;
pub mod markdown;
mod markup;
pub mod mesh;
pub mod openmetrics;
pub mod output;
pub mod plot;
pub mod raster;
pub mod search;
pub mod summary;
pub mod tables;
pub mod text;
mod text_mptcp;
pub mod timeseries;
pub mod view;

use netsonde_model::result::TestReport;

#[cfg(any(test, feature = "fixture"))]
#[doc(hidden)]
pub mod fixture;
#[cfg(test)]
mod view_tests;

/// Re-exported for callers that only render.
pub type Report = TestReport;

/// Stored text as a terminal may print it: every control character (an
/// escape that would drive the terminal, a newline that would fake a line)
/// written as its escape (`\u{1b}`). Labels come from whoever wrote the store.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if s.chars().any(char::is_control) {
        s.chars()
            .map(|c| {
                if c.is_control() {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod printable_tests {
    #[test]
    fn control_characters_are_shown_escaped() {
        assert_eq!(super::printable("plain label"), "plain label");
        assert_eq!(
            super::printable("a\u{1b}[31mred\nfake"),
            "a\\u{1b}[31mred\\nfake"
        );
    }
}
