//! The userspace link emulator, for kernels without netem: a TUN device in each
//! namespace, and one thread per direction that reads packets from one device,
//! decides their fate with [`model::Model`] and writes them into the other at the
//! due time.
//!
//! The data path allocates nothing: each direction owns two preallocated
//! [`ring::Ring`]s (delayed packets, and reordered packets that skip the delay),
//! reads a packet straight into a ring slot and writes it out from there. It reads
//! in batches until the device is drained, delivers everything due, and sleeps in
//! `ppoll` until the next packet is due or one arrives, with the thread's timer
//! slack set to 1 ns. The kernel still wakes a sleeper late (tens of microseconds
//! in a VM), so each direction learns that overshoot (a moving average over timed
//! out sleeps), sleeps that much less, and delivers what falls due within it
//! without sleeping again: delivery errors centre on zero and no CPU is spent
//! spinning. Each direction's random source is seeded from the link's seed, so a
//! run replays.
//!
//! Counters ([`DirStats`]) are relaxed atomics read off the hot path; the delivery
//! error (delivery time less due time, signed) goes into a fixed histogram with
//! 1 us buckets.

pub mod model;
pub mod ring;

use std::fs::{File, OpenOptions};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_model::link::DirLink;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use serde::Serialize;

use crate::error::{EmulatorError, LabError, Result};
use crate::qdisc::queue_limits;
use model::{Model, Verdict};
use ring::Ring;

/// Largest packet a TUN read can return (the IPv4 total length limit, rounded up).
const MAX_PACKET: usize = 65536;
/// Packets read before delivering again.
const BATCH: usize = 64;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP: Duration = Duration::from_millis(20);
/// Initial estimate of how late `ppoll` wakes up, and the most it learns.
const INITIAL_OVERSHOOT: u64 = 50_000;
const MAX_OVERSHOOT: u64 = 100_000;
/// The delivery error histogram has 1 us buckets from this many microseconds early
/// ...
pub const ERROR_EARLY_US: i64 = 500;
/// ... to this many late; errors beyond count in the end buckets.
pub const ERROR_LATE_US: i64 = 2000;

/// Where the emulator sits: the two namespaces and the TUN device's name in each.
#[derive(Debug, Clone, PartialEq)]
pub struct EmulatorConfig {
    /// Client namespace.
    pub client_ns: String,
    /// Server namespace.
    pub server_ns: String,
    /// TUN device name (the same in both namespaces).
    pub dev: String,
    /// Client → server.
    pub up: DirLink,
    /// Server → client.
    pub down: DirLink,
    /// Seed of the random sources.
    pub seed: u64,
}

/// One direction's counters.
#[derive(Debug)]
pub struct DirStats {
    packets_in: AtomicU64,
    bytes_in: AtomicU64,
    delivered: AtomicU64,
    bytes_out: AtomicU64,
    lost: AtomicU64,
    queue_drops: AtomicU64,
    overflow: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    write_errors: AtomicU64,
    error: Vec<AtomicU64>,
    late_max_ns: AtomicU64,
}

impl Default for DirStats {
    fn default() -> DirStats {
        DirStats {
            packets_in: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            delivered: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            queue_drops: AtomicU64::new(0),
            overflow: AtomicU64::new(0),
            duplicated: AtomicU64::new(0),
            reordered: AtomicU64::new(0),
            write_errors: AtomicU64::new(0),
            error: (-ERROR_EARLY_US..=ERROR_LATE_US)
                .map(|_| AtomicU64::new(0))
                .collect(),
            late_max_ns: AtomicU64::new(0),
        }
    }
}

/// A snapshot of one direction's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DirSnapshot {
    /// Packets read from the sending side.
    pub packets_in: u64,
    /// Their bytes.
    pub bytes_in: u64,
    /// Packets written to the receiving side (duplicates count twice).
    pub delivered: u64,
    /// Their bytes.
    pub bytes_out: u64,
    /// Lost by the loss model.
    pub lost: u64,
    /// Dropped at the tail of the queue.
    pub queue_drops: u64,
    /// Dropped because the emulator's buffer was full (should be 0).
    pub overflow: u64,
    /// Delivered twice.
    pub duplicated: u64,
    /// Sent ahead of the delay.
    pub reordered: u64,
    /// Writes the receiving device refused.
    pub write_errors: u64,
    /// Packets whose delivery error (delivery time less due time) was measured.
    pub error_count: u64,
    /// Median delivery error, us (negative: early; 1 us resolution, clamped to
    /// -[`ERROR_EARLY_US`]..[`ERROR_LATE_US`]).
    pub error_p50_us: i64,
    /// 10th percentile of the delivery error, us.
    pub error_p10_us: i64,
    /// 90th percentile, us.
    pub error_p90_us: i64,
    /// 99th percentile, us.
    pub error_p99_us: i64,
    /// Latest delivery behind its due time, ns.
    pub late_max_ns: u64,
}

/// The `q` quantile of a histogram with 1-unit buckets.
fn quantile(h: &[u64], q: f64) -> u64 {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return 0;
    }
    let want = ((total as f64) * q).ceil().max(1.0) as u64;
    let mut acc = 0;
    for (i, c) in h.iter().enumerate() {
        acc += c;
        if acc >= want {
            return i as u64;
        }
    }
    (h.len() - 1) as u64
}

impl DirStats {
    fn snapshot(&self) -> DirSnapshot {
        let h: Vec<u64> = self.error.iter().map(|c| c.load(Relaxed)).collect();
        let q = |p| quantile(&h, p) as i64 - ERROR_EARLY_US;
        DirSnapshot {
            packets_in: self.packets_in.load(Relaxed),
            bytes_in: self.bytes_in.load(Relaxed),
            delivered: self.delivered.load(Relaxed),
            bytes_out: self.bytes_out.load(Relaxed),
            lost: self.lost.load(Relaxed),
            queue_drops: self.queue_drops.load(Relaxed),
            overflow: self.overflow.load(Relaxed),
            duplicated: self.duplicated.load(Relaxed),
            reordered: self.reordered.load(Relaxed),
            write_errors: self.write_errors.load(Relaxed),
            error_count: h.iter().sum(),
            error_p50_us: q(0.5),
            error_p10_us: q(0.1),
            error_p90_us: q(0.9),
            error_p99_us: q(0.99),
            late_max_ns: self.late_max_ns.load(Relaxed),
        }
    }

    fn add(c: &AtomicU64, n: u64) {
        c.store(c.load(Relaxed) + n, Relaxed);
    }

    /// Records a delivery `ns` after (positive) or before (negative) its due time.
    fn error(&self, ns: i64) {
        let us = ns.div_euclid(1000).clamp(-ERROR_EARLY_US, ERROR_LATE_US);
        Self::add(&self.error[(us + ERROR_EARLY_US) as usize], 1);
        let late = ns.max(0) as u64;
        if late > self.late_max_ns.load(Relaxed) {
            self.late_max_ns.store(late, Relaxed);
        }
    }
}

/// Both directions' counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EmulatorStats {
    /// Client → server.
    pub up: DirSnapshot,
    /// Server → client.
    pub down: DirSnapshot,
}

/// A running emulator; stops (and joins its threads) on [`Emulator::stop`] or drop.
#[derive(Debug)]
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<std::result::Result<(), EmulatorError>>>,
    stats: [Arc<DirStats>; 2],
}

/// Opens TUN device `dev` inside namespace `ns`, non-blocking. The namespace switch
/// happens on a short-lived thread, so the caller's namespace never changes.
pub fn open_tun(ns: &str, dev: &str) -> Result<OwnedFd> {
    let (ns, dev) = (ns.to_string(), dev.to_string());
    let what = format!("opening TUN {dev} in {ns}");
    std::thread::spawn(move || -> std::io::Result<OwnedFd> {
        let nsf = File::open(format!("/run/netns/{ns}"))?;
        rustix::thread::move_into_link_name_space(
            nsf.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )?;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/net/tun")?;
        crate::sys::tun_attach(f.as_fd(), &dev)?;
        let fd = OwnedFd::from(f);
        rustix::io::ioctl_fionbio(&fd, true)?;
        Ok(fd)
    })
    .join()
    .map_err(|_| EmulatorError::Panicked(what.clone()))?
    .map_err(|e| LabError::io(what, e))
}

/// Bytes of buffer a direction needs: everything in flight at the rate (or at 10
/// Gbit/s without one) over the delay and jitter, plus the queue, with margin.
fn ring_bytes(d: &DirLink, express: bool) -> usize {
    let bps = d.rate.map_or(1.25e9, |r| r.bytes_per_sec());
    let span = if express {
        0.020
    } else {
        (d.delay.0 + d.jitter.0) as f64 / 1e9 + 0.020
    };
    if express && d.reorder == 0.0 {
        return 2 * (MAX_PACKET + 64);
    }
    let want = bps * span + queue_limits(d).0 as f64 + 8.0 * MAX_PACKET as f64;
    want.clamp(4.0 * 1048576.0, 1024.0 * 1048576.0) as usize
}

impl Emulator {
    /// Attaches to the TUN devices and starts both directions.
    pub fn start(cfg: &EmulatorConfig) -> Result<Emulator> {
        let cli = Arc::new(open_tun(&cfg.client_ns, &cfg.dev)?);
        let srv = Arc::new(open_tun(&cfg.server_ns, &cfg.dev)?);
        let stop = Arc::new(AtomicBool::new(false));
        let stats = [Arc::new(DirStats::default()), Arc::new(DirStats::default())];
        let epoch = Instant::now();
        let mut threads = Vec::new();
        for (i, (name, input, output, link)) in [
            ("sonde-emu-up", cli.clone(), srv.clone(), cfg.up),
            ("sonde-emu-down", srv, cli, cfg.down),
        ]
        .into_iter()
        .enumerate()
        {
            let pipe = Pipe {
                input,
                output,
                model: Model::new(
                    &link,
                    cfg.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64,
                ),
                delayed: Ring::new(ring_bytes(&link, false)),
                express: Ring::new(ring_bytes(&link, true)),
                scratch: vec![0; MAX_PACKET],
                stats: stats[i].clone(),
                stop: stop.clone(),
                epoch,
                overshoot: INITIAL_OVERSHOOT,
            };
            let h = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || pipe.run())
                .map_err(|e| LabError::io("starting the emulator", e))?;
            threads.push(h);
        }
        Ok(Emulator {
            stop,
            threads,
            stats,
        })
    }

    /// The counters so far.
    pub fn stats(&self) -> EmulatorStats {
        EmulatorStats {
            up: self.stats[0].snapshot(),
            down: self.stats[1].snapshot(),
        }
    }

    /// Whether a direction has stopped with an error.
    pub fn failed(&self) -> bool {
        self.threads.iter().any(|t| t.is_finished())
    }

    /// Stops both directions and returns the final counters, or the first error a
    /// direction stopped with.
    pub fn stop(mut self) -> Result<EmulatorStats> {
        let r = self.halt();
        r.map(|_| self.stats())
    }

    fn halt(&mut self) -> Result<()> {
        self.stop.store(true, Relaxed);
        let mut first = Ok(());
        for t in self.threads.drain(..) {
            let r = t
                .join()
                .unwrap_or_else(|_| Err(EmulatorError::Panicked("a direction".into())));
            if let (Err(e), Ok(())) = (r, &first) {
                first = Err(LabError::Emulator(e));
            }
        }
        first
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// One direction.
struct Pipe {
    input: Arc<OwnedFd>,
    output: Arc<OwnedFd>,
    model: Model,
    delayed: Ring,
    express: Ring,
    scratch: Vec<u8>,
    stats: Arc<DirStats>,
    stop: Arc<AtomicBool>,
    epoch: Instant,
    /// Moving average of how late timed-out sleeps wake, ns.
    overshoot: u64,
}

impl Pipe {
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    fn run(mut self) -> std::result::Result<(), EmulatorError> {
        // Punctual wake-ups: the default 50 us of timer slack is a quarter of the
        // delay error budget.
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        while !self.stop.load(Relaxed) {
            let now = self.now();
            self.deliver(now, now);
            let mut n = 0;
            while n < BATCH {
                match self.read_one() {
                    Ok(true) => n += 1,
                    Ok(false) => break,
                    Err(e) => return Err(e),
                }
            }
            if n == BATCH {
                continue;
            }
            let now = self.now();
            let next = [self.delayed.front_due(), self.express.front_due()]
                .into_iter()
                .flatten()
                .min();
            // The kernel (a VM's especially) wakes a sleeper tens of microseconds
            // late: sleep that much less, and deliver what falls due within it now
            // rather than spin. Errors then centre on zero, at no CPU cost.
            let wait = match next {
                Some(due) if due <= now + self.overshoot => {
                    self.deliver(now + self.overshoot, now);
                    // Delivering early never sleeps, so it never learns: let the
                    // estimate decay, so that one too large does not stick.
                    self.overshoot -= self.overshoot / 32;
                    continue;
                }
                Some(due) => (due - now - self.overshoot).min(MAX_SLEEP.as_nanos() as u64),
                None => MAX_SLEEP.as_nanos() as u64,
            };
            let mut fds = [PollFd::new(&self.input, PollFlags::IN)];
            let timeout = Timespec {
                tv_sec: (wait / 1_000_000_000) as i64,
                tv_nsec: (wait % 1_000_000_000) as i64,
            };
            let woke = rustix::event::poll(&mut fds, Some(&timeout));
            match woke {
                Ok(0) => {
                    // Timed out: learn how late the kernel woke us. One very late
                    // wake-up (a descheduled vCPU) counts as at most twice the
                    // estimate, so it cannot push the estimate past short delays.
                    let late = self
                        .now()
                        .saturating_sub(now + wait)
                        .min(2 * self.overshoot + 20_000)
                        .min(MAX_OVERSHOOT);
                    self.overshoot = (self.overshoot * 7 + late) / 8;
                }
                Ok(_) | Err(Errno::INTR) => {}
                Err(source) => {
                    return Err(EmulatorError::Sys {
                        what: "ppoll",
                        source,
                    })
                }
            }
        }
        Ok(())
    }

    /// Reads one packet if there is one; false when the device is drained.
    fn read_one(&mut self) -> std::result::Result<bool, EmulatorError> {
        let (len, in_ring) = match self.delayed.slot(MAX_PACKET) {
            Some(slot) => match rustix::io::read(&self.input, slot) {
                Ok(n) => (n, true),
                Err(Errno::AGAIN) => return Ok(false),
                Err(Errno::INTR) => return Ok(true),
                Err(source) => {
                    return Err(EmulatorError::Sys {
                        what: "reading the TUN device",
                        source,
                    })
                }
            },
            None => match rustix::io::read(&self.input, &mut self.scratch) {
                Ok(n) => (n, false),
                Err(Errno::AGAIN) => return Ok(false),
                Err(Errno::INTR) => return Ok(true),
                Err(source) => {
                    return Err(EmulatorError::Sys {
                        what: "reading the TUN device",
                        source,
                    })
                }
            },
        };
        if len == 0 {
            return Ok(true);
        }
        let st = &*self.stats;
        DirStats::add(&st.packets_in, 1);
        DirStats::add(&st.bytes_in, len as u64);
        let now = self.now();
        match self.model.packet(now, len) {
            Verdict::Lost => DirStats::add(&st.lost, 1),
            Verdict::QueueFull => DirStats::add(&st.queue_drops, 1),
            Verdict::Deliver {
                due,
                express,
                copies,
            } => {
                if copies > 1 {
                    DirStats::add(&st.duplicated, 1);
                }
                if !in_ring {
                    DirStats::add(&st.overflow, 1);
                } else if express {
                    DirStats::add(&st.reordered, 1);
                    // Rare by construction (a share the user sets): copy the packet
                    // from the delayed ring's uncommitted slot into the express ring.
                    let (delayed, express) = (&mut self.delayed, &mut self.express);
                    let src = delayed.slot(MAX_PACKET).expect("the slot just read into");
                    match express.slot(len) {
                        Some(dst) => {
                            dst.copy_from_slice(&src[..len]);
                            express.commit(len, due, copies);
                        }
                        None => DirStats::add(&st.overflow, 1),
                    }
                } else {
                    self.delayed.commit(len, due, copies);
                }
            }
        }
        Ok(true)
    }

    /// Writes every packet due by `until`, in due order across both rings, at time
    /// `now`.
    fn deliver(&mut self, until: u64, now: u64) {
        loop {
            let d = self.delayed.front_due().filter(|&t| t <= until);
            let e = self.express.front_due().filter(|&t| t <= until);
            let ring = match (d, e) {
                (None, None) => return,
                (Some(a), Some(b)) if b < a => &mut self.express,
                (Some(_), _) => &mut self.delayed,
                (None, Some(_)) => &mut self.express,
            };
            let entry = ring.front().expect("a due packet");
            let st = &*self.stats;
            for _ in 0..entry.copies {
                match rustix::io::write(&self.output, entry.data) {
                    Ok(n) => {
                        DirStats::add(&st.delivered, 1);
                        DirStats::add(&st.bytes_out, n as u64);
                    }
                    Err(_) => DirStats::add(&st.write_errors, 1),
                }
            }
            st.error(now as i64 - entry.due as i64);
            ring.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::units::{BitRate, Nanos};

    #[test]
    fn rings_hold_the_bandwidth_delay_product() {
        let d = DirLink {
            rate: Some(BitRate(1e9)),
            delay: Nanos::from_millis(114),
            ..DirLink::default()
        };
        // 125 MB/s over 134 ms plus the 50 ms default queue: about 23 MB.
        let b = ring_bytes(&d, false);
        assert!((22_000_000..24_500_000).contains(&b), "{b}");
        assert_eq!(ring_bytes(&d, true), 2 * (MAX_PACKET + 64));
        // No rate: 20 ms at 10 Gbit/s, 100 frames of queue, 8 packets of margin.
        assert_eq!(
            ring_bytes(&DirLink::default(), false),
            25_000_000 + 153_800 + 524_288
        );
    }

    #[test]
    fn delivery_error_histogram() {
        let s = DirStats::default();
        for ns in [-20_000, 5_000, 15_000, 150_000, 7_000_000] {
            s.error(ns);
        }
        s.error(15_500);
        s.error(-1);
        let snap = s.snapshot();
        assert_eq!(snap.error_count, 7);
        assert_eq!(snap.error_p10_us, -20);
        assert_eq!(snap.error_p50_us, 15);
        assert_eq!(snap.error_p90_us, ERROR_LATE_US);
        assert_eq!(snap.late_max_ns, 7_000_000);
        assert_eq!(quantile(&[0, 0, 0], 0.5), 0);
        assert_eq!(quantile(&[1, 1, 1, 1], 0.5), 1);
    }
}
