//! CPU and system accounting for netsonde, and the host facts stored with results.
//!
//! # What is measured, and why system-wide per core
//!
//! A network test's CPU cost is mostly not in the test process. On the receive side
//! the kernel does NAPI polling, GRO, IP and TCP input in software interrupt context
//! (softirq), usually on whichever core took the NIC's interrupt; on the send side
//! completions and ACK processing land there too. That time is charged to no process:
//! `getrusage` does not see it. So a tool that reports only its own process time (as
//! iperf3 does) can say "12% CPU" while one core is pinned at 100% in softirq and is
//! the real bottleneck. netperf argues for system-wide CPU for exactly this reason, and
//! measures service demand against it.
//!
//! This crate therefore takes both:
//!
//! - **System-wide, per core** from `/proc/stat`: user, nice, system, irq, softirq,
//!   iowait, steal and idle shares for each core and their average. Per core, because
//!   an average of 12% over 8 cores can hide one saturated core.
//! - **The process's own** from `getrusage(RUSAGE_SELF)`: user and system time and
//!   context switches, to tell the tool's cost from the kernel's.
//! - **The test's own threads** from their CPU clocks ([`thread::cpu_time`]): what
//!   this end's flow threads ran, with nanosecond precision, whatever else the
//!   process (an embedded server, in the same process) or the host does. Without
//!   `CONFIG_IRQ_TIME_ACCOUNTING` it includes the softirq work the kernel did in
//!   those threads' context (on loopback and veth, most of the receive path).
//! - **Everyone else** from `/proc/PID/stat` ([`processes::Others`]): the CPU the
//!   host's other user processes ran, the foreign load.
//! - Beside the CPU, the host's **UDP drop counters** from `/proc/net/snmp`
//!   ([`snmp`]): where the datagrams a test lost were dropped.
//!
//! # Layout
//!
//! - [`stat`]: [`parse_proc_stat`] turns `/proc/stat` text into a [`StatSnapshot`]
//!   (pure).
//! - [`rusage`]: [`read_rusage`] takes a [`RusageSnapshot`].
//! - [`delta`]: [`cpu_delta`] turns two pairs of snapshots into a
//!   [`CpuReport`](netsonde_model::cpu::CpuReport) (pure; the caller passes elapsed
//!   time).
//! - [`sampler`]: [`CpuSampler`] takes the snapshots around an interval.
//! - [`host`]: [`host_facts`] gathers kernel, CPU model, cores, network sysctls and
//!   the test interface's MTU and NIC facts into
//!   [`HostFacts`](netsonde_model::host::HostFacts).
//! - [`nic`]: the test interface's NIC: [`nic::read_facts`] (driver, speed,
//!   offloads, rings, coalescing, channels, NUMA node, interrupt lines) and
//!   [`nic::NicSnapshot`] (`ethtool -S` drops, softnet drops and squeezes, the
//!   NIC's interrupts per core) around the interval; the parsers are pure and
//!   tested on captured fixtures (`tests/fixtures/nic/`).
//! - `sys`: the crate's only `unsafe` code, the `SIOCETHTOOL` ioctl
//!   (`sys::ethtool`), another thread's CPU clock and `getrusage` (`sys::usage`).
//!
//! Everything else goes through `std::fs` and `rustix`.
#![deny(unsafe_code)]

use std::path::PathBuf;

pub mod cgroup;
pub mod delta;
pub mod host;
pub mod memory;
pub mod nic;
pub mod processes;
pub mod profile;
pub mod rusage;
pub mod sampler;
pub mod snmp;
pub mod stat;
mod sys;
pub mod thread;

pub use delta::cpu_delta;
pub use host::{host_facts, interface_of, normalise_sysctl, parse_cpu_model, SYSCTLS};
pub use rusage::{read_rusage, RusageSnapshot};
pub use sampler::{read_proc_stat, CpuSampler, PROC_STAT};
pub use stat::{parse_proc_stat, CpuTimes, StatSnapshot};

/// Why CPU figures could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum CpuError {
    /// A file under `/proc` could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A `cpu` or `ctxt` line of `/proc/stat` did not parse.
    #[error("/proc/stat line {line_no}: {reason}: '{line}'")]
    BadStatLine {
        /// 1-based line number.
        line_no: usize,
        /// The line as read.
        line: String,
        /// What was wrong with it.
        reason: &'static str,
    },
    /// The text had no aggregate `cpu` line, so it is not `/proc/stat` as we know it.
    #[error("/proc/stat has no aggregate 'cpu' line")]
    NoAggregateLine,
    /// `getrusage(RUSAGE_SELF)` failed.
    #[error("getrusage(RUSAGE_SELF) failed")]
    Rusage {
        /// The errno it returned.
        #[source]
        source: std::io::Error,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_context() {
        let err = CpuError::Read {
            path: PathBuf::from("/proc/stat"),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(err.to_string(), "cannot read /proc/stat");
        assert!(std::error::Error::source(&err).is_some());
        let err = CpuError::Rusage {
            source: std::io::Error::from(std::io::ErrorKind::InvalidInput),
        };
        assert!(std::error::Error::source(&err).is_some());
    }
}
