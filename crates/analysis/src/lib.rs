//! netsonde's analysis: what the figures of a run mean. Pure functions only: this
//! crate does no I/O, reads no clock and draws no random numbers, so every answer is
//! a function of its arguments and every test has a known answer.
//!
//! - [`stats`]: [`estimate`] turns repetitions into an [`Estimate`] (median, mean,
//!   CV, a 95% confidence interval of the median); [`reps_needed`] says how many
//!   repetitions a CV calls for.
//! - [`steady`]: [`steady_state`] finds where a series of interval rates settles.
//! - [`fit`]: least squares ([`fit_linear`]) and the latency model of a message size
//!   ([`predicted_throughput`]).
//! - [`knee`](mod@knee): where a curve reaches a share of its maximum.
//! - [`link`]: theoretical goodput of an Ethernet link, efficiency, and the
//!   bandwidth-delay product.
//! - [`compare`](mod@compare): regression detection between a baseline's
//!   repetitions and a candidate's: the rank test, Holm's family, each metric's
//!   practical change, and the samples a percentile must rest on.
//! - [`quality`]: the [`Quality`] warnings of one point, and estimates of all its
//!   metrics.
//! - [`diagnose`](mod@diagnose): which [`Bottleneck`] limited a test, with evidence
//!   and advice; [`evidence`] reads a report into what it judges.
//! - [`finish`](mod@finish): the one path that finishes a test's report (warnings,
//!   verdict, RFC 6349, load summary), for every command that makes or stores one.
//! - [`load`]: latency under load: per phase, added, one-way, responsiveness
//!   (RPM) and fairness.
//! - [`rfc6349`](mod@rfc6349): transfer time ratio, TCP efficiency, buffer delay and
//!   the bandwidth-delay product of a TCP test.
//!
//! [`Estimate`]: netsonde_model::sweep::Estimate
//! [`Quality`]: netsonde_model::sweep::Quality
#![forbid(unsafe_code)]

pub mod advice;
#[cfg(test)]
mod advice_tests;
pub mod baseline;
pub mod compare;
pub mod comparison;
pub mod diagnose;
mod diagnosis_input;
pub mod events;
pub mod evidence;
pub mod finish;
pub mod fit;
pub mod knee;
pub mod link;
pub mod load;
pub mod nic;
pub mod quality;
pub mod rfc6349;
pub mod stats;
pub mod steady;

pub use compare::{
    delta, family_size, judge, judge_searches, min_change, practical_change, practical_rate_change,
    reps_for, samples_needed, search_delta, smallest_p, Delta, NotJudged, SearchDelta, Verdict,
    FAMILY_ALPHA, MIN_TAIL_SAMPLES,
};
pub use diagnose::{
    diagnose, mathis_bound, Bottleneck, CoreLoad, CpuKind, Diagnosis, DiagnosisInput, PeerProcess,
    ThreadLoad,
};
pub use evidence::input_from_report;
pub use finish::finish;
pub use fit::{fit_linear, predicted_throughput, LinearFit};
pub use knee::knee;
pub use link::{
    bdp_bytes, efficiency, payload_per_frame, payload_share, theoretical_goodput,
    ETHERNET_WIRE_OVERHEAD, L4,
};
pub use quality::{estimate_all, point_quality};
pub use rfc6349::rfc6349;
pub use stats::{estimate, mann_whitney_less, reps_needed, t975};
pub use steady::{steadiness_warnings, steady_state, Steadiness};
