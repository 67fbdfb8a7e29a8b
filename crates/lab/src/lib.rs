//! netsonde's lab: a reproducible network path on one Linux host.
//!
//! Two network namespaces, a client host and a server host, joined by one link
//! whose MTU, rate, queue, delay, jitter, loss, reordering and duplication are set
//! per direction ([`netsonde_model::link::LinkSpec`]).
//!
//! - [`topology`]: [`Lab`] makes the namespaces, builds and rebuilds the link,
//!   starts processes inside, and tears everything down on drop; [`clean`] and
//!   [`down`] remove what killed or finished labs left.
//! - [`cluster`]: [`cluster::Cluster`], hosts on one bridge, each in its own
//!   namespace, with slower pairs (`netsonde lab mesh`).
//! - [`state`]: the state file each lab writes before it creates anything, so that
//!   the lab only ever removes what it made (and can after a SIGKILL).
//! - [`qdisc`]: tbf, htb and netem as `tc` arguments.
//! - [`second_path`]: a second veth path between the two hosts, told to MPTCP's
//!   path manager (`--second-path`).
//! - [`emulator`]: the userspace link emulator on TUN devices, for kernels without
//!   netem, with a seeded random source.
//! - [`control`]: the socket a sweep inside the lab asks for a new link through.
//! - [`here`]: the lab link a test crosses, under `lab run` or by hand inside
//!   a `lab up` lab.
//! - [`probe`]: privileges, iproute2, TUN and netem.
//! - [`session`]: a lab's processes once its link is up: daemons awaited until
//!   they listen, the invocation supervised and its link requests answered.
//!
//! Namespaces, veth pairs and qdiscs are managed with iproute2 (`ip`, `tc`): the
//! commands are what an administrator would type, they show in errors as such, and
//! netem's and the shapers' option parsing stays iproute2's. The emulator's data
//! path is plain system calls on TUN file descriptors.
#![deny(unsafe_code)]

pub mod cluster;
mod cmd;
pub mod control;
pub mod emulator;
pub mod error;
pub mod here;
pub mod host_settings;
pub mod probe;
pub mod qdisc;
pub mod second_path;
pub mod session;
pub mod state;
mod sys;
pub mod topology;

pub use error::{EmulatorError, LabError, Result};
pub use state::{Kind, StateDir};
pub use sys::die_with_parent;
pub use topology::{clean, down, CleanReport, Lab, Side, CLIENT_ADDR, SERVER_ADDR};
