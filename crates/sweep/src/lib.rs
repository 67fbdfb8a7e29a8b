//! Characterization runs, as pure logic.
//!
//! - [`axes`]: the value syntax of sweep axes (`64,256,1K..64K`, `1K..1M*4`,
//!   `1K..8K+1K`).
//! - [`plan`]: a [`plan::Plan`] (base options, axes, repetitions, seed) expands into
//!   points, and into an interleaved, randomised run order: every round runs every
//!   point once, in a fresh shuffle, so machine drift spreads over all points.
//! - [`file`](mod@file): the declarative experiment file (`netsonde run FILE.toml`); unknown
//!   keys are errors.
//! - [`exec`]: runs an order through a [`exec::Runner`] (the real client, or
//!   [`fake::FakeRunner`]) into a [`exec::Sink`] (the store), with progress and
//!   stop hooks. No I/O of its own.
//! - [`rounds`]: several measurements at once, in rounds of points that may run
//!   together (a mesh's pairs that share no host), settled as `exec` settles one.
//! - [`search`]: the loss-free rate search (NDR/PDR): an adaptive plan, whose next
//!   trial depends on the last results, driven through the same [`exec::Runner`].
//! - [`mesh`]: agents and the ordered pairs a pattern (all-to-all, ring, star,
//!   listed pairs) measures between them; a plan with a mesh runs every point
//!   once per pair.
//! - [`cadence`]: when a monitor's rounds run: a slot per interval, a random
//!   delay into it, an overrunning round's slots skipped, never stacked.
//! - [`fake`]: a scripted, deterministic engine: reports from a latency model with
//!   seeded noise, so sweep → store → analysis → report is testable exactly.
#![forbid(unsafe_code)]

pub mod axes;
pub mod back_to_back;
pub mod cadence;
pub mod exec;
pub mod fake;
pub mod file;
pub mod mesh;
pub mod plan;
pub mod rounds;
pub mod search;
pub mod search_plan;

pub use plan::{Plan, Point};
