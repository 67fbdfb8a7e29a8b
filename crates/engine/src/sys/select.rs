//! A wait for readability over a fixed set of sockets with `select(2)`, the
//! call iperf3's server waits for its streams with.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use rustix::event::{
    fd_set_insert, fd_set_num_elements, fd_set_remove, FdSetElement, FdSetIter, Timespec,
};

/// The sockets, each under a descriptor of its own that the set holds open
/// (so every descriptor in it is open for as long as it can be waited on),
/// the set to wait for and the set the last wait found ready.
pub struct ReadSet {
    fds: Vec<OwnedFd>,
    wanted: Vec<FdSetElement>,
    ready: Vec<FdSetElement>,
    nfds: i32,
}

impl ReadSet {
    /// A set of the sockets `socks`, every one waited for.
    pub fn new<'a>(socks: impl Iterator<Item = BorrowedFd<'a>>) -> io::Result<ReadSet> {
        let fds = socks
            .map(|s| s.try_clone_to_owned())
            .collect::<io::Result<Vec<OwnedFd>>>()?;
        let nfds = fds.iter().map(|f| f.as_raw_fd() + 1).max().unwrap_or(0);
        let len = fd_set_num_elements(fds.len(), nfds);
        let mut wanted = vec![FdSetElement::default(); len];
        for f in &fds {
            fd_set_insert(&mut wanted, f.as_raw_fd());
        }
        Ok(ReadSet {
            ready: wanted.clone(),
            fds,
            wanted,
            nfds,
        })
    }

    /// Stops waiting for the `i`th socket.
    pub fn remove(&mut self, i: usize) {
        if let Some(f) = self.fds.get(i) {
            fd_set_remove(&mut self.wanted, f.as_raw_fd());
            fd_set_remove(&mut self.ready, f.as_raw_fd());
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
        Ok(n as usize)
    }

    /// The sockets the last wait found ready, by their place in the set.
    pub fn ready(&self) -> impl Iterator<Item = usize> + '_ {
        FdSetIter::new(&self.ready)
            .filter_map(|fd| self.fds.iter().position(|f| f.as_raw_fd() == fd))
    }
}
