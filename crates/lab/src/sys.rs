//! The crate's only `unsafe`: the TUN attach ioctl and a `pre_exec` hook. Each is a
//! plain system call behind a safe function that returns `io::Result`.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// `IFF_TUN`: an IP-level device (no Ethernet header).
const IFF_TUN: libc::c_short = 0x0001;
/// `IFF_NO_PI`: no packet-information prefix on each packet.
const IFF_NO_PI: libc::c_short = 0x1000;

/// `TUNSETIFF`: `_IOW('T', 202, int)` (`linux/if_tun.h`).
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

/// Attaches `fd` (an open `/dev/net/tun`) to the TUN device `name` in the calling
/// thread's network namespace (`TUNSETIFF` with `IFF_TUN | IFF_NO_PI`, the flags
/// `ip tuntap add mode tun` gives a persistent device).
pub fn tun_attach(fd: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name '{name}' is empty or too long"),
        ));
    }
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = IFF_TUN | IFF_NO_PI;
    // SAFETY: `fd` is a valid open descriptor for the call's duration and `req`
    // is a properly initialised ifreq that outlives the call; TUNSETIFF only reads
    // it (and writes the chosen name back into it).
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &req as *const libc::ifreq) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Makes the child get `SIGKILL` when the process that spawned it dies, even by
/// SIGKILL, so that a killed lab leaves no server or client running (a graceful
/// SIGTERM would let the server drain a running test first). The signal is tied to
/// the spawning thread: spawn from a thread that lives as long as the child should.
pub fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the hook runs in the forked child before exec and calls only
    // async-signal-safe functions (prctl, getppid, _exit); it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}
