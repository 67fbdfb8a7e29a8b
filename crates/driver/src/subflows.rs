//! Each MPTCP subflow's share of an interval record, read by the control
//! thread from the sockets of the flows this end sends on (`MPTCP_TCPINFO`),
//! off the data path: its bytes acknowledged and retransmissions in the
//! interval, its RTT as the interval ended, and whether it was made, idle or
//! gone. A receiving end's records have none: its reads see the connection,
//! not its paths.

use std::collections::BTreeMap;

use netsonde_model::result::{IntervalSubflow, Subflow, SubflowState};
use netsonde_model::spec::FlowDir;
use netsonde_model::units::{Bytes, Nanos};

use crate::flows::Running;

/// A subflow: its flow, local and remote address.
type Key = (u32, String, String);

/// Each direction's subflows as read once: by key, what the peer acknowledged
/// on it, its retransmissions and its RTT; `None` for a direction with no
/// MPTCP flow this end sends on.
pub(crate) type Reading = [Option<BTreeMap<Key, (u64, u64, Nanos)>>; 2];

/// Reads every subflow of the MPTCP flows this end sends on, now.
pub(crate) fn read(running: &Running) -> Reading {
    let mut by_dir: Reading = [None, None];
    for ((id, dir, _), sock) in running.counters.iter().zip(&running.acked_by) {
        let Some(sock) = sock else { continue };
        let Some(subs) = netsonde_engine::sockopt::mptcp_subflows(sock) else {
            continue;
        };
        let d = by_dir[usize::from(*dir == FlowDir::Down)].get_or_insert_with(BTreeMap::new);
        for Subflow {
            local,
            remote,
            bytes_acked,
            srtt,
            retransmits,
            ..
        } in subs
        {
            d.insert((*id, local, remote), (bytes_acked, retransmits, srtt));
        }
    }
    by_dir
}

/// The subflows of one direction over one record: `now` against `then`, the
/// reading the record starts from. A subflow in `now` alone was made in it; one
/// in `then` alone went away, said only while its flow has others in `now` (a
/// connection that has ended lists none, and its paths did not fail).
pub(crate) fn record(
    then: &BTreeMap<Key, (u64, u64, Nanos)>,
    now: &BTreeMap<Key, (u64, u64, Nanos)>,
) -> Vec<IntervalSubflow> {
    let mut out: Vec<IntervalSubflow> = now
        .iter()
        .map(|((flow, local, remote), &(acked, retrans, srtt))| {
            let before = then.get(&(*flow, local.clone(), remote.clone()));
            let (a0, r0) = before.map_or((0, 0), |&(a, r, _)| (a, r));
            let bytes = acked.saturating_sub(a0);
            let state = match before {
                None => SubflowState::Established,
                Some(_) if bytes == 0 => SubflowState::Idle,
                Some(_) => SubflowState::Carrying,
            };
            IntervalSubflow {
                flow: *flow,
                local: local.clone(),
                remote: remote.clone(),
                bytes: Bytes(bytes),
                retransmits: retrans.saturating_sub(r0),
                srtt,
                state,
            }
        })
        .collect();
    for ((flow, local, remote), &(_, _, srtt)) in then {
        let key = (*flow, local.clone(), remote.clone());
        let flow_lives = now.keys().any(|(f, _, _)| f == flow);
        if !now.contains_key(&key) && flow_lives {
            out.push(IntervalSubflow {
                flow: *flow,
                local: local.clone(),
                remote: remote.clone(),
                bytes: Bytes(0),
                retransmits: 0,
                srtt,
                state: SubflowState::Closed,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(entries: &[(&str, u64, u64)]) -> BTreeMap<Key, (u64, u64, Nanos)> {
        entries
            .iter()
            .map(|(remote, a, r)| {
                (
                    (1, "10.77.0.2:40000".to_string(), remote.to_string()),
                    (*a, *r, Nanos(1_000_000)),
                )
            })
            .collect()
    }

    /// A subflow's bytes and retransmissions are its own difference over the
    /// record; a new one is established with all it carried; one that carried
    /// nothing is idle; one gone while its flow lives is closed, and a flow
    /// that lists none (its connection ended) closes nothing.
    #[test]
    fn each_subflow_is_its_own_difference_and_state() {
        let then = at(&[("10.77.0.1:5300", 1000, 2), ("10.77.1.1:5390", 500, 0)]);
        let now = at(&[("10.77.0.1:5300", 4000, 5), ("10.77.1.1:5390", 500, 0)]);
        let r = record(&then, &now);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].bytes, r[0].retransmits), (Bytes(3000), 3));
        assert_eq!(r[0].state, SubflowState::Carrying);
        assert_eq!((r[1].bytes, r[1].state), (Bytes(0), SubflowState::Idle));
        let joined = at(&[("10.77.0.1:5300", 5000, 5), ("10.77.2.1:5390", 700, 1)]);
        let r = record(&now, &joined);
        let state = |remote: &str| r.iter().find(|s| s.remote == remote).unwrap().state;
        assert_eq!(state("10.77.2.1:5390"), SubflowState::Established);
        assert_eq!(state("10.77.1.1:5390"), SubflowState::Closed);
        let est = r.iter().find(|s| s.remote == "10.77.2.1:5390").unwrap();
        assert_eq!((est.bytes, est.retransmits), (Bytes(700), 1));
        assert!(record(&now, &BTreeMap::new()).is_empty());
    }
}
