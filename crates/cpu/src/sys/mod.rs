//! The crate's only `unsafe` code: system calls that `std` and `nix` do not
//! wrap. Each module has one small helper that makes the call and returns
//! `io::Result`; everything above it is safe.
//!
//! - [`ethtool`]: the `SIOCETHTOOL` ioctl (driver info, string sets, statistics,
//!   features, rings, coalescing, channels).
#![allow(unsafe_code)]

pub mod ethtool;
