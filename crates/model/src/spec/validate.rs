//! [`TestSpec::validate`]: every bound, then every combination of options.

use crate::units::{Bytes, Nanos};

use super::*;

impl TestSpec {
    /// Checks every bound and every combination; the first problem is returned.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check_bounds()?;
        self.check_combinations()
    }

    /// Every value within its range.
    fn check_bounds(&self) -> Result<(), SpecError> {
        let t = self.test;
        let check_size = |what, value: Bytes| {
            if value.0 == 0 || value > MAX_SIZE {
                Err(SpecError::SizeOutOfRange { what, value })
            } else {
                Ok(())
            }
        };
        check_size("--size", self.size)?;
        check_size("--request-size", self.request_size)?;
        check_size("--response-size", self.response_size)?;
        if let Some(w) = self.rcv_window {
            check_size("--rcv-window", w)?;
        }
        if let Some(w) = self.window {
            check_size("--window", w)?;
        }
        for &w in &self.flow_windows {
            check_size("--window", w)?;
        }
        if let Some(&d) = self.dscp.iter().find(|&&d| d > 63) {
            return Err(SpecError::BadDscp(d));
        }
        if let Some(p) = self.probe {
            self.validate_probe(p)?;
        }
        if self.duration < Nanos::from_millis(100) || self.duration > MAX_DURATION {
            return Err(SpecError::DurationOutOfRange {
                what: "--time",
                min: Nanos::from_millis(100),
                value: self.duration,
            });
        }
        if self.warmup > MAX_DURATION {
            return Err(SpecError::DurationOutOfRange {
                what: "--warmup",
                min: Nanos::ZERO,
                value: self.warmup,
            });
        }
        if let Some(i) = self.interval {
            if i < Nanos::from_millis(10) || i > MAX_DURATION {
                return Err(SpecError::DurationOutOfRange {
                    what: "--interval",
                    min: Nanos::from_millis(10),
                    value: i,
                });
            }
        }
        if let Some(v) = self.volume {
            if t.is_rr() {
                return Err(SpecError::NotApplicable {
                    option: "--bytes/--blockcount",
                    test: t,
                    why: "only stream tests end by volume",
                });
            }
            if v.0 == 0 {
                return Err(SpecError::ZeroVolume);
            }
        }
        if let Some(r) = self.rcv_timeout {
            if r < Nanos::from_millis(100) || r > MAX_DURATION {
                return Err(SpecError::DurationOutOfRange {
                    what: "--rcv-timeout",
                    min: Nanos::from_millis(100),
                    value: r,
                });
            }
        }
        if self.parallel == 0 || self.parallel > MAX_PARALLEL {
            return Err(SpecError::ParallelOutOfRange(self.parallel));
        }
        Ok(())
    }

    /// Every option on a test that takes it, and strategies on the side they work on.
    fn check_combinations(&self) -> Result<(), SpecError> {
        let t = self.test;
        if t.is_rr() && self.direction == Direction::Bidir {
            return Err(SpecError::NotApplicable {
                option: "--bidir",
                test: t,
                why: "a transaction already carries bytes both ways; use --request-size and --response-size",
            });
        }
        if t.is_rr() && self.direction == Direction::In {
            return Err(SpecError::NotApplicable {
                option: "--reverse",
                test: t,
                why: "the client always sends the request; swap --request-size and --response-size",
            });
        }
        if t.is_rr() && self.rate.is_some() {
            return Err(SpecError::NotApplicable {
                option: "--rate",
                test: t,
                why: "request/response tests run one transaction at a time per flow",
            });
        }
        if !t.is_tcp() {
            if self.mss.is_some() {
                return Err(SpecError::NotApplicable {
                    option: "--mss",
                    test: t,
                    why: "MSS is a TCP option",
                });
            }
            if self.congestion.is_some() {
                return Err(SpecError::NotApplicable {
                    option: "--congestion",
                    test: t,
                    why: "congestion control is a TCP option",
                });
            }
        }
        self.check_transport()?;
        if t == TestKind::UdpStream {
            let v = self.size.0;
            if !(UDP_HEADER_LEN..=MAX_UDP_PAYLOAD).contains(&v) {
                return Err(SpecError::DatagramSize {
                    min: UDP_HEADER_LEN,
                    max: MAX_UDP_PAYLOAD,
                    value: v,
                });
            }
        }
        if t == TestKind::UdpRr {
            for v in [self.request_size.0, self.response_size.0] {
                if v > MAX_UDP_PAYLOAD {
                    return Err(SpecError::DatagramSize {
                        min: 1,
                        max: MAX_UDP_PAYLOAD,
                        value: v,
                    });
                }
            }
        }
        if let Some(m) = self.mss {
            if !(88..=65_495).contains(&m) {
                return Err(SpecError::MssOutOfRange(m));
            }
        }
        if let Some(r) = self.rate {
            if !r.0.is_finite() || r.0 <= 0.0 {
                return Err(SpecError::BadRate(r));
            }
        }
        for (side, io, tx) in [("tx", self.tx_io, true), ("rx", self.rx_io, false)] {
            io.applies(t, tx)
                .map_err(|why| SpecError::IoNotApplicable {
                    side,
                    io,
                    test: t,
                    why,
                })?;
        }
        if self.rx_io == IoStrategy::Xdp && self.parallel > 1 {
            return Err(SpecError::IoNotApplicable {
                side: "rx",
                io: self.rx_io,
                test: t,
                why: "xdp binds one AF_XDP socket to the receiving interface's queue, for one flow",
            });
        }
        if self.verify && matches!(self.rx_io, IoStrategy::Zerocopy | IoStrategy::Splice) {
            return Err(SpecError::IoNotApplicable {
                side: "rx",
                io: self.rx_io,
                test: t,
                why:
                    "--verify needs the data in user space, which this strategy never copies there",
            });
        }
        if let Some(c) = &self.congestion {
            // TCP_CA_NAME_MAX is 16 including the terminating NUL.
            if c.is_empty()
                || c.len() > 15
                || !c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                return Err(SpecError::BadCongestion(c.clone()));
            }
        }
        Ok(())
    }

    /// The encrypted and multipath transports' options on the tests that
    /// take them.
    fn check_transport(&self) -> Result<(), SpecError> {
        let t = self.test;
        if let Some(n) = self.quic_streams {
            if t != TestKind::QuicStream {
                return Err(SpecError::NotApplicable {
                    option: "--quic-streams",
                    test: t,
                    why: "only quic-stream carries several streams on one connection",
                });
            }
            if !(1..=super::MAX_QUIC_STREAMS).contains(&n) {
                return Err(SpecError::QuicStreamsOutOfRange(n));
            }
        }
        if self.tls_resume && !matches!(t, TestKind::TlsCrr | TestKind::QuicCrr) {
            return Err(SpecError::NotApplicable {
                option: "--tls-resume",
                test: t,
                why: "only tls-crr and quic-crr open connections to resume",
            });
        }
        if !t.is_tls() && self.tls_suite.is_some() {
            return Err(SpecError::NotApplicable {
                option: "--tls-suite",
                test: t,
                why: "only the tls- tests take a suite (QUIC uses TLS 1.3's own)",
            });
        }
        let io_given = self.tx_io != IoStrategy::Copy || self.rx_io != IoStrategy::Copy;
        if t.is_tls() && io_given {
            return Err(SpecError::NotApplicable {
                option: "--io",
                test: t,
                why: "TLS writes and reads its own records over the copy path",
            });
        }
        if t.is_quic() && io_given {
            return Err(SpecError::NotApplicable {
                option: "--io",
                test: t,
                why: "QUIC's stack (quinn) does its own socket I/O, with GSO and GRO where the \
                      kernel has them (--no-gso turns them off)",
            });
        }
        if self.no_gso && t.is_tcp() {
            return Err(SpecError::NotApplicable {
                option: "--no-gso",
                test: t,
                why: "it turns off UDP's segmentation and receive offloads",
            });
        }
        if self.mptcp
            && !matches!(
                t,
                TestKind::TcpStream | TestKind::TcpRr | TestKind::TlsStream | TestKind::TlsRr
            )
        {
            return Err(SpecError::NotApplicable {
                option: "--mptcp",
                test: t,
                why: "MPTCP carries the stream and request/response tests' kept connections",
            });
        }
        if t.is_tls() && self.iperf3_io {
            return Err(SpecError::NotApplicable {
                option: "iperf3's reading",
                test: t,
                why: "iperf3 has no TLS test",
            });
        }
        Ok(())
    }

    fn validate_probe(&self, p: ProbeSpec) -> Result<(), SpecError> {
        if !self.test.is_stream() {
            return Err(SpecError::NotApplicable {
                option: "--probe",
                test: self.test,
                why: "probes measure latency beside a stream load; a request/response test is its own probe",
            });
        }
        if p.rate == 0 || p.rate > MAX_PROBE_RATE {
            return Err(SpecError::BadProbe(format!(
                "the rate must be between 1 and {MAX_PROBE_RATE} probes a second, got {}",
                p.rate
            )));
        }
        if p.idle < Nanos::from_millis(500) || p.idle > Nanos::from_secs(600) {
            return Err(SpecError::BadProbe(format!(
                "the idle phase must be between 500ms and 10 min, got {}",
                p.idle
            )));
        }
        let span = self.deadline().as_secs_f64();
        if span * f64::from(p.rate) * 3.0 > MAX_PROBES as f64 {
            return Err(SpecError::BadProbe(format!(
                "{} probes a second for {span:.0} s is more than {MAX_PROBES} probes; lower the rate",
                p.rate
            )));
        }
        Ok(())
    }
}
