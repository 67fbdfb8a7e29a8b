//! The `SIOCETHTOOL` ioctl, as `ethtool -i -k -g -c -l -S` use it.
//!
//! Every request is a byte buffer that starts with the command word; the kernel
//! reads and writes it in place. Building and decoding those buffers is safe
//! code over byte slices ([`put_u32`], [`get_u32`]); the one `unsafe` block is
//! the ioctl in [`Ethtool::request`]. A driver that does not implement a request
//! answers `EOPNOTSUPP`: callers turn any error into "unknown".

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use rustix::net::{socket_with, AddressFamily, SocketFlags, SocketType};

/// `ETHTOOL_GDRVINFO`: driver name, version, bus address.
const GDRVINFO: u32 = 0x03;
/// `ETHTOOL_GCOALESCE`: interrupt coalescing.
const GCOALESCE: u32 = 0x0e;
/// `ETHTOOL_GRINGPARAM`: ring sizes.
const GRINGPARAM: u32 = 0x10;
/// `ETHTOOL_GRXCSUM`: receive checksum offload (legacy).
const GRXCSUM: u32 = 0x14;
/// `ETHTOOL_GTXCSUM`: transmit checksum offload (legacy).
const GTXCSUM: u32 = 0x16;
/// `ETHTOOL_GSTRINGS`: the names of a string set.
const GSTRINGS: u32 = 0x1b;
/// `ETHTOOL_GSTATS`: the NIC's statistics (`ethtool -S`).
const GSTATS: u32 = 0x1d;
/// `ETHTOOL_GTSO`: TCP segmentation offload (legacy).
const GTSO: u32 = 0x1e;
/// `ETHTOOL_GGSO`: generic segmentation offload (legacy).
const GGSO: u32 = 0x23;
/// `ETHTOOL_GFLAGS`: flags, among them LRO (legacy).
const GFLAGS: u32 = 0x25;
/// `ETHTOOL_GGRO`: generic receive offload (legacy).
const GGRO: u32 = 0x2b;
/// `ETHTOOL_GSSET_INFO`: the length of string sets.
const GSSET_INFO: u32 = 0x37;
/// `ETHTOOL_GFEATURES`: the feature bits.
const GFEATURES: u32 = 0x3a;
/// `ETHTOOL_GCHANNELS`: channel counts.
const GCHANNELS: u32 = 0x3c;

/// `ETH_SS_STATS`: the statistics' names.
pub const SS_STATS: u32 = 1;
/// `ETH_SS_FEATURES`: the features' names.
pub const SS_FEATURES: u32 = 4;
/// `ETH_FLAG_LRO` in `ETHTOOL_GFLAGS`.
pub const FLAG_LRO: u32 = 1 << 15;
/// `ETH_GSTRING_LEN`: every string of a set takes this many bytes.
const GSTRING_LEN: usize = 32;
/// `IFNAMSIZ`.
const IFNAMSIZ: usize = 16;
/// A bound on string sets and statistics (mlx5 with many channels has a few
/// thousand): a driver answering more is not believed.
const MAX_SET: u32 = 1 << 16;

/// Room for `n` entries of a string set or statistics, and as many again (at
/// least 256 more): the kernel writes as many as the driver counts when it
/// answers, not as many as asked, and a driver's count can grow between the
/// two requests (channels added). The extra is never read.
fn room(n: u32) -> usize {
    let n = n as usize;
    n + n.max(256)
}

/// `struct ifreq` with `ifr_data`: the name, then the pointer, padded to the
/// size of the union.
#[repr(C)]
struct IfReq {
    name: [libc::c_char; IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 24 - std::mem::size_of::<*mut libc::c_void>()],
}

/// `ethtool -i`'s answer, as much of it as is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrvInfo {
    /// The driver's name.
    pub driver: String,
    /// The bus address (`0000:81:00.0`, `virtio2`), empty for virtual devices.
    pub bus_info: String,
}

/// One feature's bits from `ETHTOOL_GFEATURES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    /// The driver can change it.
    pub available: bool,
    /// It is active now.
    pub active: bool,
}

/// A socket to send ethtool requests about one interface over.
#[derive(Debug)]
pub struct Ethtool {
    fd: OwnedFd,
    name: [libc::c_char; IFNAMSIZ],
}

impl Ethtool {
    /// Opens a datagram socket for requests about `ifname`. Fails when the name
    /// does not fit `IFNAMSIZ` or has a NUL, or no socket can be had.
    pub fn open(ifname: &str) -> io::Result<Ethtool> {
        let bytes = ifname.as_bytes();
        if bytes.is_empty() || bytes.len() >= IFNAMSIZ || bytes.contains(&0) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let mut name = [0 as libc::c_char; IFNAMSIZ];
        for (d, &s) in name.iter_mut().zip(bytes) {
            *d = s as libc::c_char;
        }
        let fd = socket_with(
            AddressFamily::INET,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC,
            None,
        )
        .or_else(|_| {
            socket_with(
                AddressFamily::UNIX,
                SocketType::DGRAM,
                SocketFlags::CLOEXEC,
                None,
            )
        })?;
        Ok(Ethtool { fd, name })
    }

    /// Sends one request: `buf` starts with the command word and is as long as
    /// the command's structure (with its trailing array).
    fn request(&self, buf: &mut [u8]) -> io::Result<()> {
        if buf.len() < 4 {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        let mut req = IfReq {
            name: self.name,
            data: buf.as_mut_ptr().cast(),
            _pad: [0; 24 - std::mem::size_of::<*mut libc::c_void>()],
        };
        // SAFETY: `req` is a valid `struct ifreq` whose name is NUL-terminated
        // (at most 15 bytes, checked in `open`) and whose `ifr_data` points to
        // `buf`, which lives, mutably borrowed, until the call returns. Every
        // caller sizes `buf` to the structure its command word names, and for
        // the commands with a trailing array to the count written in its header
        // (GSSET_INFO, GFEATURES, which the kernel honours) or, for GSTRINGS and
        // GSTATS, whose count the kernel takes from the driver, with `room` for
        // a count that grew since it was read, so the kernel reads and writes
        // only inside `buf`. The file descriptor is an open socket
        // owned by `self`.
        let rc = unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::SIOCETHTOOL as _,
                std::ptr::addr_of_mut!(req),
            )
        };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// A fixed-size request of `words` 32-bit words, the first being `cmd`;
    /// returns the words as the kernel left them.
    fn words<const N: usize>(&self, cmd: u32) -> io::Result<[u32; N]> {
        let mut buf = vec![0u8; N * 4];
        put_u32(&mut buf, 0, cmd);
        self.request(&mut buf)?;
        let mut out = [0u32; N];
        for (i, w) in out.iter_mut().enumerate() {
            *w = get_u32(&buf, i * 4);
        }
        Ok(out)
    }

    /// `ETHTOOL_GDRVINFO`.
    pub fn drvinfo(&self) -> io::Result<DrvInfo> {
        // cmd, driver[32], version[32], fw_version[32], bus_info[32],
        // erom_version[32], reserved2[12], five u32 counts.
        let mut buf = vec![0u8; 4 + 32 * 5 + 12 + 5 * 4];
        put_u32(&mut buf, 0, GDRVINFO);
        self.request(&mut buf)?;
        Ok(DrvInfo {
            driver: c_string(&buf[4..36]),
            bus_info: c_string(&buf[100..132]),
        })
    }

    /// `ETHTOOL_GSSET_INFO` for one set: how many strings it has.
    pub fn set_len(&self, set: u32) -> io::Result<u32> {
        // cmd, reserved, u64 sset_mask, then one u32 per set in the mask.
        let mut buf = vec![0u8; 4 + 4 + 8 + 4];
        put_u32(&mut buf, 0, GSSET_INFO);
        buf[8..16].copy_from_slice(&(1u64 << set).to_ne_bytes());
        self.request(&mut buf)?;
        let mask = u64::from_ne_bytes(buf[8..16].try_into().unwrap_or([0; 8]));
        if mask & (1u64 << set) == 0 {
            return Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        }
        bounded(get_u32(&buf, 16))
    }

    /// `ETHTOOL_GSTRINGS`: the `n` names of a set.
    pub fn strings(&self, set: u32, n: u32) -> io::Result<Vec<String>> {
        let n = bounded(n)?;
        // cmd, string_set, len, then len * ETH_GSTRING_LEN bytes.
        let mut buf = vec![0u8; 12 + room(n) * GSTRING_LEN];
        put_u32(&mut buf, 0, GSTRINGS);
        put_u32(&mut buf, 4, set);
        put_u32(&mut buf, 8, n);
        self.request(&mut buf)?;
        let got = get_u32(&buf, 8).min(n) as usize;
        Ok(buf[12..]
            .chunks_exact(GSTRING_LEN)
            .take(got)
            .map(c_string)
            .collect())
    }

    /// `ETHTOOL_GSTATS`: the `n` statistics' values, in the order of their names.
    pub fn stats(&self, n: u32) -> io::Result<Vec<u64>> {
        let n = bounded(n)?;
        // cmd, n_stats, then n_stats u64s.
        let mut buf = vec![0u8; 8 + room(n) * 8];
        put_u32(&mut buf, 0, GSTATS);
        put_u32(&mut buf, 4, n);
        self.request(&mut buf)?;
        let got = get_u32(&buf, 4).min(n) as usize;
        Ok(buf[8..]
            .chunks_exact(8)
            .take(got)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }

    /// `ETHTOOL_GFEATURES`: the bits of `n` features, in the order of their
    /// names (`ETH_SS_FEATURES`).
    pub fn features(&self, n: u32) -> io::Result<Vec<Feature>> {
        let n = bounded(n)?;
        let blocks = n.div_ceil(32);
        // cmd, size (blocks), then per block available, requested, active,
        // never_changed.
        let mut buf = vec![0u8; 8 + blocks as usize * 16];
        put_u32(&mut buf, 0, GFEATURES);
        put_u32(&mut buf, 4, blocks);
        self.request(&mut buf)?;
        Ok((0..n as usize)
            .map(|i| {
                let block = 8 + (i / 32) * 16;
                let bit = 1u32 << (i % 32);
                Feature {
                    available: get_u32(&buf, block) & bit != 0,
                    active: get_u32(&buf, block + 8) & bit != 0,
                }
            })
            .collect())
    }

    /// A legacy `struct ethtool_value` request (GTSO, GGSO, GGRO, GRXCSUM,
    /// GTXCSUM, GFLAGS): its data word.
    fn value(&self, cmd: u32) -> io::Result<u32> {
        self.words::<2>(cmd).map(|w| w[1])
    }

    /// Legacy TSO, GSO, GRO, receive and transmit checksum, and flags, each
    /// where the driver answers.
    pub fn legacy_offloads(&self) -> [Option<u32>; 6] {
        [GTSO, GGSO, GGRO, GRXCSUM, GTXCSUM, GFLAGS].map(|c| self.value(c).ok())
    }

    /// `ETHTOOL_GRINGPARAM`: rx max, tx max, rx, tx.
    pub fn rings(&self) -> io::Result<[u32; 4]> {
        // cmd, rx_max, rx_mini_max, rx_jumbo_max, tx_max, rx, rx_mini,
        // rx_jumbo, tx.
        let w = self.words::<9>(GRINGPARAM)?;
        Ok([w[1], w[4], w[5], w[8]])
    }

    /// `ETHTOOL_GCOALESCE`: rx-usecs, rx-frames, tx-usecs, adaptive rx, adaptive
    /// tx.
    pub fn coalesce(&self) -> io::Result<[u32; 5]> {
        // cmd, rx_coalesce_usecs, rx_max_coalesced_frames, rx usecs/frames irq,
        // tx_coalesce_usecs (5), tx frames, tx usecs/frames irq,
        // stats_block_coalesce_usecs (9), use_adaptive_rx (10), use_adaptive_tx
        // (11), then eleven more words.
        let w = self.words::<23>(GCOALESCE)?;
        Ok([w[1], w[2], w[5], w[10], w[11]])
    }

    /// `ETHTOOL_GCHANNELS`: max rx, max tx, max other, max combined, rx, tx,
    /// other, combined.
    pub fn channels(&self) -> io::Result<[u32; 8]> {
        let w = self.words::<9>(GCHANNELS)?;
        Ok([w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8]])
    }
}

/// Refuses counts no driver has, so a confused answer cannot ask for gigabytes.
fn bounded(n: u32) -> io::Result<u32> {
    if n > MAX_SET {
        Err(io::Error::from(io::ErrorKind::InvalidData))
    } else {
        Ok(n)
    }
}

/// Writes a native-endian `u32` at `at`.
fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    if let Some(d) = buf.get_mut(at..at + 4) {
        d.copy_from_slice(&v.to_ne_bytes());
    }
}

/// Reads a native-endian `u32` at `at` (0 past the end).
fn get_u32(buf: &[u8], at: usize) -> u32 {
    buf.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// A NUL-terminated string in a fixed field.
fn c_string(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_read_and_written_in_native_order() {
        let mut b = vec![0u8; 8];
        put_u32(&mut b, 4, 0xdead_beef);
        assert_eq!(get_u32(&b, 4), 0xdead_beef);
        assert_eq!(get_u32(&b, 6), 0, "past the end reads 0");
        put_u32(&mut b, 6, 1); // past the end: ignored
        assert_eq!(c_string(b"veth\0\0junk"), "veth");
        assert_eq!(c_string(b"full"), "full");
    }

    #[test]
    fn names_that_do_not_fit_are_refused() {
        assert!(Ethtool::open("").is_err());
        assert!(Ethtool::open("a-name-of-sixteen").is_err());
        assert!(Ethtool::open("nul\0").is_err());
        assert!(bounded(MAX_SET + 1).is_err());
    }

    #[test]
    fn live_loopback_answers_or_says_why() {
        let e = Ethtool::open("lo").expect("a socket");
        // Loopback implements few requests: each either answers or errors.
        let _ = e.drvinfo();
        let n = e.set_len(SS_FEATURES).expect("every device has features");
        let names = e.strings(SS_FEATURES, n).expect("feature names");
        assert!(names.iter().any(|s| s == "rx-gro"), "{names:?}");
        assert_eq!(e.features(n).expect("feature bits").len(), names.len());
        assert!(Ethtool::open("nosuchdev0").unwrap().drvinfo().is_err());
    }
}
