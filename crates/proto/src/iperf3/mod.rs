//! iperf3's control protocol, sans-IO: so that an unmodified `iperf3` client can
//! test against `netsonde server`, and `netsonde client --peer iperf3` can drive an
//! unmodified `iperf3 -s`.
//!
//! The facts below are those of the public iperf3 source (`iperf_api.c`,
//! `iperf_server_api.c`, `iperf_client_api.c`, `iperf_tcp.c`, `iperf_udp.c`); no
//! code of it is used here.
//!
//! ```text
//! control connection (TCP, the server's port, 5201 by default):
//!   client -> server  cookie: 36 characters of "a-z2-7" and a NUL (37 bytes)
//!   server -> client  state PARAM_EXCHANGE (one signed byte), or ACCESS_DENIED if busy
//!   client -> server  parameters: length:u32be, then a JSON object
//!   server -> client  CREATE_STREAMS
//!                     (the client opens its streams: TCP connections to the same
//!                      port, each sending the cookie first; UDP: a 4-byte datagram
//!                      to the same port, answered with a 4-byte reply)
//!   server -> client  TEST_START, TEST_RUNNING          (the test runs)
//!   client -> server  TEST_END                          (when its time is up)
//!   server -> client  EXCHANGE_RESULTS
//!   client -> server  its results (length + JSON); server -> client: its own
//!   server -> client  DISPLAY_RESULTS
//!   client -> server  IPERF_DONE
//! a server error is SERVER_ERROR followed by i_errno:u32be and errno:u32be.
//! ```
//!
//! Streams are numbered in the order the client opens them: 1, 3, 4, 5, …
//! (iperf3's own numbering, which skips 2 for compatibility between its versions).
//! With `bidirectional`, the client's sending streams come first.
//!
//! The [`ClientMachine`] and [`ServerMachine`] here take bytes as they arrive and
//! say what happened ([`Iperf3Event`]); what to send is queued for the caller to
//! write. The caller owns sockets, deadlines and the data streams.

mod client;
mod messages;
mod server;
mod wire;

pub use client::ClientMachine;
pub use messages::*;
pub use server::ServerMachine;

#[cfg(test)]
mod tests;
