//! The crate's only `unsafe` code: system calls that `std` and `rustix` do not
//! wrap. Each module has one small helper that makes the call and returns
//! `io::Result`; everything above it is safe.
//!
//! - [`ethtool`]: the `SIOCETHTOOL` ioctl (driver info, string sets, statistics,
//!   features, rings, coalescing, channels).
//! - [`usage`]: another thread's CPU-time clock and `getrusage`.
#![allow(unsafe_code)]

pub mod ethtool;
pub mod usage;
