//! What `netsonde study` ends with on the terminal: each part's summary (the
//! one its run ends with, `netsonde_report::summary`), the findings, and where
//! the report is; or all of it as one JSON document.

use netsonde_report::summary::{self, Summary};
use serde::Serialize;

use crate::Finding;

/// A study's end.
#[derive(Debug, Serialize)]
pub struct StudyEnding<'a> {
    /// Version of this document.
    pub schema_version: u32,
    /// The study (`000-oc48c`).
    pub study: String,
    /// Each part that stored a run, by its name, with its run's summary.
    pub parts: Vec<(&'static str, Summary)>,
    /// Each finding, decided.
    pub findings: &'a [Finding],
    /// Parts the study had.
    pub part_count: usize,
    /// Its wall time, seconds.
    pub secs: f64,
    /// `report.md`.
    pub report: String,
}

impl StudyEnding<'_> {
    /// The findings, one a line (wrapped under their claim), and the line
    /// that says where the report is: what `--quiet` keeps.
    pub fn findings_text(&self, width: usize) -> String {
        let mut o = String::new();
        for f in self.findings {
            let lead = format!("{:<14} ", f.verdict.text());
            o.push_str(&summary::wrapped(&f.claim, width, &lead));
        }
        o.push_str(&format!(
            "study {}: {} parts in {:.0} s; report: {}\n",
            self.study, self.part_count, self.secs, self.report
        ));
        o
    }

    /// Each part's summary under its name, then the findings.
    pub fn text(&self, width: usize) -> String {
        let mut o = String::new();
        for (name, s) in &self.parts {
            o.push_str(&format!("== part {name} ==\n"));
            o.push_str(&summary::text(s, width));
            o.push('\n');
        }
        o.push_str("findings:\n");
        o.push_str(&self.findings_text(width));
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    #[test]
    fn study_golden() {
        let view = crate::tests::sweep_view();
        let mut part = Summary::of(&view);
        part.store = Some("study.db".into());
        let findings = [
            Finding {
                claim: "Throughput rises with the datagram size until the link is full".into(),
                criterion: String::new(),
                evidence: String::new(),
                verdict: Verdict::Holds,
            },
            Finding {
                claim: "Batching short datagrams doubles their rate, which the seed's \
                        adapter did in hardware and today's kernel does with sendmmsg"
                    .into(),
                criterion: String::new(),
                evidence: String::new(),
                verdict: Verdict::NotMeasured,
            },
        ];
        let end = StudyEnding {
            schema_version: 1,
            study: "000".into(),
            parts: vec![("size", part)],
            findings: &findings,
            part_count: 4,
            secs: 93.4,
            report: "study-000-oc48c/report.md".into(),
        };
        let t = end.text(summary::WIDTH);
        assert!(
            t.lines().all(|l| l.chars().count() <= summary::WIDTH),
            "{t}"
        );
        insta::assert_snapshot!(t);
        let doc = serde_json::to_value(&end).unwrap();
        assert_eq!(doc["parts"][0][0], "size");
        assert_eq!(doc["findings"][1]["verdict"], "not-measured");
    }
}
