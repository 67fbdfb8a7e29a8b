//! What happens to one packet on one direction of the emulated link, as a pure
//! function of the arrival time, the packet's size and a seeded random source. The
//! caller owns the clock, so tests step virtual time.
//!
//! A packet arriving at `now`:
//! 1. joins the bottleneck queue: with a rate it waits for the packets before it
//!    and is serialized in `(len + 38) * 8 / rate` (the 38 bytes of Ethernet framing,
//!    as the kernel shapers count them); beyond the queue limit (bytes, or packets
//!    waiting) it is dropped at the tail;
//! 2. is lost on the wire with the loss model (random, or Gilbert-Elliott), after
//!    using its share of the line, as on a real lossy link;
//! 3. is delivered `delay ± jitter` after it left the queue, never before the
//!    packet ahead of it (jitter does not reorder); or, for the `reorder` share,
//!    right after it left the queue, overtaking the delayed ones;
//! 4. is delivered twice for the `duplicate` share.
//!
//! Every packet draws the same five numbers from the random source whatever the
//! settings, so the same packet sequence and seed give the same decisions.

use std::collections::VecDeque;

use netsonde_model::link::{DirLink, Loss};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::qdisc::{queue_limits, FRAME_OVERHEAD};

/// What becomes of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Deliver at `due`; `express` packets skip the delay (reordered); `copies` is
    /// 2 for a duplicate.
    Deliver {
        /// Due time, ns.
        due: u64,
        /// Reordered ahead of delayed packets.
        express: bool,
        /// Deliveries.
        copies: u32,
    },
    /// Lost on the wire.
    Lost,
    /// Dropped at the tail of a full queue.
    QueueFull,
}

/// One direction's state.
#[derive(Debug)]
pub struct Model {
    link: DirLink,
    rng: StdRng,
    /// Nanoseconds per byte on the wire, 0 without a rate.
    ns_per_byte: f64,
    queue_bytes: u64,
    queue_packets: Option<u32>,
    /// When the transmitter finishes the last packet queued.
    busy_until: u64,
    /// Departure times of queued packets (packet-counted queues only).
    departures: VecDeque<u64>,
    /// Due time of the last delayed packet (delivery stays in order).
    last_due: u64,
    /// Gilbert-Elliott state.
    bad: bool,
}

impl Model {
    /// The model of `link`, with its own random source seeded from `seed`.
    pub fn new(link: &DirLink, seed: u64) -> Model {
        let (queue_bytes, queue_packets) = queue_limits(link);
        Model {
            link: *link,
            rng: StdRng::seed_from_u64(seed),
            ns_per_byte: link.rate.map_or(0.0, |r| 8e9 / r.bps()),
            queue_bytes,
            queue_packets,
            busy_until: 0,
            departures: VecDeque::with_capacity(queue_packets.map_or(0, |p| p as usize)),
            last_due: 0,
            bad: false,
        }
    }

    /// Decides the fate of a `len`-byte IP packet arriving at `now` (ns).
    pub fn packet(&mut self, now: u64, len: usize) -> Verdict {
        let u: [f64; 5] = std::array::from_fn(|_| self.rng.random::<f64>());
        // 1. Queue and serialization.
        let tx_end = if self.ns_per_byte > 0.0 {
            let wire = len as u64 + FRAME_OVERHEAD;
            let backlog = self.busy_until.saturating_sub(now);
            let full = match self.queue_packets {
                Some(limit) => {
                    while self.departures.front().is_some_and(|&d| d <= now) {
                        self.departures.pop_front();
                    }
                    self.departures.len() >= limit as usize
                }
                None => (backlog as f64 / self.ns_per_byte) as u64 + wire > self.queue_bytes,
            };
            if full && backlog > 0 {
                return Verdict::QueueFull;
            }
            let end = self.busy_until.max(now) + (wire as f64 * self.ns_per_byte).round() as u64;
            self.busy_until = end;
            if self.queue_packets.is_some() {
                self.departures.push_back(end);
            }
            end
        } else {
            now
        };
        // 2. Loss on the wire.
        let lost = match self.link.loss {
            Loss::None => false,
            Loss::Random { percent } => u[1] * 100.0 < percent,
            Loss::GilbertElliott { p, r, bad, good } => {
                self.bad = if self.bad {
                    u[0] * 100.0 >= r
                } else {
                    u[0] * 100.0 < p
                };
                u[1] * 100.0 < if self.bad { bad } else { good }
            }
        };
        if lost {
            return Verdict::Lost;
        }
        let copies = if u[2] * 100.0 < self.link.duplicate {
            2
        } else {
            1
        };
        // 3. Delay, jitter and reordering.
        if u[3] * 100.0 < self.link.reorder {
            return Verdict::Deliver {
                due: tx_end,
                express: true,
                copies,
            };
        }
        let j = self.link.jitter.0 as f64;
        let delay = (self.link.delay.0 as f64 + (2.0 * u[4] - 1.0) * j).max(0.0) as u64;
        let due = (tx_end + delay).max(self.last_due);
        self.last_due = due;
        Verdict::Deliver {
            due,
            express: false,
            copies,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::link::Queue;
    use netsonde_model::units::{BitRate, Nanos};

    fn run(link: &DirLink, seed: u64, n: usize, gap: u64) -> Vec<Verdict> {
        let mut m = Model::new(link, seed);
        (0..n).map(|i| m.packet(i as u64 * gap, 1000)).collect()
    }

    #[test]
    fn rate_serializes_with_frame_overhead_and_queue_drops_at_the_tail() {
        let link = DirLink {
            rate: Some(BitRate(8e6)), // 1 byte per us
            queue: Some(Queue::Packets(3)),
            ..DirLink::default()
        };
        let v = run(&link, 1, 6, 0);
        // 1038 wire bytes each: departures at 1038, 2076, 3114 us; the fourth
        // packet finds three waiting.
        let due: Vec<Option<u64>> = v
            .iter()
            .map(|v| match v {
                Verdict::Deliver { due, .. } => Some(*due),
                _ => None,
            })
            .collect();
        assert_eq!(
            due,
            vec![
                Some(1_038_000),
                Some(2_076_000),
                Some(3_114_000),
                None,
                None,
                None
            ]
        );
        assert_eq!(v[3], Verdict::QueueFull);
        // Once the first has left, there is room again.
        let mut m = Model::new(&link, 1);
        for _ in 0..3 {
            m.packet(0, 1000);
        }
        assert!(matches!(
            m.packet(1_038_000, 1000),
            Verdict::Deliver { due: 4_152_000, .. }
        ));
    }

    #[test]
    fn random_loss_rate_and_seeded_replay() {
        let link = DirLink {
            loss: Loss::Random { percent: 5.0 },
            ..DirLink::default()
        };
        let a = run(&link, 7, 100_000, 1000);
        let lost = a.iter().filter(|v| **v == Verdict::Lost).count() as f64;
        // Binomial sd at n=1e5, p=0.05 is 69; allow 5 sd.
        assert!((lost - 5000.0).abs() < 350.0, "{lost}");
        assert_eq!(a, run(&link, 7, 100_000, 1000), "same seed, same fate");
        assert_ne!(a, run(&link, 8, 100_000, 1000));
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts() {
        let link = DirLink {
            loss: "gemodel:1%,25%".parse().unwrap(),
            ..DirLink::default()
        };
        let v = run(&link, 3, 200_000, 1000);
        let lost: Vec<bool> = v.iter().map(|v| *v == Verdict::Lost).collect();
        let rate = lost.iter().filter(|l| **l).count() as f64 / lost.len() as f64;
        // Stationary loss p/(p+r) = 1/26 = 3.85%.
        assert!((rate - 1.0 / 26.0).abs() < 0.004, "{rate}");
        // Mean burst length is 1/r = 4 packets.
        let bursts = lost.windows(2).filter(|w| !w[0] && w[1]).count() as f64;
        let mean_burst = lost.iter().filter(|l| **l).count() as f64 / bursts;
        assert!((mean_burst - 4.0).abs() < 0.4, "{mean_burst}");
    }

    #[test]
    fn delay_jitter_keep_order_and_reorder_overtakes() {
        let link = DirLink {
            delay: Nanos::from_millis(10),
            jitter: Nanos::from_millis(2),
            reorder: 10.0,
            duplicate: 10.0,
            ..DirLink::default()
        };
        let v = run(&link, 5, 10_000, 100_000);
        let mut last = 0;
        let (mut express, mut dups) = (0, 0);
        for (i, x) in v.iter().enumerate() {
            let now = i as u64 * 100_000;
            match *x {
                Verdict::Deliver {
                    due,
                    express: false,
                    copies,
                } => {
                    assert!(due >= last);
                    assert!(due >= now + 8_000_000 && due <= now.max(last) + 12_000_000);
                    last = due;
                    dups += usize::from(copies == 2);
                }
                Verdict::Deliver {
                    due, express: true, ..
                } => {
                    assert_eq!(due, now);
                    express += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        assert!((800..1200).contains(&express), "{express}");
        assert!((700..1100).contains(&dups), "{dups}");
    }
}
