//! copy, epoll and busypoll: the same read/write calls, three ways of waiting when
//! the socket is not ready. `copy` blocks in the kernel (up to the socket timeout);
//! `epoll` sets the socket non-blocking and leaves the waiting to the flow group's
//! edge-triggered epoll;
//! `busypoll` sets it non-blocking, asks the kernel to busy-poll the device queue
//! (SO_BUSY_POLL, SO_PREFER_BUSY_POLL) and spins: no interrupt, no sleep, and a
//! core kept busy, which the CPU figures show.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;

use super::{report, setup, Moved, Rx, Sock, Tx};
use crate::buf::PageBuf;
use crate::sys::{self, net};

/// How to wait for a socket.
pub enum Waiter {
    /// Blocking socket; its timeout bounds each call.
    Block,
    /// Non-blocking; the caller's loop is the spin.
    Spin,
    /// Non-blocking; return at once: the flow group waits for this socket and its
    /// others in one epoll.
    Caller,
    /// Non-blocking, a ready stream read as iperf3's `Nread` does (until its
    /// message is whole or the socket is empty, with `read(2)`) and written as
    /// its `Nwrite` does (the rest of the message, with `write(2)`, until it is
    /// whole or the socket is full); the session's streams wait together in one
    /// `select(2)` before every round, as iperf3's loop does
    /// ([`crate::flow::run_select`]): how an iperf3 client's streams are served.
    Select,
}

impl std::fmt::Debug for Waiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Waiter::Block => "Block",
            Waiter::Spin => "Spin",
            Waiter::Caller => "Caller",
            Waiter::Select => "Select",
        })
    }
}

impl Waiter {
    /// Sets the socket up for `strategy`: blocking (copy), or non-blocking with
    /// the flow group waiting for it in its epoll ([`crate::flow::run_group`]), or
    /// non-blocking and spinning with SO_BUSY_POLL (busypoll).
    pub fn new(strategy: IoStrategy, fd: &(impl AsFd + AsRawFd)) -> io::Result<Waiter> {
        match strategy {
            IoStrategy::Epoll => {
                sys::set_nonblocking(fd)?;
                Ok(Waiter::Caller)
            }
            IoStrategy::Busypoll => {
                sys::set_nonblocking(fd)?;
                // Busy-poll the device queue for up to 50 µs per call and prefer it
                // over interrupts. Raising SO_BUSY_POLL needs CAP_NET_ADMIN; without it
                // the spin still runs, on the socket alone.
                let _ = sys::setsockopt_int(fd, net::SOL_SOCKET, net::SO_BUSY_POLL, 50);
                let _ = sys::setsockopt_int(fd, net::SOL_SOCKET, net::SO_PREFER_BUSY_POLL, 1);
                Ok(Waiter::Spin)
            }
            _ => Ok(Waiter::Block),
        }
    }

    /// After a `WouldBlock`: wait the strategy's way (spin once, or not at all).
    #[inline]
    pub fn wait(&mut self) {
        match self {
            Waiter::Block | Waiter::Caller | Waiter::Select => {}
            Waiter::Spin => std::hint::spin_loop(),
        }
    }

    /// The note for the report.
    fn note(&self) -> Option<String> {
        match self {
            Waiter::Spin => Some("spins on a non-blocking socket: one core stays busy".into()),
            Waiter::Caller => Some(
                "non-blocking; waits in an edge-triggered epoll shared by the flows of its thread"
                    .into(),
            ),
            Waiter::Select => Some(
                "served as iperf3 3.12 serves: the streams on one thread, each round after one \
                 select over all of them, a ready stream read or written until its message \
                 is whole or the socket is empty or full"
                    .into(),
            ),
            _ => None,
        }
    }
}

/// Blocking, epoll or spinning send.
pub struct PlainTx {
    strategy: IoStrategy,
    format: crate::datagram::Format,
    waiter: Waiter,
    msg: PageBuf,
    off: usize,
}

impl PlainTx {
    /// Builds it; `select`: a TCP stream of an iperf3 client's session,
    /// written as iperf3 writes ([`Waiter::Select`];
    /// [`super::served_as_iperf3`] says which).
    pub fn new(
        strategy: IoStrategy,
        sock: Sock<'_>,
        size: usize,
        format: crate::datagram::Format,
        select: bool,
    ) -> Result<PlainTx, super::IoError> {
        let waiter = match sock {
            Sock::Tcp(s) if select => sys::set_nonblocking(s).map(|()| Waiter::Select),
            Sock::Tcp(s) => Waiter::new(strategy, s),
            Sock::Udp(s) => Waiter::new(strategy, s),
        }
        .map_err(setup(strategy))?;
        let msg = PageBuf::pattern(size, size).map_err(setup(strategy))?;
        Ok(PlainTx {
            strategy,
            format,
            waiter,
            msg,
            off: 0,
        })
    }
}

impl PlainTx {
    /// The rest of the message written as iperf3 3.12's `Nwrite` writes it to
    /// a ready stream: `write(2)` until it is whole or the socket is full
    /// (`WouldBlock`, a call counted as made). A socket full at once is
    /// `WouldBlock`.
    fn send_block(&mut self, sock: &std::net::TcpStream) -> io::Result<Moved> {
        let (mut bytes, mut calls) = (0, 0u64);
        loop {
            calls += 1;
            match net::write_once(sock, &self.msg[self.off..]) {
                // Never for a socket and a block that is not empty; said as
                // the peer's close, as a send of nothing is.
                Ok(0) => {
                    return Ok(Moved {
                        bytes,
                        messages: 0,
                        calls,
                    })
                }
                Ok(n) => {
                    bytes += n as u64;
                    self.off += n;
                    if self.off == self.msg.len() {
                        self.off = 0;
                        return Ok(Moved {
                            bytes,
                            messages: 1,
                            calls,
                        });
                    }
                }
                Err(e) if bytes > 0 && is_empty(&e) => {
                    return Ok(Moved {
                        bytes,
                        messages: 0,
                        calls,
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Tx for PlainTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, seq: u64, tx_ns: u64) -> io::Result<Moved> {
        let r = match sock {
            Sock::Tcp(s) if matches!(self.waiter, Waiter::Select) => return self.send_block(s),
            Sock::Tcp(s) => net::send_once(s, &self.msg[self.off..]),
            Sock::Udp(s) => {
                self.format.stamp(&mut self.msg, seq, tx_ns);
                net::send_once(s, &self.msg)
            }
        };
        match r {
            Ok(n) => {
                let whole = match sock {
                    Sock::Tcp(_) => {
                        self.off += n;
                        let done = self.off == self.msg.len();
                        if done {
                            self.off = 0;
                        }
                        u64::from(done)
                    }
                    Sock::Udp(_) => 1,
                };
                Ok(Moved {
                    bytes: n as u64,
                    messages: whole,
                    calls: 1,
                })
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::WouldBlock {
                    self.waiter.wait();
                }
                Err(e)
            }
        }
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        IoReport {
            note: self.waiter.note(),
            ..report(self.strategy)
        }
    }

    fn set_pos(&mut self, pos: usize) {
        self.off = pos % self.msg.len().max(1);
    }
}

/// Blocking, epoll or spinning receive.
pub struct PlainRx {
    strategy: IoStrategy,
    waiter: Waiter,
    buf: PageBuf,
}

impl PlainRx {
    /// Builds it.
    pub fn new(
        strategy: IoStrategy,
        sock: Sock<'_>,
        size: usize,
        per_message: bool,
    ) -> Result<PlainRx, super::IoError> {
        let select = per_message && strategy == IoStrategy::Copy;
        let waiter = match sock {
            Sock::Tcp(s) if select => sys::set_nonblocking(s).map(|()| Waiter::Select),
            Sock::Udp(s) if select => sys::set_nonblocking(s).map(|()| Waiter::Select),
            Sock::Tcp(s) => Waiter::new(strategy, s),
            Sock::Udp(s) => Waiter::new(strategy, s),
        }
        .map_err(setup(strategy))?;
        // A TCP stream has no messages to keep apart: read as much as the kernel
        // has, as a receiving application would. An epoll group's flows take turns
        // of up to 64 steps each, so there a read stays one message long (a 1 MiB
        // read would give a receiver 64 MiB a turn and starve the thread's
        // senders). A datagram gets one byte more than its size, so an oversized
        // one shows.
        // Read as iperf3 does (`per_message`): one message per call.
        let len = match sock {
            Sock::Tcp(_) if per_message => size,
            Sock::Tcp(_) if strategy != IoStrategy::Epoll => size.max(super::TCP_READ),
            _ => size.max(64) + 1,
        };
        Ok(PlainRx {
            strategy,
            waiter,
            buf: PageBuf::zeroed(len).map_err(setup(strategy))?,
        })
    }
}

impl PlainRx {
    /// One block read as iperf3 3.12's `Nread` reads it from a ready stream:
    /// reads until the block is full, the socket is empty (`WouldBlock`, a call
    /// counted as made) or the peer is done, and says what came as one message.
    /// A socket that is empty at once is `WouldBlock`; one at its end, `None`.
    fn recv_block(
        &mut self,
        sock: &std::net::TcpStream,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let (mut got, mut calls) = (0, 0u64);
        while got < self.buf.len() {
            calls += 1;
            match net::read_once(sock, &mut self.buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if got > 0 && is_empty(&e) => break,
                Err(e) => return Err(e),
            }
        }
        if got == 0 {
            return Ok(None);
        }
        on(&self.buf[..got], got);
        Ok(Some(Moved {
            bytes: got as u64,
            messages: 1,
            calls,
        }))
    }
}

/// Whether a read found the socket empty for now (or was interrupted), which
/// ends an `Nread` with what it has.
fn is_empty(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
    )
}

impl Rx for PlainRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let r = match sock {
            Sock::Tcp(s) if matches!(self.waiter, Waiter::Select) => {
                return self.recv_block(s, on);
            }
            Sock::Tcp(s) => net::recv_once(s, &mut self.buf),
            Sock::Udp(s) => net::recv_once(s, &mut self.buf),
        };
        match r {
            Ok(0) if matches!(sock, Sock::Tcp(_)) => Ok(None),
            Ok(n) => {
                on(&self.buf[..n], n);
                Ok(Some(Moved {
                    bytes: n as u64,
                    messages: 1,
                    calls: 1,
                }))
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::WouldBlock {
                    self.waiter.wait();
                }
                Err(e)
            }
        }
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: self.waiter.note(),
            ..report(self.strategy)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};

    use netsonde_model::spec::IoStrategy;

    use super::{PlainRx, Rx, Sock};

    /// A stream read as iperf3 reads it: a block is gathered over as many reads
    /// as it takes while data is there, a short one ends when the socket is
    /// empty (that read counted), an empty socket would block, a closed one ends.
    #[test]
    fn a_ready_stream_is_read_a_block_at_a_time_as_nread_does() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut w = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (r, _) = l.accept().unwrap();
        let mut rx = PlainRx::new(IoStrategy::Copy, Sock::Tcp(&r), 3000, true).unwrap();
        let read = |rx: &mut PlainRx| {
            let mut seen = 0;
            let got = rx.recv(Sock::Tcp(&r), &mut |d, _| seen += d.len());
            got.map(|m| m.map(|m| (m.bytes, m.messages, m.calls, seen)))
        };
        let e = read(&mut rx).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);

        // A short block: what is there, then the read that finds it empty.
        w.write_all(&[7; 1000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(read(&mut rx).unwrap(), Some((1000, 1, 2, 1000)));

        // More than a block: one block, one message, and the rest next time.
        w.write_all(&[7; 2000]).unwrap();
        w.write_all(&[7; 2000]).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (bytes, messages, calls, seen) = read(&mut rx).unwrap().unwrap();
        assert_eq!((bytes, messages, seen), (3000, 1, 3000));
        assert!((1..=2).contains(&calls), "{calls}");
        assert_eq!(read(&mut rx).unwrap(), Some((1000, 1, 2, 1000)));

        drop(w);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert_eq!(read(&mut rx).unwrap(), None);
        let note = rx.report().note.unwrap();
        assert!(note.contains("iperf3 3.12"), "{note}");
    }
}
