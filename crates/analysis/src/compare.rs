//! Regression detection between two runs of the same point: [`delta`] sets the
//! repetitions of a candidate against a baseline's for one metric, and [`judge`]
//! decides over every comparison of a run pair at once which changed for the
//! better, for the worse, or not measurably.
//!
//! A change counts only when it is both statistically significant and large enough
//! to matter:
//! - **the test**: the exact one-sided Mann–Whitney rank test
//!   ([`crate::stats::mann_whitney_less`]) in each direction, which assumes only
//!   independent repetitions;
//! - **the family**: a run pair compares many points and metrics, so the p-values
//!   are judged together with Holm's step-down procedure at a family level of
//!   [`FAMILY_ALPHA`]: the chance that comparing two runs of one configuration
//!   reports any regression at all is at most 5% (measured on this project's host:
//!   `docs/EXPERIMENTS.md`);
//! - **the size**: `|rel_change|` beyond the metric's practical change
//!   ([`practical_change`], table below), raised to a caller's floor if one is
//!   given ([`min_change`]);
//! - **the samples** behind a percentile: a percentile metric is judged only when
//!   every repetition's percentile rests on enough samples ([`samples_needed`]);
//!   one that does not is [`Verdict::NotJudged`], with the reason
//!   ([`NotJudged`]), and is left out of Holm's family, so it neither raises an
//!   alarm nor dilutes the others;
//! - **the host** behind a CPU figure: busy cores, service demand and the busiest
//!   core are judged only between runs whose foreign load (the stored
//!   `foreign_cores`) differs by less than [`FOREIGN_DIFFERS`], and only when
//!   neither run's repetitions spread (max − min over the baseline's median)
//!   wider than the change; otherwise not judged, with the reason. On a busy
//!   host (either run's foreign load 0.15 cores or more) every metric's change
//!   must exceed the two runs' spreads added: back-to-back runs each drift
//!   with the other work's phase;
//! - **undecided**: a change beyond its practical threshold that does not pass
//!   the test is [`Verdict::Undecided`], never "same": with 3 repetitions a
//!   side even a 30% drop cannot be significant, and saying "same" would hide it.
//!
//! Few repetitions cannot reach significance: the smallest p-value of n against n
//! repetitions is `1 / C(2n, n)` (0.05 at 3 against 3), so [`reps_for`] says how
//! many a family of comparisons needs. Which direction is better comes from
//! [`Metric::higher_is_better`].
//!
//! # Samples behind a percentile
//!
//! A repetition's q-quantile taken over n transactions is decided by the
//! `n·(1 − q)` slowest of them (`n·q` fastest below the median). With 180
//! transactions, a p99 is the 2nd slowest: one scheduling hiccup more or less moves
//! it by tens of percent, and five such values a side can fall in any order. So a
//! percentile is judged only when, in every repetition of both runs,
//! `n·min(q, 1 − q) ≥` [`MIN_TAIL_SAMPLES`] = 10, that is
//!
//! | percentile | transactions per repetition |
//! |---|---|
//! | p50 | 20 |
//! | p90 | 100 |
//! | p99 | 1,000 |
//! | p99.9 | 10,000 |
//!
//! Why 10: the number of samples beyond the true quantile is close to Poisson
//! with mean k = `n·(1 − q)`, so the rank the estimate lands on wanders by `√k`;
//! for an exponential tail the estimate's relative standard error is then about
//! `1 / (ln(1/(1 − q))·√k)`: 7% for a p99 at k = 10, 22% at the k = 1.8 of the
//! reported false alarm. At k = 10 that error sits under the 10% a tail must move
//! to count (below), so a percentile that passes the rule can carry its threshold;
//! a heavier tail than exponential (loopback's, see below) is what the larger tail
//! threshold is for. Asking k = 20 would halve no error that matters here and
//! would leave p99.9 unjudged by every sweep shorter than 20,000 transactions.
//!
//! # The practical change of each metric
//!
//! A change must also be large enough to matter, and larger than how far two
//! back-to-back runs of one configuration drift apart, which a rank test cannot
//! tell from a change (it assumes independent repetitions; consecutive runs share
//! the host's state). The threshold is per kind of metric:
//!
//! | kind | metrics | change |
//! |---|---|---|
//! | throughput | `goodput*`, `messages_per_sec`, `transactions_per_sec`, `transactions` | 5% |
//! | central latency | `latency_min`, `latency_mean`, `latency_p50`, `srtt`, `base_rtt` | 5% |
//! | tail latency | `latency_p90`, `latency_p99`, `latency_p999` | 20% |
//! | CPU | `*_busy_cores`, `*_us_per_kib`, `*_us_per_trans`, `*_cpu_max_core` | 10% |
//! | counts and shares of loss | `retransmits`, `loss` | 25% |
//! | steadiness | `interval_cv` | 50% |
//! | RFC 6349 | `tcp_efficiency`, `transfer_time_ratio` | 5%; `buffer_delay` 50% |
//! | configuration | `window_granted` | 0 (any change) |
//!
//! The figures come from A/A runs on this project's 2-core VM (`docs/EXPERIMENTS.md`,
//! "Browsing and comparing"): identical sweeps back to back, with the rank test's
//! p ≤ 0.05 (the drift it would take for a change) at up to 13% for transactions
//! per second, 12% for CPU, and 44% for a loopback p99 over 100,000 transactions.
//! A caller's floor ([`min_change`], `compare --threshold`) raises every
//! threshold to at least its value; it never lowers one.

use netsonde_model::sweep::{Estimate, Metric, Metrics};
use serde::{Deserialize, Serialize};

use crate::stats::{estimate, mann_whitney_less};

/// The family-wise false-alarm level of a comparison of two runs.
pub const FAMILY_ALPHA: f64 = 0.05;

/// The fewest samples that must lie beyond a percentile, in every repetition,
/// for it to be judged (module docs: "Samples behind a percentile").
pub const MIN_TAIL_SAMPLES: u64 = 10;

/// The fewest samples a repetition's q-quantile must rest on to be judged:
/// the least n with `n·min(q, 1 − q) ≥` [`MIN_TAIL_SAMPLES`]. `u64::MAX` for a q
/// outside (0, 1), which no sample count can support.
pub fn samples_needed(q: f64) -> u64 {
    let tail = q.min(1.0 - q);
    if tail.is_nan() || tail <= 0.0 {
        return u64::MAX;
    }
    // 1 − 0.99 is 0.010000000000000009 in binary: the 1e-6 keeps 1,000 from
    // becoming 1,001 through the rounding.
    let need = (MIN_TAIL_SAMPLES as f64 / tail - 1e-6).ceil();
    if need >= u64::MAX as f64 {
        u64::MAX
    } else {
        need.max(1.0) as u64
    }
}

/// The smallest relative change of `metric` that matters (module docs: "The
/// practical change of each metric").
pub fn practical_change(metric: Metric) -> f64 {
    match metric {
        Metric::Goodput
        | Metric::GoodputOut
        | Metric::GoodputIn
        | Metric::MessagesPerSec
        | Metric::TransactionsPerSec
        | Metric::Transactions => 0.05,
        Metric::LatencyMin
        | Metric::LatencyMean
        | Metric::LatencyP50
        | Metric::Srtt
        | Metric::BaseRtt => 0.05,
        Metric::LatencyP90 | Metric::LatencyP99 | Metric::LatencyP999 => 0.20,
        Metric::ClientBusyCores
        | Metric::ServerBusyCores
        | Metric::ClientUsPerKib
        | Metric::ServerUsPerKib
        | Metric::ClientUsPerTrans
        | Metric::ServerUsPerTrans
        | Metric::ClientCpuMaxCore
        | Metric::ServerCpuMaxCore => 0.10,
        Metric::Retransmits | Metric::Loss => 0.25,
        Metric::IntervalCv | Metric::BufferDelay => 0.50,
        // Context for every metric; `run::compare` does not compare them.
        Metric::ForeignCores => 0.10,
        Metric::Throttled => 0.25,
        Metric::LinkBound => 0.0,
        Metric::TcpEfficiency | Metric::TransferTimeRatio => 0.05,
        Metric::WindowGranted => 0.0,
    }
}

/// The practical change of a loss-free rate (NDR, PDR): a packet rate, judged as
/// throughput is.
pub fn practical_rate_change() -> f64 {
    practical_change(Metric::MessagesPerSec)
}

/// The change `metric` must exceed: its [`practical_change`], raised to `floor`
/// when one is given (a caller's `--threshold`). A floor that is not a finite,
/// non-negative number is ignored.
pub fn min_change(metric: Metric, floor: Option<f64>) -> f64 {
    raised(practical_change(metric), floor)
}

/// `threshold`, raised to a valid `floor`.
fn raised(threshold: f64, floor: Option<f64>) -> f64 {
    match floor {
        Some(f) if f.is_finite() && f >= 0.0 => threshold.max(f),
        _ => threshold,
    }
}

/// Whether a metric improved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A significant change in the good direction.
    Better,
    /// A significant change in the bad direction: a regression.
    Worse,
    /// No significant change, and the change within its practical threshold.
    Same,
    /// A change beyond its practical threshold that the repetitions cannot
    /// call significant (too few of them, or too scattered): neither a
    /// regression nor "same"; measure more repetitions.
    Undecided,
    /// Not judged, and left out of the family: see the delta's [`NotJudged`].
    NotJudged,
}

/// Why a comparison was not judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum NotJudged {
    /// A repetition's percentile rests on fewer samples than [`samples_needed`].
    TooFewSamples {
        /// The percentile.
        metric: Metric,
        /// What its samples are (`transactions`).
        samples: Metric,
        /// The fewest samples of any repetition of either run.
        fewest: u64,
        /// The fewest it needs.
        need: u64,
    },
    /// A metric of two runs whose foreign load differs by [`FOREIGN_DIFFERS`]
    /// cores or more: other work moved it, not the change.
    ForeignLoadDiffers {
        /// The metric.
        metric: Metric,
        /// The baseline's median foreign load, in cores.
        a: f64,
        /// The candidate's.
        b: f64,
    },
    /// A metric of two runs whose cgroups' CPU quotas throttled them in shares
    /// of their periods [`THROTTLE_DIFFERS`] points or more apart: the quota
    /// moved it, not the change.
    ThrottlingDiffers {
        /// The metric.
        metric: Metric,
        /// The baseline's median share of periods throttled, percent.
        a: f64,
        /// The candidate's.
        b: f64,
    },
    /// A CPU metric (or any metric of runs on a busy host) whose repetitions,
    /// in either run, spread wider than the change between the runs: the
    /// change is inside the noise.
    Spread {
        /// The CPU metric.
        metric: Metric,
        /// The wider run's spread, (max − min) / median.
        spread: f64,
        /// The change's size, |rel_change|.
        change: f64,
    },
    /// A repetition does not say how many samples its percentile rests on (a run
    /// stored before `transactions` was recorded).
    SamplesUnknown {
        /// The percentile.
        metric: Metric,
        /// The metric that would count its samples.
        samples: Metric,
    },
}

impl NotJudged {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            NotJudged::TooFewSamples { .. } => {
                "lengthen --time, or compare a lower percentile".into()
            }
            NotJudged::SamplesUnknown { .. } => "measure both runs again with this version".into(),
            NotJudged::ForeignLoadDiffers { .. } => {
                "compare runs on equally quiet hosts (the foreign-load warning says how busy \
                 each was), or measure both again back to back"
                    .into()
            }
            NotJudged::ThrottlingDiffers { .. } => {
                "compare runs under the same CPU quota (the cgroup line of each test says \
                 how often it throttled)"
                    .into()
            }
            NotJudged::Spread { .. } => {
                "more repetitions (--repeat), or a quieter host: the repetitions scatter more \
                 than the change"
                    .into()
            }
        }
    }
}

impl std::fmt::Display for NotJudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotJudged::TooFewSamples {
                metric,
                samples,
                fewest,
                need,
            } => write!(
                f,
                "{metric} rests on as few as {fewest} {samples} in a repetition (needs ≥ {need} \
                 in each: {MIN_TAIL_SAMPLES} beyond the percentile)"
            ),
            NotJudged::ForeignLoadDiffers { metric, a, b } => write!(
                f,
                "{metric}: the foreign load differs between the runs ({a:.2} against {b:.2} \
                 busy cores that were neither end's)"
            ),
            NotJudged::ThrottlingDiffers { metric, a, b } => write!(
                f,
                "{metric}: the CPU quota throttled the runs differently ({a:.0}% against \
                 {b:.0}% of its periods)"
            ),
            NotJudged::Spread {
                metric,
                spread,
                change,
            } => write!(
                f,
                "{metric}: the repetitions spread over {:.0}% of the median, wider than the \
                 {:.0}% change",
                100.0 * spread,
                100.0 * change
            ),
            NotJudged::SamplesUnknown { metric, samples } => write!(
                f,
                "{metric}: a repetition does not record its {samples}, so how many samples the \
                 percentile rests on is unknown"
            ),
        }
    }
}

/// One metric compared between a baseline `a` and a candidate `b`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// The metric.
    pub metric: Metric,
    /// The baseline.
    pub a: Estimate,
    /// The candidate.
    pub b: Estimate,
    /// `(b.median − a.median) / |a.median|`: positive when b is higher. When the
    /// baseline median is 0 this is 0 if b's is too, else ±infinity.
    pub rel_change: f64,
    /// The one-sided p-value that b is worse than a (exact Mann–Whitney).
    pub p_worse: f64,
    /// The one-sided p-value that b is better than a.
    pub p_better: f64,
    /// Set by [`judge`]: significant within its family and beyond the minimum
    /// change.
    pub significant: bool,
    /// Better or Worse when significant; NotJudged when `not_judged` says why;
    /// Same otherwise.
    pub verdict: Verdict,
    /// The relative change that counts ([`min_change`]); set by [`judge`].
    pub min_change: f64,
    /// Why the comparison is left out of the family, if it is.
    pub not_judged: Option<NotJudged>,
}

/// The estimates of `a` and `b`, `b`'s change relative to `a`'s median, and the
/// one-sided p-values that `b` is lower and that it is higher.
fn ranked(a: &[f64], b: &[f64]) -> Option<(Estimate, Estimate, f64, f64, f64)> {
    let (ea, eb) = (estimate(a)?, estimate(b)?);
    let diff = eb.median - ea.median;
    let rel_change = if ea.median != 0.0 {
        diff / ea.median.abs()
    } else if diff == 0.0 {
        0.0
    } else {
        diff.signum() * f64::INFINITY
    };
    let p_lower = mann_whitney_less(a, b)?;
    let p_higher = mann_whitney_less(b, a)?;
    Some((ea, eb, rel_change, p_lower, p_higher))
}

/// Whether a percentile `metric` of the repetitions `reps` (those that have it)
/// rests on enough samples; `None` when it does or `metric` is no percentile.
fn thin_samples<'a>(metric: Metric, reps: impl Iterator<Item = &'a Metrics>) -> Option<NotJudged> {
    let pct = metric.percentile()?;
    let need = samples_needed(pct.q);
    let mut fewest = u64::MAX;
    for r in reps.filter(|r| r.value(metric).is_some()) {
        let Some(n) = r.value(pct.samples).filter(|n| *n >= 0.0) else {
            return Some(NotJudged::SamplesUnknown {
                metric,
                samples: pct.samples,
            });
        };
        // Counts are whole numbers stored as f64; `as` saturates.
        fewest = fewest.min(n.round() as u64);
    }
    (fewest < need).then_some(NotJudged::TooFewSamples {
        metric,
        samples: pct.samples,
        fewest,
        need,
    })
}

/// Foreign loads (busy cores neither end's) that differ by this much make two
/// runs' CPU figures incomparable: the foreign-load warning's own threshold.
pub const FOREIGN_DIFFERS: f64 = netsonde_model::result::FOREIGN_LOAD;

/// Shares of periods a CPU quota throttled that differ by this much, in
/// points, make two runs incomparable.
pub const THROTTLE_DIFFERS: f64 = 20.0;

/// Why a `metric`'s comparison says nothing about the change: for any figure,
/// the runs' foreign loads or quota throttling differ (other work or a quota
/// moved every figure, not only the CPU's: a tcp-rr's latency moved 24% between
/// two back-to-back runs under different load); for a CPU figure, either run's
/// repetitions spread wider than the change; for any figure of runs on a busy
/// host (foreign load of 0.15 cores or more), the spread; a rate or latency
/// link-bound in every repetition of both runs is exempt from the foreign-load
/// rule, not the spread. `None` when it
/// compares.
fn incomparable(
    metric: Metric,
    (a, b): (&[Metrics], &[Metrics]),
    (va, vb): (&[f64], &[f64]),
    median_a: f64,
    rel_change: f64,
) -> Option<NotJudged> {
    let foreign = |reps: &[Metrics]| {
        let v: Vec<f64> = reps
            .iter()
            .filter_map(|r| r.value(Metric::ForeignCores))
            .collect();
        estimate(&v).map(|e| e.median)
    };
    let (fa, fb) = (foreign(a), foreign(b));
    let throttled = |reps: &[Metrics]| {
        let v: Vec<f64> = reps
            .iter()
            .filter_map(|r| r.value(Metric::Throttled))
            .collect();
        estimate(&v).map(|e| e.median)
    };
    // A run without a quota was throttled in none of its periods.
    let (ta, tb) = (throttled(a), throttled(b));
    if (ta.is_some() || tb.is_some())
        && (ta.unwrap_or(0.0) - tb.unwrap_or(0.0)).abs() >= THROTTLE_DIFFERS
    {
        return Some(NotJudged::ThrottlingDiffers {
            metric,
            a: ta.unwrap_or(0.0),
            b: tb.unwrap_or(0.0),
        });
    }
    // On a busy host back-to-back runs drift apart with the other work's
    // phase: there every metric's change must exceed its runs' own spread.
    let busy = fa.into_iter().chain(fb).any(|f| f >= FOREIGN_DIFFERS);
    if !metric.is_cpu() && !busy {
        return None;
    }
    // A rate or latency the link set in every repetition of both runs is not
    // the other work's: a lab link 30% slower, under a load whose phase moved
    // the foreign cores by 0.2 between the runs, is still the link's change.
    let link_bound = |reps: &[Metrics]| {
        !reps.is_empty() && reps.iter().all(|r| r.value(Metric::LinkBound) == Some(1.0))
    };
    let by_link = !metric.is_cpu() && link_bound(a) && link_bound(b);
    if let (Some(fa), Some(fb), false) = (fa, fb, by_link) {
        if (fa - fb).abs() >= FOREIGN_DIFFERS {
            return Some(NotJudged::ForeignLoadDiffers {
                metric,
                a: fa,
                b: fb,
            });
        }
    }
    let spread = |v: &[f64]| {
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                (l.min(*x), h.max(*x))
            });
        if median_a == 0.0 || v.len() < 2 {
            0.0
        } else {
            (hi - lo) / median_a.abs()
        }
    };
    // On a busy host the two runs' spreads add up: each moves with the other
    // work's phase on its own (an A/A pair's client CPU per KiB drifted 38%
    // with spreads of 25% and 30%); on a quiet host a CPU figure's change must
    // exceed the wider one.
    let wider = if busy {
        spread(va) + spread(vb)
    } else {
        spread(va).max(spread(vb))
    };
    (wider > rel_change.abs()).then_some(NotJudged::Spread {
        metric,
        spread: wider,
        change: rel_change.abs(),
    })
}

/// Compares the repetitions `b` of a candidate against those of a baseline `a`
/// for `metric`, each repetition's value taken from its [`Metrics`]. `None` when
/// either side has no finite value. A percentile whose repetitions rest on too few
/// samples ([`samples_needed`]) is [`Verdict::NotJudged`]; every other delta is
/// [`Verdict::Same`] until [`judge`] decides.
pub fn delta(metric: Metric, a: &[Metrics], b: &[Metrics]) -> Option<Delta> {
    let values =
        |reps: &[Metrics]| -> Vec<f64> { reps.iter().filter_map(|r| r.value(metric)).collect() };
    let (va, vb) = (values(a), values(b));
    let (ea, eb, rel_change, p_lower, p_higher) = ranked(&va, &vb)?;
    let not_judged = thin_samples(metric, a.iter().chain(b))
        .or_else(|| incomparable(metric, (a, b), (&va, &vb), ea.median, rel_change));
    let (p_worse, p_better) = if metric.higher_is_better() {
        (p_lower, p_higher)
    } else {
        (p_higher, p_lower)
    };
    Some(Delta {
        metric,
        a: ea,
        b: eb,
        rel_change,
        p_worse,
        p_better,
        significant: false,
        verdict: if not_judged.is_some() {
            Verdict::NotJudged
        } else {
            Verdict::Same
        },
        min_change: practical_change(metric),
        not_judged,
    })
}

/// What Holm's procedure needs of a comparison.
trait Judged {
    /// The one-sided p-value of worsening (`worse`) or of improvement.
    fn p(&self, worse: bool) -> f64;
    /// The relative change in the good direction: positive is better.
    fn gain(&self) -> f64;
    /// The relative change that counts.
    fn min_change(&self) -> f64;
    /// Whether it belongs to the family.
    fn judged(&self) -> bool;
    /// Sets the verdict.
    fn set(&mut self, v: Verdict);
    /// The verdict so far.
    fn verdict(&self) -> Verdict;
}

impl Judged for Delta {
    fn p(&self, worse: bool) -> f64 {
        if worse {
            self.p_worse
        } else {
            self.p_better
        }
    }
    fn gain(&self) -> f64 {
        if self.metric.higher_is_better() {
            self.rel_change
        } else {
            -self.rel_change
        }
    }
    fn min_change(&self) -> f64 {
        self.min_change
    }
    fn judged(&self) -> bool {
        self.not_judged.is_none()
    }
    fn set(&mut self, v: Verdict) {
        self.significant = matches!(v, Verdict::Better | Verdict::Worse);
        self.verdict = v;
    }
    fn verdict(&self) -> Verdict {
        self.verdict
    }
}

/// Holm's step-down procedure at `alpha` over the p-values of worsening, and
/// separately of improvement, of the comparisons that are judged, each change
/// also beyond its own minimum. The others are [`Verdict::NotJudged`].
fn holm<T: Judged>(deltas: &mut [T], alpha: f64) {
    for d in deltas.iter_mut() {
        d.set(if d.judged() {
            Verdict::Same
        } else {
            Verdict::NotJudged
        });
    }
    let family: Vec<usize> = (0..deltas.len()).filter(|&i| deltas[i].judged()).collect();
    for worse in [true, false] {
        let mut order = family.clone();
        order.sort_by(|&i, &j| deltas[i].p(worse).total_cmp(&deltas[j].p(worse)));
        let m = order.len();
        for (k, &i) in order.iter().enumerate() {
            // Holm: the k-th smallest p must be at most alpha / (m - k); the first
            // that is not ends the procedure.
            if deltas[i].p(worse) > alpha / (m - k) as f64 {
                break;
            }
            let d = &mut deltas[i];
            let moved = if worse {
                d.gain() < -d.min_change()
            } else {
                d.gain() > d.min_change()
            };
            if moved && d.verdict() == Verdict::Same {
                d.set(if worse {
                    Verdict::Worse
                } else {
                    Verdict::Better
                });
            }
        }
    }
    // A change beyond its threshold that is not significant is not "same".
    for d in deltas.iter_mut() {
        if d.verdict() == Verdict::Same && d.gain().abs() > d.min_change() {
            d.set(Verdict::Undecided);
        }
    }
}

/// Decides every delta of one run pair together: Holm's procedure at `alpha` over
/// the p-values of worsening, and separately of improvement, of the deltas that
/// are judged (a percentile on too few samples is not), each change also beyond
/// its metric's [`min_change`] with `floor`.
pub fn judge(deltas: &mut [Delta], alpha: f64, floor: Option<f64>) {
    for d in deltas.iter_mut() {
        d.min_change = min_change(d.metric, floor);
    }
    holm(deltas, alpha)
}

/// How many of `deltas` are judged together: the size of Holm's family.
pub fn family_size(deltas: &[Delta]) -> usize {
    deltas.iter().filter(|d| d.not_judged.is_none()).count()
}

/// The smallest one-sided p-value `n_a` against `n_b` repetitions can give:
/// `1 / C(n_a + n_b, n_b)`.
pub fn smallest_p(n_a: usize, n_b: usize) -> f64 {
    let c = (0..n_b).fold(1.0, |c, i| c * (n_a + n_b - i) as f64 / (i + 1) as f64);
    1.0 / c
}

/// The fewest repetitions per run (the same in both) with which a change can be
/// significant among `comparisons` at family level `alpha`.
pub fn reps_for(comparisons: usize, alpha: f64) -> usize {
    let need = alpha / comparisons.max(1) as f64;
    (2..=64).find(|&n| smallest_p(n, n) <= need).unwrap_or(64)
}

/// One goal (NDR or PDR) of a point's loss-free rate searches compared: the
/// lower bounds the baseline's repeated searches (`search --repeat`) found
/// against the candidate's, as repetitions of a measurement (higher is better).
/// One search's bounds are a single draw of a rate that moves between runs (on
/// loopback by 10% and more), so the rank test on repeated searches, not the
/// bounds of one, decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDelta {
    /// NDR or PDR.
    pub goal: netsonde_model::search::Goal,
    /// The baseline's lower bounds.
    pub a: Estimate,
    /// The candidate's.
    pub b: Estimate,
    /// `(b.median − a.median) / a.median`.
    pub rel_change: f64,
    /// The one-sided p-value that b is lower (exact Mann–Whitney).
    pub p_worse: f64,
    /// The one-sided p-value that b is higher.
    pub p_better: f64,
    /// Set by [`judge_searches`].
    pub verdict: Verdict,
    /// The relative change that counts ([`practical_rate_change`] with the
    /// floor); set by [`judge_searches`].
    pub min_change: f64,
}

impl Judged for SearchDelta {
    fn p(&self, worse: bool) -> f64 {
        if worse {
            self.p_worse
        } else {
            self.p_better
        }
    }
    fn gain(&self) -> f64 {
        self.rel_change
    }
    fn min_change(&self) -> f64 {
        self.min_change
    }
    fn judged(&self) -> bool {
        true
    }
    fn set(&mut self, v: Verdict) {
        self.verdict = v;
    }
    fn verdict(&self) -> Verdict {
        self.verdict
    }
}

/// Compares `goal`'s lower bounds of the baseline's searches `a` with the
/// candidate's `b`; `None` when either side found none. The verdict is
/// [`Verdict::Same`] until [`judge_searches`] decides.
pub fn search_delta(
    goal: netsonde_model::search::Goal,
    a: &[f64],
    b: &[f64],
) -> Option<SearchDelta> {
    let (ea, eb, rel_change, p_worse, p_better) = ranked(a, b)?;
    Some(SearchDelta {
        goal,
        a: ea,
        b: eb,
        rel_change,
        p_worse,
        p_better,
        verdict: Verdict::Same,
        min_change: practical_rate_change(),
    })
}

/// Decides every search delta of one run pair together, as [`judge`] does, each
/// change beyond [`practical_rate_change`] raised to `floor`.
pub fn judge_searches(deltas: &mut [SearchDelta], alpha: f64, floor: Option<f64>) {
    for d in deltas.iter_mut() {
        d.min_change = raised(practical_rate_change(), floor);
    }
    holm(deltas, alpha)
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
