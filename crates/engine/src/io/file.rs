//! sendfile and splice: TCP bytes that never pass through a user-space buffer. The
//! source is a memory file (memfd) holding the message pattern; `sendfile` moves it
//! to the socket in one call, `splice` through a pipe in two. Receiving with splice
//! moves socket data into a pipe and from there to /dev/null.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use netsonde_model::result::IoReport;
use netsonde_model::spec::IoStrategy;
use rustix::pipe::{splice, SpliceFlags};

use super::{report, setup, unsupported, IoError, Moved, Rx, Sock, Tx};

/// Bytes per call.
const CHUNK: usize = 1 << 20;

/// sendfile or splice sender.
pub struct FileTx {
    strategy: IoStrategy,
    file: OwnedFd,
    len: usize,
    size: usize,
    pos: usize,
    pipe: Option<(OwnedFd, OwnedFd)>,
    in_pipe: usize,
}

fn memfd(size: usize) -> io::Result<(OwnedFd, usize)> {
    let fd = rustix::fs::memfd_create(c"netsonde-payload", rustix::fs::MemfdFlags::CLOEXEC)?;
    // Whole messages, at least CHUNK beyond any start position within one message.
    let per = CHUNK.div_ceil(size) + 1;
    let mut msg = vec![0u8; size];
    crate::fill_pattern(&mut msg);
    let mut f = std::fs::File::from(fd);
    for _ in 0..per {
        io::Write::write_all(&mut f, &msg)?;
    }
    Ok((OwnedFd::from(f), per * size))
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    // A 1 MiB pipe (the default limit for unprivileged users; root may go beyond).
    let _ = rustix::pipe::fcntl_setpipe_size(&w, CHUNK);
    Ok((r, w))
}

impl FileTx {
    /// Builds it (TCP only).
    pub fn new(strategy: IoStrategy, sock: Sock<'_>, size: usize) -> Result<FileTx, IoError> {
        if matches!(sock, Sock::Udp(_)) {
            return Err(unsupported(
                strategy,
                "sendfile and splice move TCP streams",
            ));
        }
        let (file, len) = memfd(size).map_err(setup(strategy))?;
        let pipe = if strategy == IoStrategy::Splice {
            Some(pipe().map_err(setup(strategy))?)
        } else {
            None
        };
        Ok(FileTx {
            strategy,
            file,
            len,
            size,
            pos: 0,
            pipe,
            in_pipe: 0,
        })
    }
}

impl Tx for FileTx {
    #[inline]
    fn send(&mut self, sock: Sock<'_>, _seq: u64, _tx_ns: u64) -> io::Result<Moved> {
        let Sock::Tcp(s) = sock else {
            unreachable!("built for TCP only")
        };
        let count = CHUNK.min(self.len - self.pos);
        let (n, calls) = match &self.pipe {
            None => {
                let mut off = self.pos as u64;
                let n = rustix::fs::sendfile(s.as_fd(), self.file.as_fd(), Some(&mut off), count)?;
                (n, 1)
            }
            Some((r, w)) => {
                let mut calls = 0;
                if self.in_pipe == 0 {
                    let mut off = self.pos as u64;
                    self.in_pipe = splice(
                        self.file.as_fd(),
                        Some(&mut off),
                        w.as_fd(),
                        None,
                        count,
                        SpliceFlags::MOVE,
                    )?;
                    calls += 1;
                }
                let n = splice(
                    r.as_fd(),
                    None,
                    s.as_fd(),
                    None,
                    self.in_pipe,
                    SpliceFlags::MOVE | SpliceFlags::MORE,
                )?;
                self.in_pipe -= n;
                (n, calls + 1)
            }
        };
        // `pos` is where, within a message, the next byte to reach the socket lies;
        // the pipe's contents always start there, so both paths advance alike.
        let total = self.pos + n;
        self.pos = total % self.size;
        Ok(Moved {
            bytes: n as u64,
            messages: (total / self.size) as u64,
            calls,
        })
    }

    fn finish(&mut self, _sock: Sock<'_>) -> IoReport {
        report(self.strategy)
    }

    fn set_pos(&mut self, pos: usize) {
        // Bytes left in the pipe belong to the old position: drain them first.
        if let Some((r, _)) = &self.pipe {
            let mut scratch = [0u8; 16 << 10];
            while self.in_pipe > 0 {
                match rustix::io::read(r, &mut scratch) {
                    Ok(n) if n > 0 => self.in_pipe -= n.min(self.in_pipe),
                    _ => break,
                }
            }
            self.in_pipe = 0;
        }
        self.pos = pos % self.size.max(1);
    }
}

/// splice receiver: socket → pipe → /dev/null.
pub struct SpliceRx {
    pipe: (OwnedFd, OwnedFd),
    null: std::fs::File,
}

impl SpliceRx {
    /// Builds it (TCP only).
    pub fn new(sock: Sock<'_>) -> Result<SpliceRx, IoError> {
        if matches!(sock, Sock::Udp(_)) {
            return Err(unsupported(IoStrategy::Splice, "splice moves TCP streams"));
        }
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(setup(IoStrategy::Splice))?;
        Ok(SpliceRx {
            pipe: pipe().map_err(setup(IoStrategy::Splice))?,
            null,
        })
    }
}

impl Rx for SpliceRx {
    #[inline]
    fn recv(
        &mut self,
        sock: Sock<'_>,
        on: &mut dyn FnMut(&[u8], usize),
    ) -> io::Result<Option<Moved>> {
        let Sock::Tcp(s) = sock else {
            unreachable!("built for TCP only")
        };
        let (r, w) = (&self.pipe.0, &self.pipe.1);
        let n = splice(s.as_fd(), None, w.as_fd(), None, CHUNK, SpliceFlags::MOVE)?;
        if n == 0 {
            return Ok(None);
        }
        let mut left = n;
        let mut calls = 1;
        while left > 0 {
            left -= splice(
                r.as_fd(),
                None,
                self.null.as_fd(),
                None,
                left,
                SpliceFlags::MOVE,
            )?;
            calls += 1;
        }
        on(&[], n);
        Ok(Some(Moved {
            bytes: n as u64,
            messages: 1,
            calls,
        }))
    }

    fn report(&mut self) -> IoReport {
        IoReport {
            note: Some("splice to /dev/null: the data never reaches user space".into()),
            ..report(IoStrategy::Splice)
        }
    }
}
