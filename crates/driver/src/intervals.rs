//! Interval records of a running test, made by the control thread from the
//! flows' published counters, off the data path; and whether a test that ends
//! by volume has moved it.
//!
//! A netsonde client's records of a direction it sends over TCP count the bytes
//! its receiver acknowledged (`TCP_INFO`, read by the control thread): bytes
//! written into a socket buffer can outrun the link for an interval (a 50 Mbit/s
//! link showed 126 Mbit/s in a 250 ms interval as a send buffer filled), bytes
//! acknowledged cannot. An iperf3 end's records count what it wrote or read, as
//! iperf3's do, so they add up to its totals.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use netsonde_engine::FlowCounters;
use netsonde_model::result::{IntervalRecord, IntervalUdp};
use netsonde_model::spec::{FlowDir, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};

use crate::flows::Running;

/// Interval records, made by the control thread from the flows' published
/// counters, off the data path.
pub(crate) struct Intervals {
    clock: netsonde_engine::FlowClock,
    period: Option<Duration>,
    next: Option<Instant>,
    last: Option<[(u64, u64, u64); 2]>,
    /// Whether a sending direction's bytes are those acknowledged (see the module).
    delivered: bool,
    /// Each direction's bytes acknowledged as the last record ended (`None`: not
    /// sent over TCP here, or not counted so).
    last_acked: [Option<u64>; 2],
    /// When each direction's last record ended: where the next one starts.
    last_at: [Instant; 2],
    /// The bytes acknowledged as read by the first wake-up at or past the end of
    /// the measured interval (while the last record waits for the flows), and
    /// when.
    acked_at_end: Option<([Option<u64>; 2], Instant)>,
    /// Each direction's UDP receive accounting (expected, arrived) as the last
    /// record ended, where this end receives UDP.
    last_udp: [Option<(u64, u64)>; 2],
    /// Whether the flows are MPTCP connections (`--mptcp`): their bytes
    /// acknowledged are the connection's, and each record has its subflows.
    mptcp: bool,
    /// The subflows as the last record ended ([`crate::subflows`]).
    last_subflows: crate::subflows::Reading,
    /// The subflows as read with [`Intervals::acked_at_end`].
    subflows_at_end: Option<crate::subflows::Reading>,
    /// The records so far.
    pub(crate) records: Vec<IntervalRecord>,
}

/// Each direction's UDP receive accounting on this end: datagrams expected and
/// arrived, summed over its receiving flows, and the largest jitter; `None`
/// where no flow of it receives UDP here (or none has a datagram yet).
fn udp_now(running: &Running) -> [Option<(u64, u64, Nanos)>; 2] {
    let mut by_dir: [Option<(u64, u64, Nanos)>; 2] = [None; 2];
    for (_, dir, c) in &running.counters {
        if let Some((e, a, j)) = c.udp.load() {
            let d = &mut by_dir[usize::from(*dir == FlowDir::Down)];
            let (e0, a0, j0) = d.unwrap_or((0, 0, Nanos::ZERO));
            *d = Some((e0 + e, a0 + a, j0.max(j)));
        }
    }
    by_dir
}

type Triple = (u64, u64, u64);

/// Each direction's counts (bytes, messages, transactions) summed over its
/// flows, each flow's from `read`; `None` for a direction one of whose flows
/// has no reading.
fn counts(
    running: &Running,
    read: impl Fn(&FlowCounters) -> Option<Triple>,
) -> [Option<Triple>; 2] {
    let mut by_dir = [Some((0u64, 0u64, 0u64)); 2];
    for (_, dir, c) in &running.counters {
        let e = &mut by_dir[usize::from(*dir == FlowDir::Down)];
        *e = e
            .zip(read(c))
            .map(|(e, (b, m, t))| (e.0 + b, e.1 + m, e.2 + t));
    }
    by_dir
}

/// Each direction's counts now.
fn sum(running: &Running) -> [Triple; 2] {
    counts(running, |c| Some(c.load())).map(Option::unwrap_or_default)
}

/// Where each flow's counts stood as the measured interval began: exactly, from
/// the flow itself (a flow not there yet counts from where it is now).
fn at_start(running: &Running) -> [Triple; 2] {
    counts(running, |c| {
        Some(c.start.load().unwrap_or_else(|| c.load()))
    })
    .map(Option::unwrap_or_default)
}

/// Where they stood as the measured interval ended, from the flows themselves
/// (a flow whose meter never closed, as one that failed: where it is now).
fn at_end(running: &Running) -> [Triple; 2] {
    counts(running, |c| Some(c.end.load().unwrap_or_else(|| c.load())))
        .map(Option::unwrap_or_default)
}

/// Whether every flow has closed its measured interval.
fn all_ended(running: &Running) -> bool {
    running.counters.iter().all(|(_, _, c)| c.end.reached())
}

/// Each direction's bytes acknowledged across this end's sending TCP flows,
/// each flow's from `read`; `None` for a direction it does not send over TCP,
/// or one of whose flows has no reading.
fn acked(
    running: &Running,
    read: impl Fn(&FlowCounters, &TcpStream) -> Option<u64>,
) -> [Option<u64>; 2] {
    let mut by_dir = [Some(0u64); 2];
    let mut any = [false; 2];
    for ((_, dir, c), sock) in running.counters.iter().zip(&running.acked_by) {
        let Some(sock) = sock else { continue };
        let k = usize::from(*dir == FlowDir::Down);
        any[k] = true;
        by_dir[k] = by_dir[k].zip(read(c, sock)).map(|(a, b)| a + b);
    }
    [0, 1].map(|k| by_dir[k].filter(|_| any[k]))
}

/// Bytes acknowledged now, from `TCP_INFO` (an MPTCP connection's from
/// `MPTCP_INFO`: all its subflows').
fn acked_now(running: &Running, mptcp: bool) -> [Option<u64>; 2] {
    acked(running, |_, s| {
        netsonde_engine::sockopt::bytes_acked(s, mptcp)
    })
}

/// Whether a test that ends by volume has moved it, in either direction, in
/// its measured interval (as an iperf3 client decides when to end: by what it
/// sent or what it received).
pub(crate) fn volume_moved(running: &Running, spec: &TestSpec) -> bool {
    let Some(v) = spec.volume else { return false };
    let mut by_dir = [0u64; 2];
    for (_, dir, c) in &running.counters {
        if let Some((start, _, _)) = c.start.load() {
            let (now, _, _) = c.load();
            by_dir[usize::from(*dir == FlowDir::Down)] += now.saturating_sub(start);
        }
    }
    by_dir.iter().any(|&b| b >= v.0)
}

impl Intervals {
    /// A netsonde client's records, every `--interval`: a direction it sends over
    /// TCP counts the bytes acknowledged.
    pub(crate) fn new(running: &Running, spec: &TestSpec) -> Intervals {
        let mut i = Intervals::with_period(running, spec.interval.map(Nanos::as_duration), true);
        i.mptcp = spec.mptcp;
        i
    }

    /// An iperf3 client's records, every `--interval`, of what it wrote or read.
    pub(crate) fn written(running: &Running, spec: &TestSpec) -> Intervals {
        Intervals::with_period(running, spec.interval.map(Nanos::as_duration), false)
    }

    /// Records every `period`, whatever the spec says, of what this end wrote or
    /// read (an iperf3 client's session on the server reports each second, as
    /// iperf3 -s does).
    pub(crate) fn every(running: &Running, period: Duration) -> Intervals {
        Intervals::with_period(running, Some(period), false)
    }

    fn with_period(running: &Running, period: Option<Duration>, delivered: bool) -> Intervals {
        let clock = running.clock;
        Intervals {
            clock,
            period,
            next: period.map(|p| clock.warm_end + p),
            last: None,
            delivered,
            last_acked: [None; 2],
            last_at: [clock.warm_end; 2],
            acked_at_end: None,
            last_udp: [None; 2],
            mptcp: false,
            last_subflows: [None, None],
            subflows_at_end: None,
            records: Vec::new(),
        }
    }

    /// How long the control thread may wait before the next record is due, or
    /// the measured interval begins (when the acknowledged bytes are read as its
    /// baseline), at most 100 ms.
    pub(crate) fn wait(&self) -> Duration {
        let due = match self.last {
            None if self.period.is_some() => Some(self.clock.warm_end),
            _ => self.next,
        };
        due.map(|at| at.saturating_duration_since(Instant::now()))
            .unwrap_or(Duration::from_millis(100))
            .min(Duration::from_millis(100))
    }

    /// Makes every record due now.
    pub(crate) fn tick(&mut self, running: &Running, on_interval: &mut dyn FnMut(&IntervalRecord)) {
        self.make(running, Instant::now(), false, on_interval);
    }

    /// The flows are done: every record still due is made from the final counts
    /// (else a late wake-up of the control thread would lose the last one).
    pub(crate) fn close(
        &mut self,
        running: &Running,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let at = running.end() + self.period.unwrap_or_default();
        self.make(running, at, true, on_interval);
    }

    /// Where the first record starts from: each flow's own counts as the
    /// measured interval began; and the bytes acknowledged, as the flows read
    /// them there (else as read by the wake-up as it began).
    fn first_baseline(&mut self, running: &Running) -> [Triple; 2] {
        let exact = acked(running, |c, _| c.start.load_acked());
        for (last, exact) in self.last_acked.iter_mut().zip(exact) {
            if last.is_some() && exact.is_some() {
                *last = exact;
            }
        }
        at_start(running)
    }

    /// Makes the records due by `now_i`. The one that reaches the end of the
    /// measured interval is made from the counts each flow stored as its
    /// interval closed, so the records add up to the summary: while a flow has
    /// not closed it yet (`closing` false), it waits.
    fn make(
        &mut self,
        running: &Running,
        now_i: Instant,
        closing: bool,
        on_interval: &mut dyn FnMut(&IntervalRecord),
    ) {
        let mut clock = self.clock;
        // A test that ended by volume before its clock: its last record ends
        // when the flows did.
        clock.end = running.end();
        if self.last.is_none() && self.period.is_some() && now_i >= clock.warm_end {
            self.last = Some(at_start(running));
            if self.delivered {
                self.last_acked = acked_now(running, self.mptcp);
            }
            if self.mptcp {
                self.last_subflows = crate::subflows::read(running);
            }
            self.last_udp = udp_now(running).map(|u| u.map(|(e, a, _)| (e, a)));
        }
        while let (Some(at), Some(p), Some(prev)) = (self.next, self.period, self.last) {
            if !(now_i >= at && at <= clock.end + p / 2) {
                break;
            }
            // A wake-up past the end (however late) makes the last record.
            let last_one = at >= clock.end || Instant::now() >= clock.end;
            if last_one && self.delivered && self.acked_at_end.is_none() {
                // Acknowledgements go on arriving after the end: read them now,
                // at the end, not when the flows have finished.
                self.acked_at_end = Some((acked_now(running, self.mptcp), Instant::now()));
                if self.mptcp {
                    self.subflows_at_end = Some(crate::subflows::read(running));
                }
            }
            if last_one && !closing && !all_ended(running) {
                break;
            }
            let prev = if self.records.is_empty() {
                self.first_baseline(running)
            } else {
                prev
            };
            let read_at = Instant::now().min(clock.end);
            let (cur, cur_acked, acked_at) = if last_one {
                // The earliest reading past the end: the control thread's,
                // else the flows' own as they stopped sending.
                let flows = acked(running, |c, _| c.end.load_acked());
                let (read, t) = self.acked_at_end.unwrap_or(([None; 2], clock.end));
                let end_acked = [0, 1].map(|k| read[k].or(flows[k]).filter(|_| self.delivered));
                (at_end(running), end_acked, t)
            } else if self.delivered {
                (sum(running), acked_now(running, self.mptcp), Instant::now())
            } else {
                (sum(running), [None; 2], read_at)
            };
            let udp = udp_now(running);
            let subs = match (self.mptcp, last_one) {
                (false, _) => [None, None],
                (true, true) => self
                    .subflows_at_end
                    .take()
                    .unwrap_or_else(|| crate::subflows::read(running)),
                (true, false) => crate::subflows::read(running),
            };
            for (i, dir) in [FlowDir::Up, FlowDir::Down].into_iter().enumerate() {
                if !running.counters.iter().any(|(_, d, _)| *d == dir) {
                    continue;
                }
                // Each record spans the readings it is the difference of, so a
                // late wake-up lengthens it rather than inflating its rate.
                let (bytes, until) = match (cur_acked[i], self.last_acked[i]) {
                    (Some(now), Some(then)) => (now.saturating_sub(then), acked_at),
                    _ => (
                        cur[i].0.saturating_sub(prev[i].0),
                        if last_one { clock.end } else { read_at },
                    ),
                };
                let from = self.last_at[i];
                let rec = IntervalRecord {
                    start: Nanos::from(from.saturating_duration_since(clock.warm_end)),
                    end: Nanos::from(until.saturating_duration_since(clock.warm_end)),
                    dir,
                    bytes: Bytes(bytes),
                    rate: BitRate::from_bytes(Bytes(bytes), until.saturating_duration_since(from)),
                    messages: cur[i].1.saturating_sub(prev[i].1),
                    transactions: cur[i].2.saturating_sub(prev[i].2),
                    udp: udp[i].map(|(e, a, jitter)| {
                        let (e0, a0) = self.last_udp[i].unwrap_or((0, 0));
                        let packets = e.saturating_sub(e0);
                        IntervalUdp {
                            packets,
                            lost: packets.saturating_sub(a.saturating_sub(a0)),
                            jitter,
                        }
                    }),
                    subflows: subs[i].as_ref().map(|now| {
                        let then = self.last_subflows[i].take().unwrap_or_default();
                        crate::subflows::record(&then, now)
                    }),
                };
                if let Some((e, a, _)) = udp[i] {
                    self.last_udp[i] = Some((e, a));
                }
                on_interval(&rec);
                self.records.push(rec);
                self.last_at[i] = until;
            }
            self.last = Some(cur);
            self.last_acked = cur_acked;
            self.last_subflows = subs;
            // The next record is due at the first boundary after this reading
            // (one that a late wake-up passed is covered by this record).
            let mut next = at + p;
            while next <= read_at && next < clock.end {
                next += p;
            }
            self.next = Some(next);
            if last_one {
                self.next = Some(clock.end + p);
                break;
            }
        }
    }
}
