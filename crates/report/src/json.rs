//! JSON and JSON Lines output.
//!
//! `--json` prints one document: the [`TestReport`] serialised as is, so its field
//! list is the struct's (see `docs/JSON.md`), opening with `schema_version`.
//!
//! `--jsonl` prints one object per line, each with `schema_version` and a `type`:
//! - `{"type":"interval", ...IntervalRecord}` as each interval ends;
//! - `{"type":"summary", "report": TestReport}` last.

use netsonde_model::result::{IntervalRecord, TestReport};
use netsonde_model::JSON_SCHEMA_VERSION;
use serde_json::{json, Value};

/// The `--json` document, pretty-printed.
pub fn document(r: &TestReport) -> String {
    serde_json::to_string_pretty(r).expect("reports always serialize")
}

/// One `--jsonl` interval line (no trailing newline).
pub fn interval_line(rec: &IntervalRecord) -> String {
    let mut v = serde_json::to_value(rec).expect("records always serialize");
    if let Value::Object(m) = &mut v {
        m.insert("schema_version".into(), json!(JSON_SCHEMA_VERSION));
        m.insert("type".into(), json!("interval"));
    }
    v.to_string()
}

/// The final `--jsonl` line (no trailing newline).
pub fn summary_line(r: &TestReport) -> String {
    json!({"schema_version": JSON_SCHEMA_VERSION, "type": "summary", "report": r}).to_string()
}

/// One `--json-stream` line (no trailing newline), as iperf3 3.17 writes them:
/// `{"event": EVENT, "data": DATA}`.
pub fn stream_event(event: &str, data: &impl serde::Serialize) -> String {
    json!({"event": event, "data": data}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    #[test]
    fn document_golden() {
        insta::assert_snapshot!(document(&fixture::stream_report()));
    }

    #[test]
    fn document_roundtrips() {
        let r = fixture::rr_report();
        let back: TestReport = serde_json::from_str(&document(&r)).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn jsonl_golden() {
        let r = fixture::stream_report();
        let mut out = String::new();
        for i in &r.intervals {
            out.push_str(&interval_line(i));
            out.push('\n');
        }
        for line in out.lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["schema_version"], 1);
            assert_eq!(v["type"], "interval");
        }
        insta::assert_snapshot!(out);
        let last: Value = serde_json::from_str(&summary_line(&r)).unwrap();
        assert_eq!(last["type"], "summary");
        assert_eq!(last["report"]["schema_version"], 1);
    }
}
