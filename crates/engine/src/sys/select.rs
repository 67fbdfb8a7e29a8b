//! A wait for readability over a fixed set of sockets with `select(2)`, the
//! call iperf3's server waits for its streams with.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd, RawFd};

use rustix::event::{
    fd_set_insert, fd_set_num_elements, fd_set_remove, FdSetElement, FdSetIter, Timespec,
};

/// The sockets, each under a descriptor of its own that the set holds open
/// (so every descriptor in it is open for as long as it can be waited on),
/// the set to wait for and the set the last wait found ready.
///
/// The first `also` are sockets that others read (an iperf3 session's
/// listening socket and control connection, which iperf3's `select` covers
/// beside its streams): each is waited on until it is readable, then left to
/// its reader. The rest are the streams, known by their place among them.
pub struct ReadSet {
    fds: Vec<OwnedFd>,
    also: usize,
    /// Every descriptor in ascending order, with its stream's place (`None`
    /// for a socket another thread reads): a ready set is read in one walk
    /// beside it, as the kernel writes it.
    by_fd: Vec<(RawFd, Option<usize>)>,
    wanted: Vec<FdSetElement>,
    ready: Vec<FdSetElement>,
    nfds: i32,
}

impl ReadSet {
    /// A set of `also` and the streams `socks`, every one waited for.
    pub fn new<'a>(
        also: Vec<OwnedFd>,
        socks: impl Iterator<Item = BorrowedFd<'a>>,
    ) -> io::Result<ReadSet> {
        let also_len = also.len();
        let mut fds = also;
        for s in socks {
            fds.push(s.try_clone_to_owned()?);
        }
        let nfds = fds.iter().map(|f| f.as_raw_fd() + 1).max().unwrap_or(0);
        let len = fd_set_num_elements(fds.len(), nfds);
        let mut wanted = vec![FdSetElement::default(); len];
        for f in &fds {
            fd_set_insert(&mut wanted, f.as_raw_fd());
        }
        let mut by_fd: Vec<(RawFd, Option<usize>)> = fds
            .iter()
            .enumerate()
            .map(|(k, f)| (f.as_raw_fd(), k.checked_sub(also_len)))
            .collect();
        by_fd.sort_unstable();
        Ok(ReadSet {
            ready: wanted.clone(),
            fds,
            also: also_len,
            by_fd,
            wanted,
            nfds,
        })
    }

    /// Stops waiting for the `i`th stream.
    pub fn remove(&mut self, i: usize) {
        if let Some(f) = self.fds.get(self.also + i) {
            fd_set_remove(&mut self.wanted, f.as_raw_fd());
        }
    }

    /// Waits up to `timeout` for any of the sockets still wanted to be readable
    /// (or at its end, or failed), as iperf3 does: the set copied, then one call.
    pub fn wait(&mut self, timeout: &Timespec) -> io::Result<usize> {
        self.ready.copy_from_slice(&self.wanted);
        // SAFETY: every descriptor in the set is one of `self.fds`, which this
        // set owns, so each is open for the call.
        let n = unsafe {
            rustix::event::select(self.nfds, Some(&mut self.ready), None, None, Some(timeout))
        }?;
        if self.also > 0 {
            // A socket another thread reads is its reader's once it is readable.
            let (by_fd, ready) = (&self.by_fd, &self.ready);
            for (fd, _) in in_set(by_fd, ready).filter(|(_, place)| place.is_none()) {
                fd_set_remove(&mut self.wanted, fd);
            }
        }
        Ok(n as usize)
    }

    /// The streams the last wait found ready, by their place among them.
    pub fn ready(&self) -> impl Iterator<Item = usize> + '_ {
        in_set(&self.by_fd, &self.ready).filter_map(|(_, place)| place)
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

    use super::ReadSet;

    fn pair(l: &TcpListener) -> (TcpStream, TcpStream) {
        let w = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        (w, l.accept().unwrap().0)
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
        let mut set = ReadSet::new(vec![control], [r0.as_fd(), r1.as_fd()].into_iter()).unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 0);
        assert_eq!(set.ready().count(), 0);

        w1.write_all(b"x").unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.ready().collect::<Vec<_>>(), vec![1]);

        // The control connection, readable and never read here: once.
        wc.write_all(b"end").unwrap();
        set.remove(1);
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.ready().count(), 0);
        assert_eq!(set.wait(&SOON).unwrap(), 0);

        w0.write_all(b"y").unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 1);
        assert_eq!(set.ready().collect::<Vec<_>>(), vec![0]);

        // Places are the order given, whatever the descriptors' numbers.
        let (_w2, r2) = pair(&l);
        let mut set =
            ReadSet::new(Vec::new(), [r2.as_fd(), r1.as_fd(), r0.as_fd()].into_iter()).unwrap();
        assert_eq!(set.wait(&SOON).unwrap(), 2);
        let mut ready: Vec<usize> = set.ready().collect();
        ready.sort_unstable();
        assert_eq!(ready, vec![1, 2]);
    }
}
