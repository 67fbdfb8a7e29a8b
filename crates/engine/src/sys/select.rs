//! A wait for readiness over a fixed set of sockets with `select(2)`, the
//! call iperf3 waits for its streams with: each stream in the read set or the
//! write set, as it wants.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use rustix::event::{
    fd_set_insert, fd_set_num_elements, fd_set_remove, FdSetElement, FdSetIter, Timespec,
};

/// What a stream waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Something to read (data, or the peer's close).
    Read,
    /// Room to write.
    Write,
    /// Nothing: it is no longer waited on.
    Nothing,
}

/// The sockets, each under a descriptor of its own that the set holds open
/// (so every descriptor in it is open for as long as it can be waited on),
/// the sets to wait for and the sets the last wait found ready.
///
/// The first `also` are sockets that others read (an iperf3 session's
/// listening socket and control connection, which iperf3's `select` covers
/// beside its streams): each is waited on until it is readable, then left to
/// its reader. The rest are the streams, known by their place among them.
pub struct SelectSet {
    fds: Vec<OwnedFd>,
    also: usize,
    /// Every descriptor in ascending order, with its stream's place (`None`
    /// for a socket another thread reads): a ready set is read in one walk
    /// beside it, as the kernel writes it.
    by_fd: Vec<(RawFd, Option<usize>)>,
    /// What each stream waits for now.
    wants: Vec<Want>,
    /// How many streams wait to write: without any, no write set is passed.
    writers: usize,
    read: Halves,
    write: Halves,
    nfds: i32,
}

/// One `fd_set` to wait for and its copy the wait fills in.
struct Halves {
    wanted: Vec<FdSetElement>,
    ready: Vec<FdSetElement>,
}

impl SelectSet {
    /// A set of `also` (waited on to read) and the streams `socks`, each waited
    /// on as it wants.
    pub fn new<'a>(
        also: Vec<OwnedFd>,
        socks: impl Iterator<Item = (BorrowedFd<'a>, Want)>,
    ) -> io::Result<SelectSet> {
        let also_len = also.len();
        let mut fds = also;
        let mut wants = Vec::new();
        for (s, want) in socks {
            fds.push(s.try_clone_to_owned()?);
            wants.push(want);
        }
        let nfds = fds.iter().map(|f| f.as_raw_fd() + 1).max().unwrap_or(0);
        let len = fd_set_num_elements(fds.len(), nfds);
        let empty = || Halves {
            wanted: vec![FdSetElement::default(); len],
            ready: vec![FdSetElement::default(); len],
        };
        let mut by_fd: Vec<(RawFd, Option<usize>)> = fds
            .iter()
            .enumerate()
            .map(|(k, f)| (f.as_raw_fd(), k.checked_sub(also_len)))
            .collect();
        by_fd.sort_unstable();
        let mut set = SelectSet {
            fds,
            also: also_len,
            by_fd,
            wants: vec![Want::Nothing; wants.len()],
            writers: 0,
            read: empty(),
            write: empty(),
            nfds,
        };
        for f in &set.fds[..also_len] {
            fd_set_insert(&mut set.read.wanted, f.as_raw_fd());
        }
        for (i, want) in wants.into_iter().enumerate() {
            set.want(i, want);
        }
        Ok(set)
    }

    /// Waits for the `i`th stream as `want` says from now on.
    #[inline]
    pub fn want(&mut self, i: usize, want: Want) {
        let (Some(f), Some(was)) = (self.fds.get(self.also + i), self.wants.get_mut(i)) else {
            return;
        };
        if *was == want {
            return;
        }
        let fd = f.as_raw_fd();
        match *was {
            Want::Read => fd_set_remove(&mut self.read.wanted, fd),
            Want::Write => {
                fd_set_remove(&mut self.write.wanted, fd);
                self.writers -= 1;
            }
            Want::Nothing => {}
        }
        match want {
            Want::Read => fd_set_insert(&mut self.read.wanted, fd),
            Want::Write => {
                fd_set_insert(&mut self.write.wanted, fd);
                self.writers += 1;
            }
            Want::Nothing => {}
        }
        *was = want;
    }

    /// Stops waiting for the `i`th stream.
    pub fn remove(&mut self, i: usize) {
        self.want(i, Want::Nothing);
    }

    /// Waits up to `timeout` for any of the sockets still wanted to be ready
    /// (or at its end, or failed), as iperf3 does: the sets copied, then one
    /// call.
    pub fn wait(&mut self, timeout: &Timespec) -> io::Result<usize> {
        self.read.ready.copy_from_slice(&self.read.wanted);
        // With no writers the write set is empty, and so is its copy.
        self.write.ready.copy_from_slice(&self.write.wanted);
        let write = (self.writers > 0).then_some(&mut self.write.ready[..]);
        // SAFETY: every descriptor in the sets is one of `self.fds`, which
        // this set owns, so each is open for the call.
        let n = unsafe {
            rustix::event::select(
                self.nfds,
                Some(&mut self.read.ready),
                write,
                None,
                Some(timeout),
            )
        }?;
        if self.also > 0 {
            // A socket another thread reads is its reader's once it is readable.
            let (by_fd, ready) = (&self.by_fd, &self.read.ready);
            for (fd, _) in in_set(by_fd, ready).filter(|(_, place)| place.is_none()) {
                fd_set_remove(&mut self.read.wanted, fd);
            }
        }
        Ok(n as usize)
    }

    /// The streams the last wait found readable, by their place among them.
    pub fn readable(&self) -> impl Iterator<Item = usize> + '_ {
        in_set(&self.by_fd, &self.read.ready).filter_map(|(_, place)| place)
    }

    /// The streams the last wait found writable, by their place among them.
    pub fn writable(&self) -> impl Iterator<Item = usize> + '_ {
        in_set(&self.by_fd, &self.write.ready).filter_map(|(_, place)| place)
    }
}

/// The entries of `by_fd` (ascending) whose descriptor is in `set`: one walk
/// of both, so a round costs the number of sockets, not its square.
fn in_set<'a>(
    by_fd: &'a [(RawFd, Option<usize>)],
    set: &'a [FdSetElement],
) -> impl Iterator<Item = (RawFd, Option<usize>)> + 'a {
    let mut set = FdSetIter::new(set).peekable();
    by_fd.iter().copied().filter(move |(fd, _)| {
        while set.next_if(|s| s < fd).is_some() {}
        set.next_if_eq(fd).is_some()
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::{AsFd, OwnedFd};

    use rustix::event::Timespec;

    use super::{SelectSet, Want};

    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let w = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (w, l.accept().unwrap().0)
    }

    fn reading<'a>(
        socks: &'a [&'a TcpStream],
    ) -> impl Iterator<Item = (std::os::fd::BorrowedFd<'a>, Want)> + 'a {
        socks.iter().map(|s| (s.as_fd(), Want::Read))
    }

    const SOON: Timespec = Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };

    /// Streams are known by their place; a socket another thread reads wakes
    /// the wait once, then is left to its reader; a removed stream is not
    /// waited for.
    #[test]
    fn a_wait_names_ready_streams_and_leaves_other_sockets_to_their_readers() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut w0, r0) = pair(&l);
        let (mut w1, r1) = pair(&l);
        let (mut wc, rc) = pair(&l);
        let control = OwnedFd::from(rc);
        let mut set = SelectSet::new(vec![control], reading(&[&r0, &r1])).unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 0);
        assert_eq!(set.readable().count(), 0);

        w1.write_all(b"x").unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.readable().collect::<Vec<_>>(), vec![1]);

        // The control connection, readable and never read here: once.
        wc.write_all(b"end").unwrap();
        set.remove(1);
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.readable().count(), 0);
        assert_eq!(set.wait(&SOON).unwrap(), 0);

        w0.write_all(b"y").unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.readable().collect::<Vec<_>>(), vec![0]);

        // Places are the order given, whatever the descriptors' numbers.
        let (_w2, r2) = pair(&l);
        let mut set = SelectSet::new(Vec::new(), reading(&[&r2, &r1, &r0])).unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 2);
        let mut ready: Vec<usize> = set.readable().collect();
        ready.sort_unstable();
        assert_eq!(ready, vec![1, 2]);
    }

    /// A stream that waits to write is found writable while its buffer has
    /// room and not once it is full; moved to the read set, it is found
    /// readable; a stream that wants nothing is not waited on.
    #[test]
    fn a_stream_is_waited_on_to_write_or_to_read_as_it_wants() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let (mut w0, r0) = pair(&l);
        let (w1, _r1) = pair(&l);
        let mut set = SelectSet::new(
            Vec::new(),
            [(r0.as_fd(), Want::Read), (w1.as_fd(), Want::Write)].into_iter(),
        )
        .unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.writable().collect::<Vec<_>>(), vec![1]);
        assert_eq!(set.readable().count(), 0);

        // Fill the writer's buffers: no longer writable.
        w1.set_nonblocking(true).unwrap();
        let chunk = [0u8; 65536];
        while (&w1).write(&chunk).is_ok() {}
        assert_eq!(set.wait(&SOON).unwrap(), 0);
        assert_eq!(set.writable().count(), 0);

        // The other stream readable; the writer now waits to read.
        w0.write_all(b"x").unwrap();
        set.want(1, Want::Read);
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.readable().collect::<Vec<_>>(), vec![0]);
        set.want(0, Want::Nothing);
        assert_eq!(set.wait(&SOON).unwrap(), 0);
    }
}
