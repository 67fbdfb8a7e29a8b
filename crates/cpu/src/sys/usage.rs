//! CPU time: the clock of any thread of this process (a clock id made from its
//! thread id, which `rustix` does not take), and `getrusage(RUSAGE_SELF)`.

use std::io;

/// A `timespec` or `timeval` as whole seconds and the fraction's units
/// (nanoseconds or microseconds).
pub type Stamp = (i64, i64);

/// The CPU-time clock `clock` (a raw clock id, such as a thread's CPU clock),
/// as seconds and nanoseconds.
pub fn clock_time(clock: i32) -> io::Result<Stamp> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a live, writable timespec; an unknown clock id (a thread that
    // has exited) makes the call fail with EINVAL and leaves `t` as it was.
    if unsafe { libc::clock_gettime(clock, &mut t) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((t.tv_sec, t.tv_nsec))
}

/// This process's resource usage (all threads): user and system time as
/// seconds and microseconds, voluntary and involuntary context switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// User CPU time.
    pub user: Stamp,
    /// System CPU time.
    pub sys: Stamp,
    /// Voluntary context switches.
    pub nvcsw: i64,
    /// Involuntary context switches.
    pub nivcsw: i64,
}

/// `getrusage(RUSAGE_SELF)`.
pub fn rusage_self() -> io::Result<Usage> {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a live, writable rusage the kernel fills.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Usage {
        user: (u.ru_utime.tv_sec, u.ru_utime.tv_usec),
        sys: (u.ru_stime.tv_sec, u.ru_stime.tv_usec),
        nvcsw: u.ru_nvcsw,
        nivcsw: u.ru_nivcsw,
    })
}
