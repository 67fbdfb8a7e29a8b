//! An MPTCP test in the text report: each interval's subflows, the events
//! of its paths, and each flow's subflows at the end.

use std::fmt::Write;

use netsonde_model::result::{IntervalRecord, SideResult, SubflowState, TestReport};
use netsonde_model::units::BitRate;

/// An interval's `line`, and beneath it a line per MPTCP subflow of its
/// direction: its path, bytes and rate in the interval, retransmissions, RTT
/// and state (its rate written by `rate_of`, in the report's unit).
pub(crate) fn with_subflows(
    rec: &IntervalRecord,
    rate_of: impl Fn(BitRate) -> String,
    line: String,
) -> String {
    let mut o = line;
    let secs = rec.end.as_secs_f64() - rec.start.as_secs_f64();
    for s in rec.subflows.iter().flatten() {
        let rate = if secs > 0.0 {
            BitRate(s.bytes.0 as f64 * 8.0 / secs)
        } else {
            BitRate(0.0)
        };
        let state = match s.state {
            SubflowState::Carrying => "",
            SubflowState::Established => "  established",
            SubflowState::Idle => "  idle: nothing acknowledged",
            SubflowState::Closed => "  closed",
        };
        let _ = write!(
            o,
            "\n    subflow {} -> {}  {}  {}  retrans {}  srtt {}{state}",
            s.local,
            s.remote,
            s.bytes,
            rate_of(rate),
            s.retransmits,
            s.srtt
        );
    }
    o
}

/// What happened during the test, in order.
pub(crate) fn events(o: &mut String, r: &TestReport) {
    if r.events.is_empty() {
        return;
    }
    o.push_str("\nevents:\n");
    for e in &r.events {
        let _ = writeln!(
            o,
            "  {:>7.2} s  {}  {}",
            e.at.as_secs_f64(),
            e.kind.name(),
            e.subject
        );
    }
}

/// An MPTCP flow's subflows: each path, and its share of what the flow
/// carried (acknowledged bytes at a sending end, received bytes at a
/// receiving one).
pub(crate) fn subflows(o: &mut String, name: &str, side: &SideResult) {
    for f in &side.flows {
        let Some(subs) = &f.mptcp else { continue };
        let sends = subs.iter().map(|s| s.bytes_acked).sum::<u64>()
            >= subs.iter().map(|s| s.bytes_received).sum::<u64>();
        let carried = |s: &netsonde_model::result::Subflow| {
            if sends {
                s.bytes_acked
            } else {
                s.bytes_received
            }
        };
        let total: u64 = subs.iter().map(carried).sum();
        let _ = writeln!(
            o,
            "{name} MPTCP flow {}: {} subflow{} ({})",
            f.id,
            subs.len(),
            if subs.len() == 1 { "" } else { "s" },
            if sends {
                "bytes acknowledged"
            } else {
                "bytes received"
            }
        );
        for s in subs {
            let share = 100.0 * carried(s) as f64 / total.max(1) as f64;
            let _ = writeln!(
                o,
                "  {} -> {}  {} B  {share:.1}%  srtt {}  retrans {}",
                s.local,
                s.remote,
                carried(s),
                s.srtt,
                s.retransmits
            );
        }
    }
}
