//! One path that finishes a test's report: [`finish`] adds what the analysis
//! says of the figures the ends measured (steadiness warnings, the verdict, the
//! RFC 6349 metrics, the load-latency summary, the events of its intervals), so that a single test
//! (`netsonde client`), a sweep's or a search's stored repetition, a study's and
//! a server's stored iperf3 session carry the same verdict and warnings.

use netsonde_model::result::TestReport;

/// Finishes `report` in place. `line_rate_bps` is the user's `--line-rate`; in
/// the lab, set `report.link` first and the link's rate stands in. Calling it
/// twice gives the same report: its warnings are not added twice.
pub fn finish(report: &mut TestReport, line_rate_bps: Option<f64>) {
    for w in crate::steady::steadiness_warnings(report) {
        if !report.warnings.contains(&w) {
            report.warnings.push(w);
        }
    }
    report.events = crate::events::events(&report.intervals);
    report.rfc6349 = crate::rfc6349::rfc6349(report, line_rate_bps);
    report.diagnosis = Some(crate::diagnose::diagnose(
        &crate::evidence::input_from_report(report, line_rate_bps),
    ));
    let summary = crate::load::summarize(report);
    if let Some(l) = report.load.as_mut() {
        l.summary = summary;
    }
}
