//! netsonde's control protocol, sans-IO.
//!
//! This crate has no sockets and reads no clock: the caller passes bytes in, takes
//! frames out, and passes `now` into every call, so a test can drive a client and a
//! server against each other in memory with virtual time (see `tests` in
//! [`session`]). `docs/PROTOCOL.md` is the wire specification; this is its code.
//!
//! - [`frame`]: length-prefixed, typed frames; a fixed binary hello (magic, version,
//!   capabilities) and JSON-bodied messages, with a maximum frame size.
//! - [`message`]: the typed messages and the data-connection preamble.
//! - [`session`]: [`session::ClientSession`] and [`session::ServerSession`], the two
//!   state machines, each with a deadline on every phase.
//! - [`auth`]: pre-shared-key mutual authentication and per-frame integrity.
#![forbid(unsafe_code)]

pub mod auth;
pub mod frame;
pub mod iperf3;
pub mod message;
pub mod session;

pub use frame::{Frame, FrameDecoder, FrameError, Hello};
pub use message::{ErrorCode, Message, SetupAck, Token};
pub use session::{ClientSession, Deadlines, Endpoint, Event, ProtoError, ServerSession};

/// The protocol version this build speaks. Peers must match exactly.
pub const PROTOCOL_VERSION: u16 = 3;

/// The magic that opens every control connection.
pub const MAGIC: [u8; 8] = *b"NETSONDE";
