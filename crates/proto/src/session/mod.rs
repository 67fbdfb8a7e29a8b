//! The two session state machines.
//!
//! Each machine is driven by four kinds of input and yields three kinds of output:
//!
//! | input | output |
//! |---|---|
//! | `handle_frame(now, frame)` | `poll_transmit()`: frames to write, in order |
//! | `handle_timeout(now)` when `poll_timeout()` has passed | `poll_event()`: what the driver must act on |
//! | `handle_eof(now)` when the peer closed | `poll_timeout()`: the current phase's deadline |
//! | driver decisions (`accept_setup`, `start`, `finish`, `reject`, `abort`) | `is_over()` |
//!
//! Every phase has a deadline ([`Deadlines`]); when one passes, the machine sends an
//! `Error { code: Timeout }` to the peer and reports [`Event::Failed`]. A machine that
//! is over ignores further input.
//!
//! ```text
//! client                         server
//!   Hello ─────────────────────▶  (version check)
//!         ◀──────────────────── Hello        [or Hello + Error(version-mismatch)]
//!   Setup{spec} ───────────────▶  Event::SetupRequested → accept_setup / reject
//!         ◀──────────────────── SetupAck{token, ports, host} | Error(busy|bad-spec)
//!   (data connections, each opening with the token preamble)
//!   Start ─────────────────────▶  Event::StartRequested; both ends run the test
//!         ◀──────────────────── Results{server side}  (after finish())
//!   Done ──────────────────────▶  over
//! ```

#[macro_use]
mod common;
mod client;
mod server;

pub use client::ClientSession;
pub use common::{Auth, Deadlines, Endpoint, Event, ProtoError};
pub use server::{job_deadline, ServerSession};

#[cfg(test)]
mod tests;
