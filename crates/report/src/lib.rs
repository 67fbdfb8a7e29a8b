//! Renderers for a [`TestReport`]: pure functions from a report to text.
//!
//! - [`text::render`]: the human summary `netsonde client` prints.
//! - [`json::document`]: the `--json` document (`docs/JSON.md` is its specification).
//! - [`json::interval_line`] and [`json::summary_line`]: `--jsonl` records.
//!
//! Every renderer has a golden test over the same fixture report.
#![forbid(unsafe_code)]

pub mod json;
pub mod text;

use netsonde_model::result::TestReport;

#[cfg(test)]
pub(crate) mod fixture;

/// Re-exported for callers that only render.
pub type Report = TestReport;
