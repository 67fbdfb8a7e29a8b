//! A thread's own descriptor table (`unshare(CLONE_FILES)`), holding only the
//! descriptors it works on.
//!
//! The kernel looks a descriptor up once per call (`fdget`). While a table is
//! shared by several threads, as every thread of a process shares it, each
//! look-up takes a reference on the file and each call's end drops it: two
//! atomic operations per descriptor per call. A table that one thread alone
//! uses is read without them. iperf3 3.12 is one thread, so every `select(2)`
//! and `read(2)` its server makes is the cheaper kind; a netsonde server has a
//! thread per task. An iperf3 client's `-l 1K` against netsonde's server, a
//! `select` over 3 sockets and a 1 KiB `read` per message, measured 0.936-0.949
//! of `iperf3 -s` with the shared table and 1.049-1.115 with a table of its own
//! (interleaved rounds, medians of 7 and 9). Every flow thread takes one: at
//! 64-byte UDP datagrams the shared table's reference counting (`fput`) was
//! 18 ns of the sending core's 1.15 us per datagram.

#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::mpsc;

/// Gives the calling thread a descriptor table of its own that holds `keep`
/// (under the same numbers) and standard input, output and error, and nothing
/// else; the table the process's other threads share no longer holds `keep`.
///
/// The caller must own every descriptor in `keep` and hold no other: each
/// other descriptor open now is closed in its new table, and each of `keep` in
/// the shared one, so a descriptor it holds but did not name would be closed
/// under it, and another thread that used one of `keep`'s numbers would find
/// it closed. Descriptors the thread opens afterwards are its own, and are
/// closed when it drops them or ends.
///
/// On an error the thread still shares the process's table and `keep` is
/// untouched in it (unless the error came from closing the other descriptors
/// of the new table, which then may hold some of them until the thread ends).
pub fn own_table(keep: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut keep: Vec<RawFd> = keep.iter().map(AsRawFd::as_raw_fd).collect();
    keep.sort_unstable();
    keep.dedup();
    // A thread that still shares the table closes `keep` in it once this one
    // has a copy of its own; until then the numbers stay taken there.
    let (tx, rx) = mpsc::channel::<bool>();
    let closing = keep.clone();
    let closer = std::thread::Builder::new()
        .name("netsonde-fd".into())
        // It only closes descriptors: a small stack, so that many flow
        // threads starting at once under a tight address-space limit can.
        .stack_size(64 * 1024)
        .spawn(move || {
            if rx.recv() == Ok(true) {
                for fd in closing.into_iter().filter(|fd| *fd > 2) {
                    // SAFETY: the caller owns `fd` and works on it only through
                    // its own table from now on: this copy is nobody's.
                    unsafe { libc::close(fd) };
                }
            }
        })?;
    // SAFETY: unshare(CLONE_FILES) copies the calling thread's table; every
    // descriptor stays valid under its number in both.
    let unshared = unsafe { libc::unshare(libc::CLONE_FILES) };
    let err = (unshared == -1).then(io::Error::last_os_error);
    let _ = tx.send(err.is_none());
    let _ = closer.join();
    if let Some(e) = err {
        return Err(e);
    }
    close_all_but(&keep)
}

/// Closes every descriptor of the calling thread's (own) table above 2 that is
/// not in `keep` (ascending): `close_range(2)` over each gap.
fn close_all_but(keep: &[RawFd]) -> io::Result<()> {
    let mut from: u32 = 3;
    for fd in keep.iter().filter_map(|fd| u32::try_from(*fd).ok()) {
        if fd > from {
            close_range(from, fd - 1)?;
        }
        from = from.max(fd.saturating_add(1));
    }
    close_range(from, u32::MAX)
}

fn close_range(first: u32, last: u32) -> io::Result<()> {
    // SAFETY: close_range only closes descriptors; the caller's table is its
    // own and these are none it holds (own_table's contract).
    let rc = unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
    if rc == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::{AsFd, AsRawFd};

    use super::own_table;

    /// Whether `fd` is open in the calling thread's table.
    fn open_here(fd: i32) -> bool {
        std::path::Path::new(&format!("/proc/thread-self/fd/{fd}")).exists()
    }

    #[test]
    fn a_thread_with_its_own_table_keeps_its_sockets_and_the_process_loses_them() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut peer = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut sock, _) = l.accept().unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let (fd, other_fd) = (sock.as_raw_fd(), other.as_raw_fd());
        let worker = std::thread::spawn(move || {
            own_table(&[sock.as_fd()]).unwrap();
            let kept = open_here(fd);
            // Another thread's descriptor is not in this table.
            let other_gone = !open_here(other_fd);
            let mut got = [0u8; 5];
            sock.read_exact(&mut got).unwrap();
            sock.write_all(b"pong!").unwrap();
            // Dropped here: the only copy left, so the peer sees the end.
            drop(sock);
            (kept, other_gone, got)
        });
        peer.write_all(b"ping!").unwrap();
        let (kept, other_gone, got) = worker.join().unwrap();
        assert!(kept && other_gone, "kept {kept}, other gone {other_gone}");
        assert_eq!(&got, b"ping!");
        // Had the process's table kept a copy, the socket would still be open
        // and this read would time out rather than end.
        peer.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut rest = Vec::new();
        peer.read_to_end(&mut rest)
            .expect("the peer sees the end once the thread drops the socket");
        assert_eq!(rest, b"pong!");
        // The other thread's listener is still open in the process's table.
        assert!(open_here(other_fd));
        drop(other);
    }
}
