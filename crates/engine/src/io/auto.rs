//! auto: adaptive choice of the send strategy on the live connection.
//!
//! The first sends rotate through the candidates that build here (TCP: copy,
//! batch, zerocopy, sendfile, splice, uring; UDP: copy, batch, zerocopy, uring),
//! each for short windows, twice round, measuring bytes per second and this
//! thread's CPU time per byte (`getrusage(RUSAGE_THREAD)`, read once per window, not
//! per send). The fastest wins; candidates within 5% of it (the noise of a window)
//! are compared on CPU per byte and the cheapest wins, the classic rule that the
//! best send algorithm depends on whether the CPU or the path is the bottleneck.
//! Every test calibrates afresh, so a sweep re-decides at every message size. The
//! report names the choice and the figures behind it.

use std::io;
use std::time::{Duration, Instant};

use netsonde_model::result::IoReport;
use netsonde_model::spec::{IoStrategy, TestSpec};
use nix::sys::resource::{getrusage, UsageWho};

use super::{IoError, Moved, Sock, Tx};

const WINDOW: Duration = Duration::from_millis(30);
const ROUNDS: usize = 2;
const TIE: f64 = 0.05;

struct Candidate {
    strategy: IoStrategy,
    tx: Box<dyn Tx>,
    bytes: u64,
    secs: f64,
    cpu: f64,
}

/// The adaptive sender.
pub struct AutoTx {
    cands: Vec<Candidate>,
    skipped: Vec<String>,
    /// Index being measured (calibrating) or chosen.
    cur: usize,
    window_start: Instant,
    cpu_start: f64,
    window_bytes: u64,
    windows_done: usize,
    chosen: bool,
    size: u64,
    stream_bytes: u64,
    note: Option<String>,
}

fn thread_cpu() -> f64 {
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or(0.0)
}

/// Builds the adaptive sender.
pub fn tx(sock: Sock<'_>, spec: &TestSpec) -> Result<Box<dyn Tx>, IoError> {
    use IoStrategy::*;
    let names: &[IoStrategy] = match sock {
        Sock::Tcp(_) => &[Copy, Batch, Zerocopy, Sendfile, Splice, Uring],
        Sock::Udp(_) => &[Copy, Batch, Zerocopy, Uring],
    };
    let mut cands = Vec::new();
    let mut skipped = Vec::new();
    for &s in names {
        match super::tx(s, sock, spec) {
            Ok(tx) => cands.push(Candidate {
                strategy: s,
                tx,
                bytes: 0,
                secs: 0.0,
                cpu: 0.0,
            }),
            Err(e) => skipped.push(format!("{s} ({e})")),
        }
    }
    Ok(Box::new(AutoTx {
        cands,
        skipped,
        cur: 0,
        window_start: Instant::now(),
        cpu_start: thread_cpu(),
        window_bytes: 0,
        windows_done: 0,
        chosen: false,
        size: spec.size.0.max(1),
        stream_bytes: 0,
        note: None,
    }))
}

impl AutoTx {
    fn close_window(&mut self, now: Instant) {
        let c = &mut self.cands[self.cur];
        c.bytes += self.window_bytes;
        c.secs += now.duration_since(self.window_start).as_secs_f64();
        let cpu = thread_cpu();
        c.cpu += cpu - self.cpu_start;
        self.windows_done += 1;
        self.window_bytes = 0;
        self.window_start = now;
        self.cpu_start = cpu;
        if self.windows_done == self.cands.len() * ROUNDS {
            self.decide();
        } else {
            self.cur = (self.cur + 1) % self.cands.len();
        }
    }

    fn decide(&mut self) {
        let rate = |c: &Candidate| {
            if c.secs > 0.0 {
                c.bytes as f64 / c.secs
            } else {
                0.0
            }
        };
        let cpb = |c: &Candidate| {
            if c.bytes > 0 {
                c.cpu / c.bytes as f64
            } else {
                f64::MAX
            }
        };
        let best = self.cands.iter().map(rate).fold(0.0, f64::max);
        let pick = (0..self.cands.len())
            .filter(|&i| rate(&self.cands[i]) >= best * (1.0 - TIE))
            .min_by(|&a, &b| cpb(&self.cands[a]).total_cmp(&cpb(&self.cands[b])))
            .unwrap_or(0);
        let figures: Vec<String> = self
            .cands
            .iter()
            .map(|c| {
                format!(
                    "{} {:.2} Gbit/s {:.2} ns/B",
                    c.strategy,
                    rate(c) * 8e-9,
                    cpb(c) * 1e9
                )
            })
            .collect();
        let why = if rate(&self.cands[pick]) >= best {
            "highest throughput"
        } else {
            "throughput within 5% of the best, lowest CPU per byte"
        };
        let mut note = format!(
            "auto chose {}: {why} (calibrated: {})",
            self.cands[pick].strategy,
            figures.join("; ")
        );
        if !self.skipped.is_empty() {
            note.push_str(&format!("; not available: {}", self.skipped.join(", ")));
        }
        self.note = Some(note);
        self.cur = pick;
        self.chosen = true;
    }
}

impl Tx for AutoTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        if self.cands.is_empty() {
            return Err(io::Error::other("auto: no send strategy is available"));
        }
        if !self.chosen {
            let now = Instant::now();
            // Switch only when nothing is in flight; the next strategy continues the
            // stream from the current position within a message.
            if now.duration_since(self.window_start) >= WINDOW && self.cands[self.cur].tx.idle() {
                let old = self.cur;
                self.close_window(now);
                if self.cur != old {
                    let pos = (self.stream_bytes % self.size) as usize;
                    self.cands[self.cur].tx.set_pos(pos);
                }
            }
        }
        let m = self.cands[self.cur].tx.send(sock, seq, tx_ns)?;
        self.stream_bytes += m.bytes;
        if !self.chosen {
            self.window_bytes += m.bytes;
        }
        Ok(m)
    }

    fn finish(&mut self, sock: Sock<'_>) -> IoReport {
        let Some(c) = self.cands.get_mut(self.cur) else {
            return super::report(IoStrategy::Auto);
        };
        let mut r = c.tx.finish(sock);
        r.strategy = format!("auto:{}", c.strategy);
        r.note = Some(
            self.note
                .clone()
                .unwrap_or_else(|| "auto: the test ended before calibration finished".into()),
        );
        r
    }
}
