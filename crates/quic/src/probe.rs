//! Whether a QUIC server answers at an address, before a test dials it.
//!
//! quinn's endpoint is an unconnected UDP socket: the ICMP port unreachable a
//! closed port sends back never reaches it, and a dial waits out its whole
//! handshake timeout (5 s) to say "no answer". A connected UDP socket hears
//! that ICMP as `ECONNREFUSED` on its next receive. What it sends is a
//! datagram of a version no QUIC speaks (0x?a?a?a?a is reserved for this, RFC
//! 9000 §15), padded to 1200 bytes: a server answers it with Version
//! Negotiation (§6), with no connection made or state kept.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// What came back.
#[derive(Debug)]
pub enum Answer {
    /// A QUIC server: a Version Negotiation packet echoing the probe's IDs.
    Negotiated,
    /// The port is closed: the host's ICMP port unreachable.
    Refused(io::Error),
    /// Nothing in the time allowed (a filter drops the probe, or a server
    /// that sends no Version Negotiation): the dial decides.
    Silent,
}

/// The reserved version the probe claims.
const GREASE: u32 = 0x1a2a_3a4a;
/// The smallest datagram a server must answer (RFC 9000 §14.1).
const MIN_INITIAL: usize = 1200;

/// The probe: a long header of version [`GREASE`] with the 8-byte connection
/// IDs `dcid` and `scid`, padded.
fn probe_packet(dcid: [u8; 8], scid: [u8; 8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(MIN_INITIAL);
    p.push(0xc0);
    p.extend_from_slice(&GREASE.to_be_bytes());
    p.push(8);
    p.extend_from_slice(&dcid);
    p.push(8);
    p.extend_from_slice(&scid);
    p.resize(MIN_INITIAL, 0);
    p
}

/// Whether `d` is a Version Negotiation packet answering a probe sent with
/// `dcid` and `scid` (which it swaps: its destination is the probe's source).
fn is_negotiation(d: &[u8], dcid: [u8; 8], scid: [u8; 8]) -> bool {
    d.len() >= 7 + 16
        && d[0] & 0x80 != 0
        && d[1..5] == [0, 0, 0, 0]
        && d[5] == 8
        && d[6..14] == scid
        && d[14] == 8
        && d[15..23] == dcid
}

/// Sends the probe to `addr` up to three times within `wait` and says what
/// came back. An error only where no socket could be made or connected.
pub fn probe(addr: SocketAddr, wait: Duration) -> io::Result<Answer> {
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse().expect("an address")
    } else {
        "[::]:0".parse().expect("an address")
    };
    let sock = UdpSocket::bind(local)?;
    sock.connect(addr)?;
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    let (dcid, scid) = (seed.to_be_bytes(), (!seed).to_be_bytes());
    let packet = probe_packet(dcid, scid);
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 1500];
    for _ in 0..3 {
        match sock.send(&packet) {
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                return Ok(Answer::Refused(e))
            }
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        let round = Instant::now() + wait / 3;
        loop {
            let left = round
                .min(deadline)
                .saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            sock.set_read_timeout(Some(left))?;
            match sock.recv(&mut buf) {
                Ok(n) if is_negotiation(&buf[..n], dcid, scid) => return Ok(Answer::Negotiated),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    return Ok(Answer::Refused(e))
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    break
                }
                Err(e) => return Err(e),
            }
        }
        if Instant::now() >= deadline {
            break;
        }
    }
    Ok(Answer::Silent)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A closed port on loopback answers with ICMP, heard at once; a
    /// quinn endpoint answers with Version Negotiation; a socket that reads
    /// and says nothing is silent.
    #[test]
    fn a_closed_port_is_refused_and_a_quic_server_negotiates() {
        let closed = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = closed.local_addr().unwrap();
        drop(closed);
        let t = Instant::now();
        let a = probe(addr, Duration::from_millis(900)).unwrap();
        assert!(matches!(a, Answer::Refused(_)), "{a:?}");
        assert!(
            t.elapsed() < Duration::from_millis(900),
            "{:?}",
            t.elapsed()
        );

        let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
        let a = probe(quiet.local_addr().unwrap(), Duration::from_millis(150)).unwrap();
        assert!(matches!(a, Answer::Silent), "{a:?}");

        // netsonde's QUIC perf server, for at most 10 s.
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let at = sock.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let server = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let limits = crate::PerfLimits {
                    connections: 1,
                    answer: Duration::from_secs(1),
                };
                let until = Instant::now() + Duration::from_secs(10);
                crate::perf_serve(sock, until, &stop, limits, Default::default())
            })
        };
        let a = probe(at, Duration::from_secs(3)).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = server.join();
        assert!(matches!(a, Answer::Negotiated), "{a:?}");
    }

    #[test]
    fn the_probe_is_a_padded_long_header_of_a_reserved_version() {
        let p = probe_packet([1; 8], [2; 8]);
        assert_eq!(p.len(), MIN_INITIAL);
        assert_eq!(p[0] & 0xc0, 0xc0);
        assert_eq!(
            u32::from_be_bytes(p[1..5].try_into().unwrap()) & 0x0f0f_0f0f,
            0x0a0a_0a0a
        );
        let mut vn = vec![0x80, 0, 0, 0, 0, 8];
        vn.extend_from_slice(&[2; 8]);
        vn.push(8);
        vn.extend_from_slice(&[1; 8]);
        vn.extend_from_slice(&1u32.to_be_bytes());
        assert!(is_negotiation(&vn, [1; 8], [2; 8]));
        assert!(!is_negotiation(&vn, [2; 8], [1; 8]));
    }
}
