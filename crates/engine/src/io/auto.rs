//! auto: adaptive choice of the send and the receive strategy on the live
//! connection, each side on its own ([`AutoTx`], [`AutoRx`]), by the same
//! [`Calibration`].
//!
//! The send candidates are the send strategies that build here and can beat a
//! plain copy (TCP: batch, zerocopy, sendfile, splice, uring; UDP: batch, zerocopy,
//! uring). `copy` itself is not one: `batch` makes the same copy in fewer calls,
//! and at sizes where it fits one message in a call it is `copy`. The receive
//! candidates are those that can take over at any call and keep the counts:
//! batch, and for TCP unless `--verify` needs the bytes, splice into /dev/null
//! and MSG_TRUNC, which discard them (see [`rx`]; a UDP receiver has batch
//! alone). When both sides are adaptive the receiver races
//! first and the sender waits [`TX_DELAY`], so that neither measures the other's
//! switching: which receiver is best hardly depends on the sender (it is the
//! receive copy, or none), while which sender is best depends on what the
//! receiver then lets through. A zero-copy
//! candidate whose sends the kernel reports it copied anyway (always so on
//! loopback and veth) is a copy with extra bookkeeping and leaves the race at once.
//! Calibration runs in rounds. Each round gives every candidate still in the race
//! one short window on the live connection, in an order that rotates from round to
//! round, measuring bytes per second and this thread's CPU time per byte
//! (`getrusage(RUSAGE_THREAD)`, read once per window, not per send).
//!
//! On a shared host the path's speed drifts by a factor of two within a tenth of a
//! second, so a candidate's raw rate says more about when it ran than about the
//! candidate. Each window's rate is therefore compared with the best rate of the
//! same round (windows a few milliseconds apart see the same conditions), and a
//! candidate's score is the median of those ratios over the rounds. Each window
//! first lets the socket queues settle after the switch and counts only after that.
//!
//! Calibration has two heats. The [`SCREEN`] heat gives every candidate short
//! windows and drops those far behind the leader (a copy at 64 bytes runs at a
//! hundredth of a batch). Short windows do not show the steady state, though: on
//! loopback at 16 KiB, `sendfile` and `batch` run neck and neck for the first
//! tenth of a second after a switch, after which `batch` settles near 35 Gbit/s
//! and `sendfile` near 17. The [`FINAL`] heat therefore runs the survivors over
//! windows that settle for 100 ms and count for 100 ms, drops those behind after
//! each round, and decides.
//! The highest score wins; candidates within [`TIE`] of it are compared on CPU per
//! byte and the cheapest wins: the classic rule that the best send algorithm
//! depends on whether the CPU or the path is the bottleneck.
//!
//! Conditions change during a run, so every [`RECHECK_EVERY`] the finalists (the
//! candidates the final heat kept) race again for one round, and one that beats
//! the current choice by more than [`TIE`] takes over. Every test calibrates afresh, so a sweep re-decides at every message
//! size. The report names the choice, the figures behind it, and how often the
//! choice was re-checked and changed.
//!
//! The decision logic, [`Race`], is pure and tested without sockets.

use std::io;
use std::time::{Duration, Instant};

use netsonde_model::result::IoReport;
use netsonde_model::spec::{IoStrategy, TestSpec};

use super::{IoError, Moved, Rx, Sock, Tx};

/// How one race is run: window timing, rounds, and who drops out.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Heat {
    /// Sends after a switch that a window does not count, while the socket queues
    /// filled or drained by the previous candidate settle.
    pub settle: Duration,
    /// The counted part of a window.
    pub window: Duration,
    /// Rounds before any candidate may drop out.
    pub min_rounds: usize,
    /// Rounds after which the race is decided whoever is left.
    pub max_rounds: usize,
    /// A candidate whose score falls below this fraction of the leader's drops out.
    pub keep: f64,
}

/// Every candidate, short windows: drops the ones far behind.
pub(crate) const SCREEN: Heat = Heat {
    settle: Duration::from_millis(3),
    window: Duration::from_millis(10),
    min_rounds: 3,
    max_rounds: 3,
    keep: 0.5,
};
/// The survivors of the screen, over windows long enough to reach the steady
/// state a strategy settles into.
pub(crate) const FINAL: Heat = Heat {
    settle: Duration::from_millis(60),
    window: Duration::from_millis(100),
    min_rounds: 2,
    max_rounds: 3,
    keep: 0.85,
};
/// The finalists again, during the run: one round, and the current choice stays
/// unless another beats it by more than [`TIE`].
pub(crate) const RECHECK: Heat = Heat {
    min_rounds: 1,
    max_rounds: 1,
    ..FINAL
};
/// Scores within this fraction of the best tie (the noise of a window).
pub(crate) const TIE: f64 = 0.05;
/// How often the finalists race again once a choice is made.
const RECHECK_EVERY: Duration = Duration::from_secs(5);

/// Why the race picked its winner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Why {
    /// The highest score.
    Fastest,
    /// Tied on throughput within [`TIE`], lowest CPU per byte.
    Cheapest,
    /// Only one candidate.
    Alone,
}

/// A race between candidates `0..n` (pure: it is told what each window measured).
#[derive(Debug, Clone)]
pub(crate) struct Race {
    /// Indices of the candidates taking part.
    entrants: Vec<usize>,
    live: Vec<bool>,
    /// Per entrant: rate relative to the round's best, one per round it ran.
    rel: Vec<Vec<f64>>,
    bytes: Vec<u64>,
    secs: Vec<f64>,
    cpu: Vec<f64>,
    round: usize,
    /// Rates measured in the current round (entrant slot, rate).
    this_round: Vec<(usize, f64)>,
    /// Entrant slots still to run in this round, next last.
    queue: Vec<usize>,
    heat: Heat,
}

/// The outcome of a race.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    /// The winning candidate's index.
    pub pick: usize,
    /// Why.
    pub why: Why,
    /// Candidates still in the race at the end (they race again at re-checks).
    pub finalists: Vec<usize>,
}

impl Race {
    /// A race between `entrants` (candidate indices), run as `heat` says.
    pub(crate) fn new(entrants: Vec<usize>, heat: Heat) -> Race {
        let min_rounds = heat.min_rounds.max(1);
        let max_rounds = heat.max_rounds.max(min_rounds);
        let n = entrants.len();
        let mut r = Race {
            entrants,
            live: vec![true; n],
            rel: (0..n).map(|_| Vec::with_capacity(max_rounds)).collect(),
            bytes: vec![0; n],
            secs: vec![0.0; n],
            cpu: vec![0.0; n],
            round: 0,
            this_round: Vec::with_capacity(n),
            queue: Vec::with_capacity(n),
            heat: Heat {
                min_rounds,
                max_rounds,
                ..heat
            },
        };
        r.fill_queue();
        r
    }

    fn fill_queue(&mut self) {
        let live: Vec<usize> = (0..self.entrants.len()).filter(|&i| self.live[i]).collect();
        self.queue.clear();
        if live.is_empty() {
            return;
        }
        // Rotate the order each round so no candidate always follows the same one.
        let k = self.round % live.len();
        self.queue.extend(live[k..].iter().chain(&live[..k]).rev());
    }

    /// The candidate to measure now.
    pub(crate) fn current(&self) -> usize {
        self.queue
            .last()
            .map(|&slot| self.entrants[slot])
            .unwrap_or(self.entrants[0])
    }

    /// Records the window just measured for [`Race::current`]; the verdict once the
    /// race is decided.
    pub(crate) fn record(&mut self, bytes: u64, secs: f64, cpu: f64) -> Option<Verdict> {
        let slot = self.queue.pop()?;
        self.bytes[slot] += bytes;
        self.secs[slot] += secs;
        self.cpu[slot] += cpu.max(0.0);
        let rate = if secs > 0.0 { bytes as f64 / secs } else { 0.0 };
        self.this_round.push((slot, rate));
        if !self.queue.is_empty() {
            return None;
        }
        // End of a round: each rate relative to the round's best.
        let best = self.this_round.iter().map(|&(_, r)| r).fold(0.0, f64::max);
        for &(s, r) in &self.this_round {
            self.rel[s].push(if best > 0.0 { r / best } else { 0.0 });
        }
        self.this_round.clear();
        self.round += 1;
        if self.round >= self.heat.min_rounds {
            let top = self.top_score();
            for s in 0..self.entrants.len() {
                if self.live[s] && self.score(s) < top * self.heat.keep {
                    self.live[s] = false;
                }
            }
        }
        let left = self.live.iter().filter(|&&l| l).count();
        if left <= 1 || self.round >= self.heat.max_rounds {
            return Some(self.verdict());
        }
        self.fill_queue();
        None
    }

    /// Takes `candidate` out of the race (after its current window is recorded),
    /// unless it is the last one in it.
    pub(crate) fn disqualify(&mut self, candidate: usize) {
        let others = (0..self.entrants.len())
            .filter(|&s| self.live[s] && self.entrants[s] != candidate)
            .count();
        if others > 0 {
            for s in 0..self.entrants.len() {
                if self.entrants[s] == candidate {
                    self.live[s] = false;
                }
            }
        }
    }

    /// The score of `candidate` (0 if it is not an entrant).
    pub(crate) fn score_of(&self, candidate: usize) -> f64 {
        (0..self.entrants.len())
            .find(|&s| self.entrants[s] == candidate)
            .map(|s| self.score(s))
            .unwrap_or(0.0)
    }

    /// Median relative rate of entrant slot `s`.
    pub(crate) fn score(&self, s: usize) -> f64 {
        let mut v = self.rel[s].clone();
        if v.is_empty() {
            return 0.0;
        }
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        }
    }

    fn top_score(&self) -> f64 {
        (0..self.entrants.len())
            .filter(|&s| self.live[s])
            .map(|s| self.score(s))
            .fold(0.0, f64::max)
    }

    fn cpu_per_byte(&self, s: usize) -> f64 {
        if self.bytes[s] > 0 {
            self.cpu[s] / self.bytes[s] as f64
        } else {
            f64::MAX
        }
    }

    fn verdict(&self) -> Verdict {
        let live: Vec<usize> = (0..self.entrants.len()).filter(|&s| self.live[s]).collect();
        let top = self.top_score();
        let fastest = live
            .iter()
            .copied()
            .max_by(|&a, &b| self.score(a).total_cmp(&self.score(b)))
            .unwrap_or(0);
        let pick = live
            .iter()
            .copied()
            .filter(|&s| self.score(s) >= top * (1.0 - TIE))
            .min_by(|&a, &b| self.cpu_per_byte(a).total_cmp(&self.cpu_per_byte(b)))
            .unwrap_or(fastest);
        let why = if self.entrants.len() == 1 {
            Why::Alone
        } else if pick == fastest {
            Why::Fastest
        } else {
            Why::Cheapest
        };
        Verdict {
            pick: self.entrants[pick],
            why,
            finalists: live.iter().map(|&s| self.entrants[s]).collect(),
        }
    }

    /// One line of figures per entrant: score, Gbit/s over its windows, CPU per byte.
    fn figures(&self, names: &[IoStrategy]) -> String {
        (0..self.entrants.len())
            .map(|s| {
                let rate = if self.secs[s] > 0.0 {
                    self.bytes[s] as f64 / self.secs[s] * 8e-9
                } else {
                    0.0
                };
                format!(
                    "{} {:.2} of the best over {} rounds, {:.2} Gbit/s, {:.2} ns/B{}",
                    names[self.entrants[s]],
                    self.score(s),
                    self.rel[s].len(),
                    rate,
                    self.cpu_per_byte(s).min(1e9) * 1e9,
                    if self.live[s] { "" } else { " (dropped)" }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Which race is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Screen,
    Final,
    Recheck,
}

/// The calibration schedule that the adaptive sender and receiver share: which
/// candidate runs now, the windows, the heats, the re-checks, and the note. It
/// knows candidates by index only; the caller moves the bytes.
struct Calibration {
    /// Which side chooses: "send" or "receive", for the note.
    side: &'static str,
    names: Vec<IoStrategy>,
    skipped: Vec<String>,
    /// The candidate running now.
    cur: usize,
    /// The race under way, if any, and which one.
    race: Option<(Stage, Race)>,
    /// The first race starts at this time.
    start_at: Option<Instant>,
    /// The current choice and the candidates that race at re-checks.
    chosen: Option<usize>,
    finalists: Vec<usize>,
    /// What the screen heat measured, for the report.
    screen_figures: String,
    window_start: Instant,
    cpu_start: f64,
    window_bytes: u64,
    /// Whether the current window has passed its settling time and is counting.
    counting: bool,
    next_recheck: Instant,
    rechecks: u32,
    switches: u32,
    note: Option<String>,
}

/// The calling thread's CPU time so far, seconds.
fn thread_cpu() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}

impl Calibration {
    /// Calibration between `names` (at least one), the first race starting after
    /// `delay`.
    fn new(
        side: &'static str,
        names: Vec<IoStrategy>,
        skipped: Vec<String>,
        delay: Duration,
    ) -> Calibration {
        let now = Instant::now();
        Calibration {
            side,
            names,
            skipped,
            cur: 0,
            race: None,
            start_at: Some(now + delay),
            chosen: None,
            finalists: Vec::new(),
            screen_figures: String::new(),
            window_start: now,
            cpu_start: thread_cpu(),
            window_bytes: 0,
            counting: false,
            next_recheck: now,
            rechecks: 0,
            switches: 0,
            note: None,
        }
    }

    /// Before a call: advances windows and races. `idle`: the current candidate
    /// holds nothing in flight, so another may take over; `copied`: it is a
    /// zero-copy candidate the kernel copies anyway. Returns the candidate to use
    /// (it changes only here).
    #[inline]
    fn before(&mut self, idle: impl FnOnce() -> bool, copied: impl FnOnce() -> bool) -> usize {
        // The clock is read per call only while racing or waiting to, or to see a
        // re-check is due when there is something to re-check.
        if let Some((_, race)) = &self.race {
            let heat = race.heat;
            let now = Instant::now();
            let age = now.duration_since(self.window_start);
            if !self.counting {
                if age >= heat.settle {
                    self.counting = true;
                    self.window_start = now;
                    self.window_bytes = 0;
                    self.cpu_start = thread_cpu();
                }
            } else if age >= heat.window && idle() {
                // Switch only when nothing is in flight.
                self.close_window(now, copied());
            }
        } else if let Some(at) = self.start_at {
            let now = Instant::now();
            if now >= at && idle() {
                self.start_at = None;
                self.begin(now, Stage::Screen, (0..self.names.len()).collect(), SCREEN);
            }
        } else if self.finalists.len() > 1 {
            let now = Instant::now();
            if now >= self.next_recheck && idle() {
                self.rechecks += 1;
                self.begin(now, Stage::Recheck, self.finalists.clone(), RECHECK);
            }
        }
        self.cur
    }

    /// After a call that moved `bytes`.
    #[inline]
    fn after(&mut self, bytes: u64) {
        if self.counting {
            self.window_bytes += bytes;
        }
    }

    fn begin(&mut self, now: Instant, stage: Stage, entrants: Vec<usize>, heat: Heat) {
        let r = Race::new(entrants, heat);
        let next = r.current();
        self.race = Some((stage, r));
        self.start_window(now, next);
    }

    /// Starts a window on whichever candidate runs next.
    fn start_window(&mut self, now: Instant, next: usize) {
        self.window_bytes = 0;
        self.window_start = now;
        self.counting = false;
        self.cur = next;
    }

    /// Closes the window at `now` and moves to whichever candidate runs next.
    fn close_window(&mut self, now: Instant, copied: bool) {
        let secs = now.duration_since(self.window_start).as_secs_f64();
        let cpu = thread_cpu() - self.cpu_start;
        let Some((stage, race)) = &mut self.race else {
            return;
        };
        let stage = *stage;
        if copied {
            race.disqualify(self.cur);
        }
        let Some(v) = race.record(self.window_bytes, secs, cpu) else {
            let next = race.current();
            self.start_window(now, next);
            return;
        };
        let figures = race.figures(&self.names);
        let keep_current = stage == Stage::Recheck
            && self.chosen.is_some_and(|c| {
                v.pick != c && race.score_of(v.pick) < race.score_of(c) * (1.0 + TIE)
            });
        self.race = None;
        if keep_current {
            let c = self.chosen.unwrap_or(v.pick);
            self.next_recheck = now + RECHECK_EVERY;
            self.start_window(now, c);
            return;
        }
        if stage == Stage::Screen && v.finalists.len() > 1 {
            self.screen_figures = figures;
            self.begin(now, Stage::Final, v.finalists, FINAL);
            return;
        }
        if stage == Stage::Recheck {
            if self.chosen != Some(v.pick) {
                self.switches += 1;
            }
        } else {
            let why = match v.why {
                Why::Fastest => "highest throughput",
                Why::Cheapest => "throughput within 5% of the best, lowest CPU per byte",
                Why::Alone => "the only candidate",
            };
            let mut note = format!("auto chose {}: {why} (", self.names[v.pick]);
            if stage == Stage::Final {
                note.push_str(&format!(
                    "screen, {} ms windows: {}; final, {} ms windows: ",
                    SCREEN.window.as_millis(),
                    self.screen_figures,
                    FINAL.window.as_millis()
                ));
            } else {
                note.push_str("calibrated: ");
            }
            note.push_str(&figures);
            note.push(')');
            if !self.skipped.is_empty() {
                note.push_str(&format!("; not available: {}", self.skipped.join(", ")));
            }
            self.note = Some(note);
            self.finalists = v.finalists;
        }
        self.chosen = Some(v.pick);
        self.next_recheck = now + RECHECK_EVERY;
        self.start_window(now, v.pick);
    }

    /// The note for the report, given the strategy it ended on.
    fn note(&self) -> String {
        let mut note = self.note.clone().unwrap_or_else(|| {
            format!(
                "auto ({}): the test ended before calibration finished",
                self.side
            )
        });
        if self.rechecks > 0 {
            note.push_str(&format!(
                "; re-checked {} times among {}, changed {} times, ended on {}",
                self.rechecks,
                self.finalists
                    .iter()
                    .map(|&i| self.names[i].name())
                    .collect::<Vec<_>>()
                    .join("/"),
                self.switches,
                self.names[self.cur]
            ));
        }
        note
    }
}

/// Candidates built, their names, and why the others were left out.
type Built<T> = (Vec<T>, Vec<IoStrategy>, Vec<String>);

/// Builds every candidate in `names` that this host supports: the candidates,
/// their names, and why the others were left out. None at all is an error.
fn build<T>(
    names: &[IoStrategy],
    side: &str,
    make: impl Fn(IoStrategy) -> Result<T, IoError>,
) -> Result<Built<T>, IoError> {
    let (mut cands, mut built, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    for &s in names {
        match make(s) {
            Ok(c) => {
                cands.push(c);
                built.push(s);
            }
            Err(e) => skipped.push(format!("{s} ({e})")),
        }
    }
    if cands.is_empty() {
        return Err(super::unsupported(
            IoStrategy::Auto,
            format!("no {side} strategy builds here: {}", skipped.join(", ")),
        ));
    }
    Ok((cands, built, skipped))
}

/// The adaptive sender.
pub struct AutoTx {
    cands: Vec<Box<dyn Tx>>,
    cal: Calibration,
    size: u64,
    stream_bytes: u64,
}

/// Builds the adaptive sender.
pub fn tx(sock: Sock<'_>, spec: &TestSpec) -> Result<Box<dyn Tx>, IoError> {
    use IoStrategy::*;
    let names: &[IoStrategy] = match sock {
        Sock::Tcp(_) => &[Batch, Zerocopy, Sendfile, Splice, Uring],
        Sock::Udp(_) => &[Batch, Zerocopy, Uring],
    };
    let (cands, built, skipped) = build(names, "send", |s| {
        super::tx(s, sock, spec, crate::datagram::Format::Netsonde)
    })?;
    Ok(Box::new(AutoTx {
        cands,
        cal: Calibration::new(
            "send",
            built,
            skipped,
            if spec.rx_io == Auto && !spec.verify {
                TX_DELAY
            } else {
                Duration::ZERO
            },
        ),
        size: spec.size.0.max(1),
        stream_bytes: 0,
    }))
}

impl Tx for AutoTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        let was = self.cal.cur;
        let cands = &self.cands;
        let cur = self
            .cal
            .before(|| cands[was].idle(), || cands[was].copied_anyway());
        if cur != was {
            // The next strategy continues the stream from the current position
            // within a message.
            let pos = (self.stream_bytes % self.size) as usize;
            self.cands[cur].set_pos(pos);
        }
        let m = self.cands[cur].send(sock, seq, tx_ns)?;
        self.stream_bytes += m.bytes;
        self.cal.after(m.bytes);
        Ok(m)
    }

    fn finish(&mut self, sock: Sock<'_>) -> IoReport {
        let cur = self.cal.cur;
        let mut r = self.cands[cur].finish(sock);
        r.strategy = format!("auto:{}", self.cal.names[cur]);
        r.note = Some(self.cal.note());
        r
    }

    fn idle(&self) -> bool {
        self.cands[self.cal.cur].idle()
    }
}

/// How long an adaptive sender waits before its first race when the receiver is
/// adaptive too (and races: not with `--verify`), sending with its first candidate
/// meanwhile, so that the two
/// races do not measure each other's switching. The receiver's calibration (three
/// candidates at most) takes about a second (see [`SCREEN`], [`FINAL`]).
pub const TX_DELAY: Duration = Duration::from_millis(1500);

/// The adaptive receiver.
pub struct AutoRx {
    cands: Vec<Box<dyn Rx>>,
    cal: Calibration,
}

/// Builds the adaptive receiver. Its candidates are the receive strategies that
/// can be switched between at any call (nothing held in flight) and keep the
/// flow's counts: `batch`, and for TCP, unless `--verify` needs the bytes, the
/// two that discard them without copying to user space (`splice` into
/// /dev/null, `zerocopy`'s MSG_TRUNC). UDP has `batch` alone: it turns on GRO
/// for the socket, and MSG_TRUNC on a GRO socket reads one header of a
/// coalesced super-datagram of dozens, while the receiver counts loss, order and
/// jitter by every datagram's header (a run counted 1.16 M of 6.82 M datagrams,
/// "90.7% lost"). `uring`'s armed multishot receive holds buffers between
/// calls, so it is not one.
pub fn rx(sock: Sock<'_>, spec: &TestSpec) -> Result<Box<dyn Rx>, IoError> {
    use IoStrategy::*;
    let names: &[IoStrategy] = match (sock, spec.verify) {
        (Sock::Tcp(_), false) => &[Batch, Splice, Zerocopy],
        (Sock::Tcp(_), true) | (Sock::Udp(_), _) => &[Batch],
    };
    let (cands, built, skipped) = build(names, "receive", |s| super::rx(s, sock, spec))?;
    let mut cal = Calibration::new("receive", built, skipped, Duration::ZERO);
    if spec.verify {
        cal.note = Some("auto chose batch: --verify needs the bytes in user space".into());
        cal.start_at = None;
    } else if matches!(sock, Sock::Udp(_)) {
        cal.note = Some(
            "auto chose batch: a UDP receiver counts every datagram's header, which \
             MSG_TRUNC on a GRO socket does not read"
                .into(),
        );
        cal.start_at = None;
    }
    Ok(Box::new(AutoRx { cands, cal }))
}

impl Rx for AutoRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let cur = self.cal.before(|| true, || false);
        let r = self.cands[cur].recv(sock, on)?;
        if let Some(m) = &r {
            self.cal.after(m.bytes);
        }
        Ok(r)
    }

    fn report(&mut self) -> IoReport {
        let cur = self.cal.cur;
        let mut r = self.cands[cur].report();
        r.strategy = format!("auto:{}", self.cal.names[cur]);
        r.note = Some(self.cal.note());
        r
    }
}

#[cfg(test)]
#[path = "auto_tests.rs"]
mod tests;
