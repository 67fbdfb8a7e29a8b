//! An AF_XDP socket that receives: its UMEM (the frames the kernel copies or
//! places datagrams in), the fill ring that lends frames to the kernel and the
//! receive ring that hands them back, over `xdpilone`'s rings.
//!
//! The unsafe part is the UMEM: a page-aligned anonymous mapping registered with
//! the kernel, which writes into frames we have lent it (on the fill ring) and
//! reads none. A frame is ours again once its descriptor comes back on the
//! receive ring, until we lend it again; [`Xsk::recv`] hands out each frame only
//! between those two points.

#![allow(unsafe_code)]

use std::io;
use std::num::NonZeroU32;
use std::os::fd::RawFd;
use std::ptr::NonNull;

use memmap2::MmapMut;
use xdpilone::xdp::XdpDesc;
use xdpilone::{DeviceQueue, IfInfo, RingRx, Socket, SocketConfig, Umem, UmemConfig};

/// Size of one UMEM frame: a page, the most a copy-mode socket takes.
pub const FRAME: u32 = 4096;
/// Frames in the UMEM: the fill ring holds all of them, the receive ring half.
pub const FRAMES: u32 = 4096;
/// Headroom the kernel keeps before each received frame's data
/// (`XDP_PACKET_HEADROOM`), so the longest frame a chunk holds is
/// [`FRAME`] less this.
pub const KERNEL_HEADROOM: u32 = 256;
/// Descriptors read per [`Xsk::recv`].
const BATCH: usize = 64;

/// How the socket was bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// The driver places frames straight in the UMEM (`XDP_ZEROCOPY`).
    ZeroCopy,
    /// The kernel copies each frame into the UMEM (`XDP_COPY`).
    Copy,
}

/// `struct xdp_statistics` as the kernel reports it (Linux 5.9 and later fill all).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct XskStats {
    /// Frames dropped for lack of room (no free frame on the fill ring, or other).
    pub rx_dropped: u64,
    /// Frames dropped because the receive ring was full.
    pub rx_ring_full: u64,
    /// Times the kernel found the fill ring empty.
    pub rx_fill_ring_empty: u64,
}

/// A receiving AF_XDP socket bound to one queue of one interface.
pub struct Xsk {
    // Field order is drop order: the rings unmap before the UMEM's socket closes,
    // and the memory outlives both.
    rx: RingRx,
    fill: DeviceQueue,
    _umem: Umem,
    mem: MmapMut,
    /// `mem`'s start: frames are read through it, one owned frame at a time,
    /// never through a reference to the whole mapping the kernel writes into.
    base: NonNull<u8>,
    binding: Binding,
    /// Descriptors read in one call, preallocated.
    descs: Vec<XdpDesc>,
    /// Frames handed back on the receive ring and read, not yet lent again
    /// (the fill ring had no room for them yet); preallocated for every frame.
    unlent: Vec<u64>,
}

// SAFETY: `Xsk` owns its mapping and every ring and socket it holds; none is
// shared with another thread (the `Umem`'s pointer, which makes it !Send, points
// into `mem`, which moves with it). It is used from one thread at a time.
unsafe impl Send for Xsk {}

impl std::fmt::Debug for Xsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Xsk")
            .field("fd", &self.fd())
            .field("binding", &self.binding)
            .finish_non_exhaustive()
    }
}

fn os(e: xdpilone::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.get_raw().abs())
}

impl Xsk {
    /// Binds a socket to queue `queue` of interface `ifindex`, zero-copy when the
    /// driver offers it, else copying, and lends the kernel every frame.
    pub fn bind(ifindex: u32, queue: u32) -> io::Result<Xsk> {
        Xsk::open(ifindex, queue, Binding::ZeroCopy)
            .or_else(|_| Xsk::open(ifindex, queue, Binding::Copy))
    }

    fn open(ifindex: u32, queue: u32, binding: Binding) -> io::Result<Xsk> {
        let mut mem = MmapMut::map_anon((FRAME * FRAMES) as usize)?;
        let area = NonNull::from(&mut mem[..]);
        let config = UmemConfig {
            fill_size: FRAMES,
            complete_size: FRAMES,
            frame_size: FRAME,
            headroom: 0,
            flags: 0,
        };
        // SAFETY: `area` is a page-aligned anonymous mapping (mmap returns page
        // boundaries) of FRAME * FRAMES bytes, owned by the returned `Xsk`, which
        // drops the UMEM's socket and rings before the mapping; on an early
        // return the UMEM drops before `mem` too.
        let umem = unsafe { Umem::new(config, area) }.map_err(os)?;
        let mut info = IfInfo::invalid();
        info.from_ifindex(ifindex).map_err(os)?;
        info.set_queue(queue);
        let sock = Socket::with_shared(&info, &umem).map_err(os)?;
        let fill = umem.fq_cq(&sock).map_err(os)?;
        let bind_flags = match binding {
            Binding::ZeroCopy => SocketConfig::XDP_BIND_ZEROCOPY,
            Binding::Copy => SocketConfig::XDP_BIND_COPY,
        };
        let user = umem
            .rx_tx(
                &sock,
                &SocketConfig {
                    rx_size: NonZeroU32::new(FRAMES / 2),
                    tx_size: None,
                    bind_flags,
                },
            )
            .map_err(os)?;
        let rx = user.map_rx().map_err(os)?;
        umem.bind(&user).map_err(os)?;
        let base = area.cast::<u8>();
        let mut xsk = Xsk {
            rx,
            fill,
            _umem: umem,
            mem,
            base,
            binding,
            descs: Vec::with_capacity(BATCH),
            unlent: Vec::with_capacity(FRAMES as usize),
        };
        let mut w = xsk.fill.fill(FRAMES);
        let lent = w.insert((0..FRAMES).map(|i| u64::from(i * FRAME)));
        w.commit();
        drop(w);
        debug_assert_eq!(lent, FRAMES, "a new fill ring takes every frame");
        // xdpilone opens the socket without close-on-exec: a child exec'd while a
        // flow runs must not keep the pinned UMEM.
        let fd = xsk.fd();
        let flags = syscall!(fcntl(fd, libc::F_GETFD))?;
        syscall!(fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC))?;
        Ok(xsk)
    }

    /// The socket, for the XDP program's map and for `poll`.
    pub fn fd(&self) -> RawFd {
        self.rx.as_raw_fd()
    }

    /// How the socket was bound.
    pub fn binding(&self) -> Binding {
        self.binding
    }

    /// Hands up to 64 received frames to `on`, each whole (from its Ethernet
    /// header), then lends their frames back to the kernel. Returns how many.
    #[inline]
    pub fn recv(&mut self, on: &mut dyn FnMut(&[u8])) -> usize {
        self.lend();
        let mut r = self.rx.receive(BATCH as u32);
        self.descs.clear();
        while let Some(d) = r.read() {
            self.descs.push(d);
        }
        r.release();
        drop(r);
        let n = self.descs.len();
        if n == 0 {
            return 0;
        }
        let len = self.mem.len() as u64;
        for d in &self.descs {
            let (at, end) = (d.addr, d.addr + u64::from(d.len));
            if end <= len {
                // SAFETY: `at..end` lies inside the mapping (checked above), in the
                // chunk the kernel was lent and has handed back on the receive
                // ring: it writes there no more until the chunk goes back on the
                // fill ring below, after `on` returns.
                let frame = unsafe {
                    std::slice::from_raw_parts(self.base.as_ptr().add(at as usize), d.len as usize)
                };
                on(frame);
            }
        }
        // Every frame goes back, now or at the next call.
        let mask = !u64::from(FRAME - 1);
        self.unlent.extend(self.descs.iter().map(|d| d.addr & mask));
        self.lend();
        n
    }

    /// Lends the kernel every frame read and not yet lent, as far as the fill
    /// ring has room. A reservation may come back short (the ring's cached free
    /// count is only reloaded when it reaches zero), so it takes as many as
    /// needed. The ring may also have no room at all for a moment: the kernel
    /// publishes a batch on the receive ring before it publishes that it took
    /// those frames off the fill ring, so the rest wait for the next call. Each
    /// frame is on the fill ring, on the receive ring or here, so `unlent` never
    /// outgrows the frames it was made for.
    fn lend(&mut self) {
        while !self.unlent.is_empty() {
            let mut w = self.fill.fill(self.unlent.len() as u32);
            let k = w.insert(self.unlent.iter().copied()) as usize;
            w.commit();
            drop(w);
            if k == 0 {
                return;
            }
            self.unlent.drain(..k);
        }
    }

    /// Waits up to `timeout_ms` for a frame to arrive, or for `other` (the flow's
    /// kernel socket) to become readable.
    pub fn wait(&self, other: RawFd, timeout_ms: i32) -> io::Result<()> {
        let mut p = [self.fd(), other].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // SAFETY: two live pollfds, and their count.
        syscall!(poll(p.as_mut_ptr(), 2, timeout_ms)).map(drop)
    }

    /// The kernel's drop counters for this socket.
    pub fn stats(&self) -> io::Result<XskStats> {
        let s = self.fill.statistics_v2().map_err(os)?;
        Ok(XskStats {
            rx_dropped: s.rx_dropped,
            rx_ring_full: s.rx_ring_full,
            rx_fill_ring_empty: s.rx_fill_ring_empty_descs,
        })
    }
}

/// Whether this kernel creates AF_XDP sockets (`CONFIG_XDP_SOCKETS`).
pub fn probe_socket() -> io::Result<()> {
    // SAFETY: socket(2) with constant arguments; the descriptor is closed below.
    let fd = syscall!(socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0))?;
    // SAFETY: `fd` was just opened here and is closed once.
    unsafe { libc::close(fd) };
    Ok(())
}
