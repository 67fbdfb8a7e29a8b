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
            // Within 80 columns: a request/response test's transactions, a
            // stream's messages; an MPTCP direction's subflows beneath.
            Output::Text => opts.titled(&crate::text_mptcp::with_subflows(
                rec,
                |b| opts.rate(b),
                format!(
                    "[{:>6.2}-{:>6.2} s] {:<14} {:>11} {:>13} {:>9} {}",
                    rec.start.as_secs_f64(),
                    rec.end.as_secs_f64(),
                    rec.dir.name(),
                    rec.bytes.to_string(),
                    opts.rate(rec.rate),
                    if rec.transactions > 0 {
                        rec.transactions
                    } else {
                        rec.messages
                    },
                    if rec.transactions > 0 {
                        "trans"
                    } else {
                        "msgs"
                    }
                ),
            )),
            Output::Json => return None,
        })
    }

    /// What is written when the test fails, if anything, beside the one line
    /// on standard error: as iperf3 does, a `-J` document with `error` (and
    /// the empty `start`, `intervals` and `end` iperf3 gives), the stream's
    /// `error` event, or an `error` record. Text writes none.
    pub fn error(self, message: &str) -> Option<String> {
        match self {
            Output::Text => None,
            Output::Json => Some(
                serde_json::to_string_pretty(&serde_json::json!({
                    "start": {},
                    "intervals": [],
                    "end": {},
                    "error": message,
                }))
                .expect("a JSON value")
                    + "\n",
            ),
            Output::Jsonl => Some(
                serde_json::json!({"schema_version": 1, "type": "error", "error": message})
                    .to_string()
                    + "\n",
            ),
            Output::JsonStream => Some(json::stream_event("error", &message) + "\n"),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37.4: scripts read iperf3's `error`; every JSON output says it.
    #[test]
    fn a_failure_is_a_document_in_every_json_output() {
        assert_eq!(Output::Text.error("x"), None);
        let doc: serde_json::Value =
            serde_json::from_str(&Output::Json.error("cannot connect").unwrap()).unwrap();
        assert_eq!(doc["error"], "cannot connect");
        assert!(doc["intervals"].as_array().unwrap().is_empty());
        let ev: serde_json::Value =
            serde_json::from_str(&Output::JsonStream.error("boom").unwrap()).unwrap();
        assert_eq!(
            (ev["event"].as_str(), ev["data"].as_str()),
            (Some("error"), Some("boom"))
        );
        let rec: serde_json::Value =
            serde_json::from_str(&Output::Jsonl.error("boom").unwrap()).unwrap();
        assert_eq!(rec["type"], "error");
    }
}
