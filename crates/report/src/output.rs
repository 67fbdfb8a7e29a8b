//! A single test as `netsonde client` writes it: human text, one JSON document,
//! JSON lines, or iperf3 3.17's JSON stream; each with its interval lines.

use netsonde_model::result::{IntervalRecord, TestReport};

use crate::json;
use crate::text::{self, TextOptions};

/// How a test is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Human text.
    Text,
    /// `--json`: one document at the end.
    Json,
    /// `--jsonl`: an interval per line, then the summary.
    Jsonl,
    /// `--json-stream`: iperf3's events, a line each.
    JsonStream,
}

impl Output {
    /// What is written before the test starts, if anything: the stream's
    /// `start` event.
    pub fn start(self, start: &impl serde::Serialize) -> Option<String> {
        (self == Output::JsonStream).then(|| json::stream_event("start", start))
    }

    /// One interval record's line (`None`: this output writes none).
    pub fn interval(self, opts: &TextOptions, rec: &IntervalRecord) -> Option<String> {
        Some(match self {
            Output::Jsonl => json::interval_line(rec),
            Output::JsonStream => json::stream_event("interval", rec),
            Output::Text => opts.titled(&format!(
                "[{:>6.2}-{:>6.2} s] {:<15} {:>12} {:>16} {:>8} msgs {:>8} trans",
                rec.start.as_secs_f64(),
                rec.end.as_secs_f64(),
                rec.dir.name(),
                rec.bytes.to_string(),
                opts.rate(rec.rate),
                rec.messages,
                rec.transactions
            )),
            Output::Json => return None,
        })
    }

    /// The finished report.
    pub fn report(self, opts: &TextOptions, report: &TestReport) -> String {
        match self {
            Output::Text => text::render_with(report, opts),
            Output::Json => json::document(report) + "\n",
            Output::Jsonl => json::summary_line(report) + "\n",
            Output::JsonStream => json::stream_event("end", report) + "\n",
        }
    }
}
