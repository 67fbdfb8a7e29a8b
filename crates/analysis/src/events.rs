//! What happened during a test, from its interval records: an MPTCP
//! connection's subflows made, stalled, resumed and closed. A path that fails
//! and recovers mid-test shows as its subflow stalled and then resumed, each at
//! the start of the record that first showed it.

use std::collections::BTreeMap;

use netsonde_model::result::{EventKind, IntervalRecord, SubflowState, TestEvent};

/// The events the records show, in time order.
pub fn events(records: &[IntervalRecord]) -> Vec<TestEvent> {
    // Each subflow's state in its last record, by direction, flow and path.
    let mut last: BTreeMap<(u8, u32, String, String), SubflowState> = BTreeMap::new();
    let mut out = Vec::new();
    for r in records {
        let Some(subs) = &r.subflows else { continue };
        for s in subs {
            let key = (r.dir as u8, s.flow, s.local.clone(), s.remote.clone());
            let before = last.insert(key, s.state);
            let kind = match (before, s.state) {
                (_, SubflowState::Established) => Some(EventKind::SubflowEstablished),
                (_, SubflowState::Closed) => Some(EventKind::SubflowClosed),
                (Some(SubflowState::Idle), SubflowState::Carrying) => {
                    Some(EventKind::SubflowResumed)
                }
                (Some(SubflowState::Carrying | SubflowState::Established), SubflowState::Idle) => {
                    Some(EventKind::SubflowStalled)
                }
                _ => None,
            };
            if let Some(kind) = kind {
                out.push(TestEvent {
                    at: r.start,
                    kind,
                    subject: format!("flow {} {} -> {}", s.flow, s.local, s.remote),
                });
            }
        }
    }
    out.sort_by_key(|e| e.at);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::result::IntervalSubflow;
    use netsonde_model::spec::FlowDir;
    use netsonde_model::units::{BitRate, Bytes, Nanos};

    fn rec(k: u64, states: &[(&str, SubflowState)]) -> IntervalRecord {
        IntervalRecord {
            start: Nanos::from_secs(k),
            end: Nanos::from_secs(k + 1),
            dir: FlowDir::Up,
            bytes: Bytes(1),
            rate: BitRate(8.0),
            messages: 1,
            transactions: 0,
            udp: None,
            subflows: Some(
                states
                    .iter()
                    .map(|(remote, state)| IntervalSubflow {
                        flow: 0,
                        local: "10.77.1.2:40000".into(),
                        remote: remote.to_string(),
                        bytes: Bytes(u64::from(*state == SubflowState::Carrying)),
                        retransmits: 0,
                        srtt: Nanos(1000),
                        state: *state,
                    })
                    .collect(),
            ),
        }
    }

    /// A second path made in the first second, down from the third to the
    /// fourth and back: established at 1 s, stalled at 2 s, resumed at 4 s;
    /// the first path carries throughout and makes no event; a subflow that
    /// stays idle is stalled once.
    #[test]
    fn a_path_that_fails_and_recovers_is_stalled_then_resumed() {
        use SubflowState::*;
        let a = "10.77.0.1:5300";
        let b = "10.77.1.1:5390";
        let records = [
            rec(0, &[(a, Carrying)]),
            rec(1, &[(a, Carrying), (b, Established)]),
            rec(2, &[(a, Carrying), (b, Idle)]),
            rec(3, &[(a, Carrying), (b, Idle)]),
            rec(4, &[(a, Carrying), (b, Carrying)]),
            rec(5, &[(a, Carrying), (b, Closed)]),
        ];
        let ev: Vec<(u64, EventKind)> = events(&records)
            .iter()
            .map(|e| (e.at.0 / 1_000_000_000, e.kind))
            .collect();
        assert_eq!(
            ev,
            [
                (1, EventKind::SubflowEstablished),
                (2, EventKind::SubflowStalled),
                (4, EventKind::SubflowResumed),
                (5, EventKind::SubflowClosed),
            ]
        );
        assert!(events(&records[..1]).is_empty());
    }
}
