//! What a server allows, and how it reports what it did: abuse limits with safe
//! defaults, per-address connection caps, and one structured log line per session.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use netsonde_model::spec::TestSpec;
use netsonde_model::units::{BitRate, Bytes, Nanos};

/// Limits a server enforces on every test. A spec beyond one is refused with a
/// message naming the limit, so the client knows what to change.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Longest warm-up plus measured time.
    pub max_duration: Nanos,
    /// Most parallel streams per direction.
    pub max_parallel: u32,
    /// Largest message, request, response or window.
    pub max_size: Bytes,
    /// Highest pacing rate per stream (an unpaced sender, `-b 0`, is allowed).
    pub max_rate: BitRate,
    /// Tests running at once (others are told "busy" with the time left).
    pub max_tests: usize,
    /// Control connections at once.
    pub max_connections: usize,
    /// Control connections at once from one address.
    pub max_per_address: usize,
    /// Buffer memory one session may take (see [`crate::budget`]).
    pub max_session_memory: Bytes,
    /// Buffer memory all running sessions may take together.
    pub max_memory: Bytes,
    /// Descriptors the process holds outside sessions and control connections
    /// (the `--metrics` endpoint's connections): reserved, so a session never
    /// takes them.
    pub other_fds: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_duration: Nanos::from_secs(300),
            max_parallel: 64,
            max_size: Bytes(64 * Bytes::MIB),
            max_rate: BitRate(100e9),
            max_tests: 1,
            max_connections: 64,
            max_per_address: 8,
            max_session_memory: crate::budget::default_memory(),
            max_memory: crate::budget::default_memory(),
            other_fds: 0,
        }
    }
}

/// Server limits under which no test could run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitsError {
    /// A limit of zero.
    #[error("{0} must be above 0")]
    Zero(&'static str),
    /// All sessions together may hold less than one.
    #[error("--max-memory ({total}) must be at least --max-session-memory ({session})")]
    MemoryBelowSession {
        /// `--max-memory`.
        total: Bytes,
        /// `--max-session-memory`.
        session: Bytes,
    },
}

/// A test beyond the server's limits: what the client is told.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OverLimit {
    /// Warm-up plus time too long.
    #[error("server limit: warm-up plus --time at most {max} (asked {asked})")]
    Duration {
        /// The limit.
        max: Nanos,
        /// Asked.
        asked: Nanos,
    },
    /// Too many streams.
    #[error("server limit: --parallel at most {max} (asked {asked})")]
    Parallel {
        /// The limit.
        max: u32,
        /// Asked.
        asked: u32,
    },
    /// A message, request, response or window too large.
    #[error("server limit: {what} at most {max} (asked {asked})")]
    Size {
        /// The flag.
        what: &'static str,
        /// The limit.
        max: Bytes,
        /// Asked.
        asked: Bytes,
    },
    /// A pacing rate too high.
    #[error("server limit: --rate at most {max} (asked {asked})")]
    Rate {
        /// The limit.
        max: BitRate,
        /// Asked.
        asked: BitRate,
    },
}

impl OverLimit {
    /// The iperf3 error (`i_errno`) that names this limit to an iperf3 client,
    /// whose own message then says which parameter was refused.
    pub fn iperf3_errno(&self) -> u32 {
        use netsonde_proto::iperf3 as ip;
        match self {
            OverLimit::Duration { .. } => ip::IE_DURATION,
            OverLimit::Parallel { .. } => ip::IE_NUM_STREAMS,
            OverLimit::Size { what, .. } if what.contains("window") => ip::IE_BUF_SIZE,
            OverLimit::Size { .. } => ip::IE_BLOCK_SIZE,
            OverLimit::Rate { .. } => ip::IE_RECV_PARAMS,
        }
    }
}

impl Limits {
    /// Refuses limits under which no test could run, naming the flag.
    pub fn validate(&self) -> Result<(), LimitsError> {
        let zero = |flag: &'static str| Err(LimitsError::Zero(flag));
        if self.max_duration == Nanos(0) {
            return zero("--max-duration");
        }
        if self.max_parallel == 0 {
            return zero("--max-parallel");
        }
        if self.max_size == Bytes(0) {
            return zero("--max-size");
        }
        if self.max_rate.bps() <= 0.0 {
            return zero("--max-rate");
        }
        if self.max_tests == 0 {
            return zero("--max-tests");
        }
        if self.max_connections == 0 {
            return zero("--max-connections");
        }
        if self.max_per_address == 0 {
            return zero("--max-per-address");
        }
        if self.max_session_memory == Bytes(0) {
            return zero("--max-session-memory");
        }
        if self.max_memory < self.max_session_memory {
            return Err(LimitsError::MemoryBelowSession {
                total: self.max_memory,
                session: self.max_session_memory,
            });
        }
        Ok(())
    }

    /// The first limit `spec` exceeds.
    pub fn check(&self, spec: &TestSpec) -> Result<(), OverLimit> {
        let total = spec.span();
        if total > self.max_duration {
            return Err(OverLimit::Duration {
                max: self.max_duration,
                asked: total,
            });
        }
        if spec.parallel > self.max_parallel {
            return Err(OverLimit::Parallel {
                max: self.max_parallel,
                asked: spec.parallel,
            });
        }
        for (what, v) in [
            ("--size", Some(spec.size)),
            ("--request-size", Some(spec.request_size)),
            ("--response-size", Some(spec.response_size)),
            ("--window", spec.window),
            ("--rcv-window", spec.rcv_window),
        ] {
            if let Some(v) = v {
                if v > self.max_size {
                    return Err(OverLimit::Size {
                        what,
                        max: self.max_size,
                        asked: v,
                    });
                }
            }
        }
        if let Some(r) = spec.rate {
            if r.bps() > self.max_rate.bps() {
                return Err(OverLimit::Rate {
                    max: self.max_rate,
                    asked: r,
                });
            }
        }
        Ok(())
    }
}

/// Counts control connections per address.
#[derive(Debug, Default)]
pub struct AddressTable {
    counts: Mutex<HashMap<IpAddr, usize>>,
}

impl AddressTable {
    /// Takes a slot for `ip` unless it already has `max`.
    pub fn enter(&self, ip: IpAddr, max: usize) -> bool {
        let mut m = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= max {
            return false;
        }
        *n += 1;
        true
    }

    /// Takes a slot past the cap: a connection let in to see whether it is a
    /// running session's stream (freed with [`AddressTable::leave`] as any).
    pub fn force_enter(&self, ip: IpAddr) {
        let mut m = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *m.entry(ip).or_insert(0) += 1;
    }

    /// Frees a slot.
    pub fn leave(&self, ip: IpAddr) {
        let mut m = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                m.remove(&ip);
            }
        }
    }
}

/// Bounds how many log lines a second the server writes, so a flood of refused or
/// abandoned connections cannot fill the disk: past [`LogLimiter::PER_SECOND`]
/// lines in a second the rest are counted, and the count is written once the
/// second is over.
#[derive(Debug, Default)]
pub struct LogLimiter {
    state: Mutex<(u64, u32, u64)>,
}

impl LogLimiter {
    /// Lines written per second at most.
    pub const PER_SECOND: u32 = 20;

    /// Whether a line may be written in second `now_s`; when a new second begins
    /// after suppressed lines, also how many were suppressed.
    pub fn admit(&self, now_s: u64) -> (bool, Option<u64>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (second, written, suppressed) = &mut *s;
        let mut report = None;
        if *second != now_s {
            if *suppressed > 0 {
                report = Some(*suppressed);
            }
            *second = now_s;
            *written = 0;
            *suppressed = 0;
        }
        if *written < Self::PER_SECOND {
            *written += 1;
            (true, report)
        } else {
            *suppressed += 1;
            (false, report)
        }
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// `key=value` pairs.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
    /// Nothing (the embedded server).
    Off,
}

/// One session's record.
#[derive(Debug, Clone, Default)]
pub struct SessionLog {
    /// Peer address.
    pub peer: String,
    /// The control protocol the peer spoke: `netsonde` or `iperf3` (empty:
    /// netsonde).
    pub protocol: &'static str,
    /// `ok`, `refused`, `failed` or `dropped`.
    pub outcome: &'static str,
    /// Why, when not ok.
    pub reason: String,
    /// Whether the peer proved the key.
    pub authenticated: bool,
    /// Test parameters, when a setup arrived.
    pub test: Option<TestSpec>,
    /// Test bytes this server moved.
    pub bytes: u64,
    /// Session length.
    pub seconds: f64,
}

impl SessionLog {
    /// The line, without a newline.
    pub fn line(&self, format: LogFormat) -> Option<String> {
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let t = self.test.as_ref();
        let get = |f: &dyn Fn(&TestSpec) -> String| t.map(f).unwrap_or_default();
        let fields: Vec<(&str, serde_json::Value)> = vec![
            ("ts", serde_json::json!((ts * 1000.0).round() / 1000.0)),
            ("peer", serde_json::json!(self.peer)),
            (
                "protocol",
                serde_json::json!(if self.protocol.is_empty() {
                    "netsonde"
                } else {
                    self.protocol
                }),
            ),
            ("outcome", serde_json::json!(self.outcome)),
            ("reason", serde_json::json!(self.reason)),
            ("auth", serde_json::json!(self.authenticated)),
            (
                "test",
                serde_json::json!(get(&|s| s.test.name().to_string())),
            ),
            (
                "direction",
                serde_json::json!(get(&|s| s.direction.name().to_string())),
            ),
            (
                "size",
                serde_json::json!(t.map(|s| if s.test.is_rr() {
                    s.request_size.0
                } else {
                    s.size.0
                })),
            ),
            ("parallel", serde_json::json!(t.map(|s| s.parallel))),
            (
                "time_s",
                serde_json::json!(t.map(|s| s.duration.as_secs_f64())),
            ),
            ("bytes", serde_json::json!(self.bytes)),
            (
                "seconds",
                serde_json::json!((self.seconds * 1000.0).round() / 1000.0),
            ),
        ];
        match format {
            LogFormat::Off => None,
            LogFormat::Json => Some(
                serde_json::Value::Object(
                    fields
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
                .to_string(),
            ),
            LogFormat::Text => Some(
                fields
                    .into_iter()
                    .filter(|(_, v)| !v.is_null() && v.as_str() != Some(""))
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) if s.contains([' ', '"', '=']) => {
                            format!("{k}={}", serde_json::Value::String(s))
                        }
                        serde_json::Value::String(s) => format!("{k}={s}"),
                        other => format!("{k}={other}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        }
    }
}

/// Takes a finished session's report (the binary stores it); called on the
/// session's thread once its results are exchanged.
#[derive(Clone)]
pub struct SessionSink(
    pub std::sync::Arc<dyn Fn(netsonde_model::result::TestReport) + Send + Sync>,
);

impl std::fmt::Debug for SessionSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionSink")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;

    #[test]
    fn limits_name_what_they_refuse() {
        let l = Limits::default();
        let mut s = TestSpec::new(TestKind::TcpStream);
        assert!(l.check(&s).is_ok());
        s.duration = Nanos::from_secs(3600);
        assert!(l
            .check(&s)
            .unwrap_err()
            .to_string()
            .contains("--time at most 300.00 s"));
        let mut s = TestSpec::new(TestKind::UdpStream);
        s.rate = Some(BitRate(1e12));
        assert!(l
            .check(&s)
            .unwrap_err()
            .to_string()
            .contains("--rate at most"));
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.parallel = 200;
        assert!(l
            .check(&s)
            .unwrap_err()
            .to_string()
            .contains("--parallel at most 64"));
        s.parallel = 1;
        s.window = Some(Bytes(Bytes::GIB));
        assert!(l
            .check(&s)
            .unwrap_err()
            .to_string()
            .contains("--window at most 64 MiB"));
    }

    #[test]
    fn nonsense_limits_are_refused_by_flag() {
        assert!(Limits::default().validate().is_ok());
        for (l, flag) in [
            (
                Limits {
                    max_duration: Nanos(0),
                    ..Limits::default()
                },
                "--max-duration",
            ),
            (
                Limits {
                    max_parallel: 0,
                    ..Limits::default()
                },
                "--max-parallel",
            ),
            (
                Limits {
                    max_tests: 0,
                    ..Limits::default()
                },
                "--max-tests",
            ),
            (
                Limits {
                    max_memory: Bytes(1),
                    ..Limits::default()
                },
                "--max-memory",
            ),
        ] {
            assert!(
                l.validate().unwrap_err().to_string().contains(flag),
                "{flag}"
            );
        }
    }

    #[test]
    fn log_lines_are_bounded_per_second_and_the_rest_counted() {
        let l = LogLimiter::default();
        let admitted = (0..100).filter(|_| l.admit(7).0).count();
        assert_eq!(admitted, LogLimiter::PER_SECOND as usize);
        assert_eq!(l.admit(8), (true, Some(80)));
        assert_eq!(l.admit(8), (true, None));
    }

    #[test]
    fn address_table_caps_each_address() {
        let t = AddressTable::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        assert!(t.enter(ip, 2) && t.enter(ip, 2));
        assert!(!t.enter(ip, 2));
        assert!(t.enter("192.0.2.2".parse().unwrap(), 2));
        t.leave(ip);
        assert!(t.enter(ip, 2));
    }

    #[test]
    fn log_lines_in_both_formats() {
        let log = SessionLog {
            peer: "192.0.2.1:4000".into(),
            outcome: "refused",
            reason: "server busy".into(),
            test: Some(TestSpec::new(TestKind::TcpRr)),
            ..SessionLog::default()
        };
        let text = log.line(LogFormat::Text).unwrap();
        assert!(
            text.contains(
                "peer=192.0.2.1:4000 protocol=netsonde outcome=refused reason=\"server busy\""
            ),
            "{text}"
        );
        assert!(text.contains("test=tcp-rr"), "{text}");
        let iperf3 = SessionLog {
            protocol: "iperf3",
            ..log.clone()
        };
        assert!(iperf3
            .line(LogFormat::Text)
            .unwrap()
            .contains("protocol=iperf3"));
        let v: serde_json::Value =
            serde_json::from_str(&log.line(LogFormat::Json).unwrap()).unwrap();
        assert_eq!(v["outcome"], "refused");
        assert_eq!(v["size"], 1);
        assert!(log.line(LogFormat::Off).is_none());
    }
}
