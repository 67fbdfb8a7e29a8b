//! The probes of a load-latency test (`--probe`) and the server's answers to them.
//!
//! Each kind runs on a thread of its own at the client, one probe at a time, on a
//! fixed schedule from the test's start (`rate` a second): a probe whose answer
//! takes longer than the period delays the next, and the slots it covered are
//! skipped, not sent in a burst. Probes are a few dozen a second, so they use
//! plain blocking calls; their records are preallocated ([`Schedule::capacity`]).
//!
//! - [`tcp`]: one byte each way on a TCP connection kept for the test.
//! - [`udp`]: a 32-byte datagram the server echoes with its receive and send
//!   times ([`UDP_PROBE_LEN`]), so both one-way delays are known; sequence numbers
//!   match late answers, and one never answered is lost.
//! - [`connect`]: a new TCP connection per probe to the session's data port: its
//!   handshake, then the preamble and one byte each way.

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use netsonde_model::load::{ProbeKind, ProbeSample};
use netsonde_model::units::Nanos;
use netsonde_proto::message::{decode_preamble, encode_preamble, Token, PREAMBLE_LEN};
use socket2::{Domain, Protocol, Socket, Type};

use crate::{is_timeout, EngineError};

/// A UDP probe: magic, sequence number, the client's send time, the server's
/// receive and send times (wall clocks, ns since the epoch, big-endian).
pub const UDP_PROBE_LEN: usize = 32;
const UDP_MAGIC: &[u8; 4] = b"NSP1";

/// How long the UDP probe waits for stragglers once told to stop.
const STRAGGLERS: Duration = Duration::from_secs(1);
/// How long a new connection may take to connect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long the server waits for a probe connection's preamble and byte.
const FIRST_BYTES: Duration = Duration::from_secs(1);

/// When a kind's probes go out.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The test's start: probe `k` is due at `t0 + k * period`.
    pub t0: Instant,
    /// Between probes.
    pub period: Duration,
    /// No probe after this (the test's own deadline).
    pub hard_end: Instant,
    /// Set when the after phase is over.
    pub stop: Arc<AtomicBool>,
}

impl Schedule {
    /// The most probes this schedule can send: its records are allocated once.
    pub fn capacity(&self) -> usize {
        let span = self.hard_end.saturating_duration_since(self.t0);
        (span.as_nanos() / self.period.as_nanos().max(1)) as usize + 1
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || Instant::now() >= self.hard_end
    }

    /// Sleeps until probe `k` is due; `false` when the schedule ended first.
    fn wait(&self, k: u64) -> bool {
        let due = self.t0 + self.period.saturating_mul(k as u32);
        loop {
            if self.stopped() {
                return false;
            }
            let now = Instant::now();
            if now >= due {
                return true;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(50)));
        }
    }

    /// The next slot after one that ended at `now`: slots already past are skipped.
    fn next(&self, k: u64, now: Instant) -> u64 {
        let passed =
            now.saturating_duration_since(self.t0).as_nanos() / self.period.as_nanos().max(1);
        (k + 1).max(passed as u64 + 1)
    }

    fn since_t0(&self, at: Instant) -> Nanos {
        Nanos::from(at.saturating_duration_since(self.t0))
    }
}

fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i64)
        .unwrap_or(0)
}

fn sample(kind: ProbeKind, t: Nanos) -> ProbeSample {
    ProbeSample {
        kind,
        t,
        rtt: None,
        connect: None,
        up: None,
        down: None,
    }
}

/// Reads exactly `buf.len()` bytes from a socket whose read timeout is short,
/// until the schedule ends: `Ok(false)` then.
fn read_full(sock: &mut TcpStream, buf: &mut [u8], sch: &Schedule) -> Result<bool, EngineError> {
    let mut off = 0;
    while off < buf.len() {
        match sock.read(&mut buf[off..]) {
            Ok(0) => {
                return Err(EngineError::Io {
                    op: "probe read",
                    source: std::io::ErrorKind::UnexpectedEof.into(),
                })
            }
            Ok(n) => off += n,
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {
                if sch.stopped() {
                    return Ok(false);
                }
            }
            Err(e) => return Err(EngineError::io("probe read")(e)),
        }
    }
    Ok(true)
}

/// The kept-connection probe: one byte each way per probe. The socket must have
/// a short read timeout (the data sockets' wake-up). A probe still unanswered
/// when the schedule ends is not recorded.
pub fn tcp(mut sock: TcpStream, sch: &Schedule) -> Result<Vec<ProbeSample>, EngineError> {
    let mut out = Vec::with_capacity(sch.capacity());
    let mut k = 0;
    let mut byte = [0u8; 1];
    while out.len() < out.capacity() && sch.wait(k) {
        let sent = Instant::now();
        sock.write_all(b"p")
            .map_err(EngineError::io("probe send"))?;
        if !read_full(&mut sock, &mut byte, sch)? {
            break;
        }
        let now = Instant::now();
        let mut s = sample(ProbeKind::Tcp, sch.since_t0(sent));
        s.rtt = Some(Nanos::from(now - sent));
        out.push(s);
        k = sch.next(k, now);
    }
    let _ = sock.shutdown(std::net::Shutdown::Write);
    Ok(out)
}

/// The UDP probe on a connected socket: a datagram per slot, answers matched by
/// sequence number whenever they come; what never came back is lost.
pub fn udp(sock: UdpSocket, sch: &Schedule) -> Result<Vec<ProbeSample>, EngineError> {
    let cap = sch.capacity();
    let mut out: Vec<ProbeSample> = Vec::with_capacity(cap);
    let mut buf = [0u8; 64];
    let mut k = 0u64;
    let mut due = sch.t0;
    let mut stragglers: Option<Instant> = None;
    let mut answered = 0;
    loop {
        let now = Instant::now();
        if stragglers.is_none() && sch.stopped() {
            stragglers = Some(now + STRAGGLERS);
        }
        if let Some(until) = stragglers {
            if now >= until || answered == out.len() {
                break;
            }
        } else if now >= due && out.len() < cap {
            let seq = out.len() as u32;
            let mut d = [0u8; UDP_PROBE_LEN];
            d[..4].copy_from_slice(UDP_MAGIC);
            d[4..8].copy_from_slice(&seq.to_be_bytes());
            d[8..16].copy_from_slice(&wall_ns().to_be_bytes());
            let sent = Instant::now();
            match sock.send(&d) {
                Ok(_) => {}
                // A full socket buffer or an ICMP error: this probe is lost.
                Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::ConnectionRefused => {}
                Err(e) => return Err(EngineError::io("probe send")(e)),
            }
            out.push(sample(ProbeKind::Udp, sch.since_t0(sent)));
            k = sch.next(k, sent);
            due = sch.t0 + sch.period.saturating_mul(k as u32);
            continue;
        }
        let until = stragglers.unwrap_or(due).min(sch.hard_end + STRAGGLERS);
        let wait = until
            .saturating_duration_since(Instant::now())
            .clamp(Duration::from_millis(1), Duration::from_millis(200));
        sock.set_read_timeout(Some(wait))
            .map_err(EngineError::io("probe timeout"))?;
        match sock.recv(&mut buf) {
            Ok(n) if n == UDP_PROBE_LEN && &buf[..4] == UDP_MAGIC => {
                let back = Instant::now();
                let back_wall = wall_ns();
                let field =
                    |i: usize| i64::from_be_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
                let seq = u32::from_be_bytes(buf[4..8].try_into().expect("4 bytes")) as usize;
                if let Some(s) = out.get_mut(seq) {
                    if s.rtt.is_none() && field(8) != 0 {
                        let sent = sch.t0 + s.t.as_duration();
                        s.rtt = Some(Nanos::from(back.saturating_duration_since(sent)));
                        s.up = Some(field(16) - field(8));
                        s.down = Some(back_wall - field(24));
                        answered += 1;
                    }
                }
            }
            Ok(_) => {}
            Err(e)
                if is_timeout(&e)
                    || e.kind() == std::io::ErrorKind::ConnectionRefused
                    || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(EngineError::io("probe receive")(e)),
        }
    }
    Ok(out)
}

/// The new-connection probe: per slot, a connection to `addr` (timed), the
/// preamble for flow `flow` with one byte, one byte back (timed), close.
pub fn connect(
    addr: SocketAddr,
    token: Token,
    flow: u32,
    sch: &Schedule,
) -> Result<Vec<ProbeSample>, EngineError> {
    let mut out = Vec::with_capacity(sch.capacity());
    let mut first = [0u8; PREAMBLE_LEN + 1];
    first[..PREAMBLE_LEN].copy_from_slice(&encode_preamble(&token, flow));
    first[PREAMBLE_LEN] = b'p';
    let mut k = 0;
    while out.len() < out.capacity() && sch.wait(k) {
        let start = Instant::now();
        let mut s = sample(ProbeKind::Connect, sch.since_t0(start));
        let sock = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))
            .map_err(EngineError::io("probe socket"))?;
        let _ = sock.set_tcp_nodelay(true);
        let connected = sock.connect_timeout(&addr.into(), CONNECT_TIMEOUT);
        let up = Instant::now();
        if connected.is_ok() {
            s.connect = Some(Nanos::from(up - start));
            let mut t: TcpStream = sock.into();
            t.set_read_timeout(Some(crate::sockopt::WAKE))
                .map_err(EngineError::io("probe timeout"))?;
            let mut byte = [0u8; 1];
            let sent = Instant::now();
            let answered = t.write_all(&first).is_ok()
                && matches!(read_full(&mut t, &mut byte, sch), Ok(true));
            if answered {
                s.rtt = Some(Nanos::from(Instant::now() - sent));
            } else if sch.stopped() {
                break;
            }
        } else if sch.stopped() {
            break;
        }
        out.push(s);
        k = sch.next(k, Instant::now());
    }
    Ok(out)
}

/// Server: answers the kept-connection probe, a byte for a byte, until the
/// client closes or `stop`.
pub fn echo_tcp(mut sock: TcpStream, stop: &AtomicBool) {
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        match sock.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if sock.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if is_timeout(&e) || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Server: echoes UDP probes with its receive and send times until `stop`.
/// The socket is connected to the client, so nothing else reaches it.
pub fn echo_udp(sock: UdpSocket, stop: &AtomicBool) {
    let mut buf = [0u8; 64];
    let _ = sock.set_read_timeout(Some(crate::sockopt::WAKE));
    while !stop.load(Ordering::Relaxed) {
        match sock.recv(&mut buf) {
            Ok(n) if n == UDP_PROBE_LEN && &buf[..4] == UDP_MAGIC => {
                buf[16..24].copy_from_slice(&wall_ns().to_be_bytes());
                buf[24..32].copy_from_slice(&wall_ns().to_be_bytes());
                let _ = sock.send(&buf[..UDP_PROBE_LEN]);
            }
            _ => {}
        }
    }
}

/// Server: answers new-connection probes on the session's data listener (whose
/// accept wakes at the data sockets' timeout) until `stop`. A connection from
/// another address, without the session's token and flow number, or silent for
/// a second, is dropped.
pub fn answer_connects(
    listener: &TcpListener,
    token: Token,
    flow: u32,
    peer: IpAddr,
    stop: &AtomicBool,
) {
    let mut first = [0u8; PREAMBLE_LEN + 1];
    while !stop.load(Ordering::Relaxed) {
        let Ok((mut s, from)) = listener.accept() else {
            continue;
        };
        if from.ip() != peer {
            continue;
        }
        let _ = s.set_nodelay(true);
        let _ = s.set_read_timeout(Some(FIRST_BYTES));
        if s.read_exact(&mut first).is_err() {
            continue;
        }
        let pre: &[u8; PREAMBLE_LEN] = first[..PREAMBLE_LEN].try_into().expect("preamble length");
        if decode_preamble(pre) != Some((token, flow)) {
            continue;
        }
        let _ = s.write_all(&first[PREAMBLE_LEN..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(rate: u32, span: Duration) -> Schedule {
        let t0 = Instant::now();
        Schedule {
            t0,
            period: Duration::from_secs(1) / rate,
            hard_end: t0 + span,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    #[test]
    fn a_slow_probe_skips_the_slots_it_covered() {
        let s = schedule(10, Duration::from_secs(10));
        assert_eq!(s.capacity(), 101);
        // Probe 0 answered 350 ms in: slots 1..3 are gone, the next is 4.
        assert_eq!(s.next(0, s.t0 + Duration::from_millis(350)), 4);
        // Answered within its own slot: the next slot.
        assert_eq!(s.next(5, s.t0 + Duration::from_millis(520)), 6);
    }

    #[test]
    fn udp_probes_are_echoed_with_both_ends_times() {
        let srv = UdpSocket::bind("127.0.0.1:0").unwrap();
        let cli = UdpSocket::bind("127.0.0.1:0").unwrap();
        srv.connect(cli.local_addr().unwrap()).unwrap();
        cli.connect(srv.local_addr().unwrap()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let echo = {
            let stop = stop.clone();
            std::thread::spawn(move || echo_udp(srv, &stop))
        };
        let sch = schedule(50, Duration::from_secs(5));
        let halt = sch.stop.clone();
        let t = std::thread::spawn(move || udp(cli, &sch).unwrap());
        std::thread::sleep(Duration::from_millis(300));
        halt.store(true, Ordering::Relaxed);
        let out = t.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        echo.join().unwrap();
        assert!((10..=17).contains(&out.len()), "{}", out.len());
        for s in &out {
            let rtt = s.rtt.expect("loopback loses nothing").0 as i64;
            let (up, down) = (s.up.unwrap(), s.down.unwrap());
            // One clock: each one-way delay is positive and no longer than the
            // round trip (the wall and monotonic clocks are read a few ns apart).
            assert!(
                up >= 0 && down >= 0 && up + down <= rtt + 1_000_000,
                "{s:?}"
            );
        }
        // On the 20 ms grid: never two in one slot (a late one is not made up
        // for with a burst).
        let slots: Vec<u64> = out.iter().map(|s| s.t.0 / 20_000_000).collect();
        assert!(slots.windows(2).all(|w| w[1] > w[0]), "{slots:?}");
    }

    #[test]
    fn connection_probes_need_the_token_and_flow() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        socket2::SockRef::from(&l)
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let addr = l.local_addr().unwrap();
        let token = Token([7; 16]);
        let stop = Arc::new(AtomicBool::new(false));
        let srv = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                answer_connects(&l, token, 9, "127.0.0.1".parse().unwrap(), &stop)
            })
        };
        let sch = schedule(20, Duration::from_secs(5));
        let halt = sch.stop.clone();
        let good = std::thread::spawn(move || connect(addr, token, 9, &sch).unwrap());
        std::thread::sleep(Duration::from_millis(200));
        halt.store(true, Ordering::Relaxed);
        let out = good.join().unwrap();
        assert!(out.len() >= 3, "{out:?}");
        assert!(
            out.iter().all(|s| s.connect.is_some() && s.rtt.is_some()),
            "{out:?}"
        );
        // A wrong flow number gets no answer.
        let sch = schedule(20, Duration::from_millis(600));
        let bad = connect(addr, token, 8, &sch).unwrap();
        stop.store(true, Ordering::Relaxed);
        srv.join().unwrap();
        assert!(
            !bad.is_empty() && bad.iter().all(|s| s.rtt.is_none()),
            "{bad:?}"
        );
    }
}
