//! xdp: UDP receives through AF_XDP. An XDP program (`bpf/xsk_redirect.bpf.c`,
//! loaded with `aya`) on the interface that holds the flow's address hands every
//! UDP datagram to the flow's port to an AF_XDP socket bound to the interface's
//! receive queue, before the kernel's IP and UDP layers see it; every other frame
//! (the control connection, ARP, probes, other flows) goes on to the stack. The
//! flow reads whole frames from the socket's receive ring and lends their memory
//! straight back on the fill ring: no system call per datagram, one `poll` when
//! the ring is empty.
//!
//! The program runs in the driver (native XDP) where the driver has it (veth
//! does), else in the generic hook after the kernel built its socket buffer
//! (loopback); the socket is zero-copy where the driver offers it, else the
//! kernel copies each frame into the shared memory (veth, loopback). The report
//! says which. The program is attached through a BPF link, so it goes when the
//! flow ends or the process dies. Building the strategy needs CAP_BPF and
//! CAP_NET_ADMIN, an interface with one receive queue and no XDP program of
//! another's, and frames that fit a 4 KiB chunk.

use std::io;
use std::net::{IpAddr, UdpSocket};
use std::os::fd::AsRawFd;

use aya::maps::XskMap;
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};
use netsonde_model::result::IoReport;
use netsonde_model::spec::{IoStrategy, TestSpec};
use netsonde_proto::message::PREAMBLE_MAGIC;

use rustix::io::Errno;
use rustix::net::RecvFlags;

use super::{report, Moved, Rx, Sock};
use super::{unsupported, IoError};
use crate::buf::PageBuf;
use crate::sys::xdp::{Binding, Xsk, FRAME, KERNEL_HEADROOM};

/// The program's object file, built by `bpf/build.sh` and committed.
static PROGRAM: &[u8] = aya::include_bytes_aligned!("../../bpf/xsk_redirect.bpf.o");
/// The program's name in it.
const PROGRAM_NAME: &str = "netsonde_xsk";
/// How long one receive waits in `poll` before it reports `WouldBlock`.
const WAIT_MS: i32 = 100;

const ETH: usize = 14;
const UDP: usize = 8;

/// A UDP flow's receiver over AF_XDP.
pub struct XdpRx {
    // Drop order: the socket closes (and leaves the map) before the program and
    // its link go.
    xsk: Xsk,
    _ebpf: Ebpf,
    interface: String,
    native: bool,
    /// The flow's datagram size.
    size: usize,
    /// A datagram read from the flow's kernel socket.
    buf: PageBuf,
    /// Datagrams that reached the flow through the kernel's stack instead.
    via_stack: u64,
}

impl std::fmt::Debug for XdpRx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpRx")
            .field("interface", &self.interface)
            .field("native", &self.native)
            .field("xsk", &self.xsk)
            .finish_non_exhaustive()
    }
}

fn xdp_unsupported(feature: impl Into<String>) -> IoError {
    unsupported(IoStrategy::Xdp, feature)
}

/// The interface that holds `ip` (IPv4-mapped addresses as IPv4), and whether
/// it is a loopback device.
fn interface_of(ip: IpAddr) -> Option<(String, bool)> {
    let ip = ip.to_canonical();
    if_addrs::get_if_addrs().ok()?.into_iter().find_map(|ifa| {
        let lo = is_loopback(&ifa.name);
        (ifa.ip() == ip).then_some((ifa.name, lo))
    })
}

/// Whether `interface` is a loopback device (`IFF_LOOPBACK` in the flags `/sys`
/// shows).
fn is_loopback(interface: &str) -> bool {
    const IFF_LOOPBACK: u32 = 0x8;
    sys_class_net(interface, "flags")
        .and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok())
        .is_some_and(|f| f & IFF_LOOPBACK != 0)
}

/// The loopback interface's name.
fn loopback() -> Option<String> {
    std::fs::read_dir("/sys/class/net")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| is_loopback(name))
}

/// One of `interface`'s attributes in `/sys/class/net`, trimmed.
fn sys_class_net(interface: &str, what: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/net/{interface}/{what}"))
        .ok()
        .map(|s| s.trim().to_owned())
}

/// `interface`'s MTU, as `/sys` shows it.
fn mtu(interface: &str) -> Option<usize> {
    sys_class_net(interface, "mtu")?.parse().ok()
}

/// How many receive queues `/sys` shows for `interface` (`None` when it cannot
/// tell, as outside the interface's namespace's own `/sys`).
fn rx_queues(interface: &str) -> Option<usize> {
    let dir = std::fs::read_dir(format!("/sys/class/net/{interface}/queues")).ok()?;
    Some(
        dir.filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
            .count(),
    )
}

/// The longest UDP payload a frame of one chunk carries.
fn max_payload(ipv6: bool) -> usize {
    (FRAME - KERNEL_HEADROOM) as usize - ETH - if ipv6 { 40 } else { 20 } - UDP
}

/// The UDP payload of an Ethernet frame the program redirected (IPv4 with any
/// header length, or IPv6 with UDP right after the fixed header), cut to the
/// UDP header's length.
#[inline]
fn udp_payload(frame: &[u8]) -> Option<&[u8]> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    let udp = match ethertype {
        0x0800 => ETH + usize::from(frame.get(ETH)? & 0x0f) * 4,
        0x86dd => ETH + 40,
        _ => return None,
    };
    let len = usize::from(u16::from_be_bytes([
        *frame.get(udp + 4)?,
        *frame.get(udp + 5)?,
    ]));
    let end = (udp + len.max(UDP)).min(frame.len());
    frame.get(udp + UDP..end)
}

/// The OS error at the root of an error chain (aya's errors print their call,
/// and keep the errno as their source).
fn errno(e: &(dyn std::error::Error + 'static)) -> Option<Errno> {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(code) = err
            .downcast_ref::<io::Error>()
            .and_then(Errno::from_io_error)
        {
            return Some(code);
        }
        cur = err.source();
    }
    None
}

/// An aya error while doing `what`: not permitted is a missing capability,
/// anything else a setup failure, each with the OS's words.
fn aya_setup(what: &str, e: &(dyn std::error::Error + 'static)) -> IoError {
    let code = errno(e);
    if matches!(code, Some(Errno::PERM | Errno::ACCESS)) {
        return xdp_unsupported(format!(
            "{what}: not permitted (loading an XDP program needs CAP_BPF and CAP_NET_ADMIN)"
        ));
    }
    let os = code.map_or(String::new(), |c| format!(": {}", io::Error::from(c)));
    IoError::Setup {
        strategy: IoStrategy::Xdp,
        source: io::Error::other(format!("{what}: {e}{os}")),
    }
}

/// A missing part of the committed program object.
fn broken(what: &str) -> IoError {
    IoError::Setup {
        strategy: IoStrategy::Xdp,
        source: io::Error::other(format!("the XDP program object has no {what}")),
    }
}

/// The IPv4 address as the program's globals take it (network order), or 0
/// (any) for IPv6.
fn v4(ip: IpAddr) -> u32 {
    match ip.to_canonical() {
        IpAddr::V4(a) => u32::from_ne_bytes(a.octets()),
        IpAddr::V6(_) => 0,
    }
}

impl XdpRx {
    /// Attaches the program to the interface holding `sock`'s local address and
    /// binds an AF_XDP socket to its queue.
    pub fn new(sock: &UdpSocket, spec: &TestSpec) -> Result<XdpRx, IoError> {
        let local = sock.local_addr().map_err(super::setup(IoStrategy::Xdp))?;
        let peer = sock.peer_addr().map_err(super::setup(IoStrategy::Xdp))?;
        let ip = local.ip().to_canonical();
        let size = spec.size.0 as usize;
        let ip_header = if ip.is_ipv6() { 40 } else { 20 };
        if size > max_payload(ip.is_ipv6()) {
            return Err(xdp_unsupported(format!(
                "a frame must fit one {FRAME} B chunk less the kernel's {KERNEL_HEADROOM} B \
                 headroom: datagrams of at most {} B, not {size} B",
                max_payload(ip.is_ipv6())
            )));
        }
        // A peer on this host sends through loopback, whatever address it uses.
        let (interface, is_lo) = match interface_of(peer.ip()) {
            Some(_) => loopback().map(|lo| (lo, true)),
            None => interface_of(ip),
        }
        .ok_or_else(|| xdp_unsupported(format!("no interface holds {ip}")))?;
        if let Some(m) = mtu(&interface).filter(|&m| size + ip_header + UDP > m) {
            return Err(xdp_unsupported(format!(
                "{size} B datagrams do not fit {interface}'s MTU of {m} B in one frame, and \
                 the program leaves fragments to the kernel: at most {} B",
                m.saturating_sub(ip_header + UDP)
            )));
        }
        match rx_queues(&interface) {
            Some(n) if n > 1 => {
                return Err(xdp_unsupported(format!(
                    "{interface} has {n} receive queues and xdp binds one socket to queue 0 \
                     (`ethtool -L {interface} combined 1` leaves one)"
                )))
            }
            _ => {}
        }
        if is_lo && matches!(spec.tx_io, IoStrategy::Batch | IoStrategy::Auto) {
            return Err(xdp_unsupported(format!(
                "on loopback a GSO sender's ({}) super-packets of up to 64 KiB reach the XDP \
                 program whole, and an AF_XDP frame holds {} B: send with --tx-io copy, or \
                 across a veth pair, whose driver cuts them into frames for XDP",
                spec.tx_io,
                FRAME - KERNEL_HEADROOM
            )));
        }
        let ifindex: u32 = sys_class_net(&interface, "ifindex")
            .and_then(|i| i.parse().ok())
            .ok_or_else(|| {
                super::setup(IoStrategy::Xdp)(io::Error::other(format!(
                    "{interface} has no interface index in /sys/class/net"
                )))
            })?;
        // The flow's datagrams only: to its port (and IPv4 address), from its
        // peer's, as the connected socket would take them.
        let (port, peer_port) = (local.port().to_be(), peer.port().to_be());
        let (addr4, peer4) = (v4(ip), v4(peer.ip()));
        let mut ebpf = load([port, peer_port], [addr4, peer4])?;
        let xsk = Xsk::bind(ifindex, 0).map_err(|e| match Errno::from_io_error(&e) {
            Some(Errno::PERM) => xdp_unsupported(
                "opening an AF_XDP socket: not permitted (it needs CAP_NET_RAW and CAP_NET_ADMIN)",
            ),
            Some(Errno::AFNOSUPPORT) => {
                xdp_unsupported("this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)")
            }
            Some(Errno::BUSY) => xdp_unsupported(format!(
                "{interface}'s queue 0 already has an AF_XDP socket (another flow's, as in a \
                 bidirectional test on one host, or another tool's)"
            )),
            _ => IoError::Setup {
                strategy: IoStrategy::Xdp,
                source: io::Error::new(e.kind(), format!("binding an AF_XDP socket: {e}")),
            },
        })?;
        let map = ebpf.map_mut("XSKS").ok_or_else(|| broken("XSKS map"))?;
        XskMap::try_from(map)
            .and_then(|mut m| m.set(0, xsk.fd(), 0))
            .map_err(|e| aya_setup("registering the AF_XDP socket", &e))?;
        let prog = program(&mut ebpf)?;
        // Native (in the driver) where it exists, else generic; a program already
        // there refuses both.
        let attach_error = |e: aya::programs::ProgramError| match errno(&e) {
            Some(Errno::BUSY | Errno::EXIST) => xdp_unsupported(format!(
                "{interface} already runs an XDP program (another flow's, as in a \
                 bidirectional test on one host, or another tool's)"
            )),
            _ => aya_setup(&format!("attaching the XDP program to {interface}"), &e),
        };
        let native = match prog.attach_to_if_index(ifindex, XdpMode::Driver) {
            Ok(_) => true,
            Err(e) if matches!(errno(&e), Some(Errno::BUSY | Errno::EXIST)) => {
                return Err(attach_error(e))
            }
            Err(_) => {
                prog.attach_to_if_index(ifindex, XdpMode::Skb)
                    .map_err(attach_error)?;
                false
            }
        };
        Ok(XdpRx {
            xsk,
            _ebpf: ebpf,
            interface,
            native,
            size,
            // As copy's: a repeated hello (28 B) read whole whatever the size.
            buf: PageBuf::zeroed(size.max(64) + 1).map_err(super::setup(IoStrategy::Xdp))?,
            via_stack: 0,
        })
    }
}

impl Rx for XdpRx {
    /// Frames from the ring; when it is empty, a datagram waiting on the flow's
    /// kernel socket (one the program passed on: a fragment, an IPv6 extension
    /// header, another queue's), then `poll` on both.
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let Sock::Udp(udp) = sock else {
            return Err(io::ErrorKind::Unsupported.into());
        };
        let mut moved = Moved::default();
        for attempt in 0..2 {
            let size = self.size;
            let n = self.xsk.recv(&mut |frame| {
                let Some(p) = udp_payload(frame) else { return };
                // A payload longer than the flow's datagrams is several of them that
                // the kernel kept together (a GSO super-packet, or GRO's merge,
                // seen by a generic-mode program): the sender's datagrams all have
                // the spec's size, so it cuts back into them. A repeated hello
                // (longer than datagrams under 28 B) stays whole.
                let whole = p.len() <= size || p.starts_with(PREAMBLE_MAGIC);
                let piece = if whole { p.len().max(1) } else { size.max(1) };
                for d in p.chunks(piece) {
                    moved.bytes += d.len() as u64;
                    moved.messages += 1;
                    on(d, d.len());
                }
            });
            if n > 0 {
                return Ok(Some(moved));
            }
            moved.calls += 1;
            match rustix::net::recv(udp, &mut self.buf[..], RecvFlags::DONTWAIT) {
                Ok((_, len)) => {
                    self.via_stack += 1;
                    moved.bytes += len as u64;
                    moved.messages += 1;
                    on(&self.buf[..len.min(self.buf.len())], len);
                    return Ok(Some(moved));
                }
                Err(rustix::io::Errno::AGAIN) => {}
                Err(e) => return Err(e.into()),
            }
            if attempt == 0 {
                self.xsk.wait(udp.as_raw_fd(), WAIT_MS)?;
                moved.calls += 1;
            }
        }
        Err(io::ErrorKind::WouldBlock.into())
    }

    fn report(&mut self) -> IoReport {
        let mut r = report(IoStrategy::Xdp);
        let stats = self.xsk.stats().ok();
        r.ring_drops = stats.map(|s| s.rx_dropped + s.rx_ring_full);
        r.note = Some(format!(
            "XDP program in {} mode on {}; AF_XDP socket {}{}",
            if self.native {
                "native (driver)"
            } else {
                "generic (skb)"
            },
            self.interface,
            match self.xsk.binding() {
                Binding::ZeroCopy => "zero-copy",
                Binding::Copy => "in copy mode",
            },
            match stats {
                Some(s) if s.rx_fill_ring_empty > 0 => format!(
                    "; the kernel found no free frame {} times",
                    s.rx_fill_ring_empty
                ),
                _ => String::new(),
            }
        ));
        if let Some(n) = r.ring_drops.filter(|&n| n > 0) {
            let note = r.note.get_or_insert_with(String::new);
            note.push_str(&format!(
                "; its socket dropped {n} frame(s) (a full receive ring, no free frame, or a \
                 frame longer than a chunk)"
            ));
        }
        if self.via_stack > 0 {
            let note = r.note.get_or_insert_with(String::new);
            note.push_str(&format!(
                "; {} datagram(s) reached the flow's kernel socket instead (fragments, IPv6 \
                 extension headers, another receive queue)",
                self.via_stack
            ));
        }
        r
    }
}

/// Whether this host can run the strategy, without attaching anything: an
/// AF_XDP socket opens and the kernel accepts the program.
pub fn probe() -> Result<(), IoError> {
    crate::sys::xdp::probe_socket().map_err(|e| match Errno::from_io_error(&e) {
        Some(Errno::AFNOSUPPORT) => {
            xdp_unsupported("this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)")
        }
        Some(Errno::PERM) => xdp_unsupported("opening an AF_XDP socket is not permitted"),
        _ => super::setup(IoStrategy::Xdp)(e),
    })?;
    program(&mut load([0, 0], [0, 0])?).map(drop)
}

/// The program's object with its globals set to a flow (ports, then IPv4
/// addresses, network order; 0: any): its map created, its program not yet
/// loaded.
fn load(ports: [u16; 2], addrs: [u32; 2]) -> Result<Ebpf, IoError> {
    EbpfLoader::new()
        .override_global("PORT", &ports[0], true)
        .override_global("PEER_PORT", &ports[1], true)
        .override_global("ADDR4", &addrs[0], true)
        .override_global("PEER4", &addrs[1], true)
        .load(PROGRAM)
        .map_err(|e| aya_setup("loading the XDP program", &e))
}

/// The program, verified and loaded by the kernel (not attached).
fn program(ebpf: &mut Ebpf) -> Result<&mut Xdp, IoError> {
    let prog: &mut Xdp = ebpf
        .program_mut(PROGRAM_NAME)
        .ok_or_else(|| broken("program netsonde_xsk"))?
        .try_into()
        .map_err(|e| aya_setup("the XDP program", &e))?;
    prog.load()
        .map_err(|e| aya_setup("loading the XDP program", &e))?;
    Ok(prog)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(ethertype: u16, ip: &[u8], udp_len: u16, payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.extend_from_slice(ip);
        f.extend_from_slice(&[0, 1, 0, 2]);
        f.extend_from_slice(&udp_len.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn payloads_come_from_ipv4_with_options_and_ipv6() {
        let mut v4 = vec![0x45u8; 1];
        v4.extend_from_slice(&[0; 19]);
        let f = frame(0x0800, &v4, 8 + 5, b"hello");
        assert_eq!(udp_payload(&f), Some(&b"hello"[..]));
        // An IPv4 header with options (IHL 6): the payload starts 4 bytes later.
        let mut opt = vec![0x46u8];
        opt.extend_from_slice(&[0; 23]);
        let f = frame(0x0800, &opt, 8 + 3, b"abc");
        assert_eq!(udp_payload(&f), Some(&b"abc"[..]));
        let f = frame(0x86dd, &[0; 40], 8 + 2, b"hi");
        assert_eq!(udp_payload(&f), Some(&b"hi"[..]));
    }

    #[test]
    fn padding_after_the_datagram_is_not_payload_and_short_frames_are_none() {
        let mut v4 = vec![0x45u8];
        v4.extend_from_slice(&[0; 19]);
        // Ethernet pads short frames: the UDP length says where the data ends.
        let mut f = frame(0x0800, &v4, 8 + 2, b"ok");
        f.extend_from_slice(&[0; 16]);
        assert_eq!(udp_payload(&f), Some(&b"ok"[..]));
        assert_eq!(udp_payload(&f[..20]), None);
        assert_eq!(udp_payload(&frame(0x0806, &v4, 10, b"ok")), None);
    }

    #[test]
    fn the_largest_datagram_fits_a_chunk_less_the_headroom() {
        assert_eq!(max_payload(false), 4096 - 256 - 14 - 20 - 8);
        assert_eq!(max_payload(true), 4096 - 256 - 14 - 40 - 8);
    }
}
