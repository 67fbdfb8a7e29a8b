//! A load-latency test's probes (`--probe`): the client's three probe threads
//! ([`Probing`]) and the server's answers ([`Answering`]), each stopped and joined
//! on every way out of a session.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use netsonde_engine::probe::{self, Schedule};
use netsonde_engine::EngineError;
use netsonde_model::load::ProbeSample;
use netsonde_model::spec::{ProbeFlows, TestSpec};
use netsonde_proto::Token;

/// The server's answers to the probes, until dropped.
pub(crate) struct Answering {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Answering {
    /// Answers the kept connection, the UDP socket and new connections on the
    /// data listener, each on a thread of its own.
    pub(crate) fn start(
        tcp: TcpStream,
        udp: UdpSocket,
        listener: Arc<TcpListener>,
        token: Token,
        connect_flow: u32,
        peer: IpAddr,
    ) -> Answering {
        let stop = Arc::new(AtomicBool::new(false));
        let s = [stop.clone(), stop.clone(), stop.clone()];
        let [a, b, c] = s;
        let threads = vec![
            std::thread::spawn(move || probe::echo_tcp(tcp, &a)),
            std::thread::spawn(move || probe::echo_udp(udp, &b)),
            std::thread::spawn(move || {
                probe::answer_connects(&listener, token, connect_flow, peer, &c)
            }),
        ];
        Answering { stop, threads }
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

type ProbeThread = JoinHandle<Result<Vec<ProbeSample>, EngineError>>;

/// The client's probes, from [`Probing::start`] to [`Probing::finish`] (or drop).
pub(crate) struct Probing {
    /// The test's start on the client's timeline.
    pub(crate) t0: Instant,
    stop: Arc<AtomicBool>,
    threads: Vec<ProbeThread>,
}

/// The probe sockets the client opened during setup.
pub(crate) struct ProbeConnections {
    pub(crate) tcp: TcpStream,
    pub(crate) udp: UdpSocket,
    /// Where new-connection probes go.
    pub(crate) data_addr: SocketAddr,
    pub(crate) token: Token,
    pub(crate) flows: ProbeFlows,
}

impl Probing {
    /// Starts every probe kind now, `rate` a second, bounded by the test's deadline.
    pub(crate) fn start(spec: &TestSpec, c: ProbeConnections) -> Probing {
        let t0 = Instant::now();
        let rate = spec.probe.map_or(1, |p| p.rate).max(1);
        let stop = Arc::new(AtomicBool::new(false));
        let sch = Schedule {
            t0,
            period: Duration::from_secs(1) / rate,
            hard_end: t0 + spec.deadline().as_duration(),
            stop: stop.clone(),
        };
        let (s1, s2, s3) = (sch.clone(), sch.clone(), sch);
        let ProbeConnections {
            tcp,
            udp,
            data_addr,
            token,
            flows,
        } = c;
        let threads: Vec<ProbeThread> = vec![
            std::thread::spawn(move || probe::tcp(tcp, &s1)),
            std::thread::spawn(move || probe::udp(udp, &s2)),
            std::thread::spawn(move || probe::connect(data_addr, token, flows.connect, &s3)),
        ];
        Probing { t0, stop, threads }
    }

    /// Stops the probes and returns every probe in time order.
    pub(crate) fn finish(mut self) -> Result<Vec<ProbeSample>, EngineError> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        let mut error = None;
        for t in self.threads.drain(..) {
            match t.join() {
                Ok(Ok(v)) => all.extend(v),
                Ok(Err(e)) => {
                    error.get_or_insert(e);
                }
                Err(_) => {
                    error.get_or_insert(EngineError::Io {
                        op: "probe thread",
                        source: std::io::Error::other("a probe thread panicked"),
                    });
                }
            }
        }
        if let Some(e) = error {
            return Err(e);
        }
        all.sort_by_key(|s| (s.t, s.kind));
        Ok(all)
    }
}

impl Drop for Probing {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
