//! The warnings a report carries beside its figures ([`Warning`]).

use super::*;

/// A condition that makes a figure less trustworthy than it looks. A closed set:
/// each has a hint that says what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Warning {
    /// The kernel granted less socket buffer than asked for.
    WindowCapped {
        /// Which end.
        side: String,
        /// Requested.
        requested: Bytes,
        /// What `getsockopt` read back (Linux reports double the usable size).
        granted: Bytes,
        /// The sysctl that capped it and its value (`net.core.rmem_max = 4194304`),
        /// when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<String>,
    },
    /// TCP byte counts at the two ends differ: a bug or a vanished peer.
    ByteCountMismatch {
        /// Direction.
        dir: FlowDir,
        /// Sender total.
        sent: Bytes,
        /// Receiver total.
        received: Bytes,
    },
    /// Some core was almost fully busy: the result may be CPU-bound.
    CpuSaturated {
        /// Which end.
        side: String,
        /// The busiest core.
        core: u32,
        /// Its busy share.
        busy: Percent,
    },
    /// Too few transactions or bytes to mean much.
    TooShort {
        /// What was short.
        what: String,
    },
    /// A UDP sender sent well below the rate it was asked for: the loss and the
    /// goodput describe a slower test than the one asked.
    SenderShortfall {
        /// The direction.
        dir: FlowDir,
        /// The rate asked, all flows.
        asked: BitRate,
        /// The rate the sender reached.
        sent: BitRate,
    },
    /// A UDP sender ran unpaced (`-b 0`): it sends as fast as it can, so the loss
    /// says how much faster the sender was than the receiver (or a queue), not
    /// what the path loses.
    UnpacedUdp {
        /// The direction.
        dir: FlowDir,
    },
    /// The kernel counted UDP datagrams dropped on a host during the test: where
    /// the loss happened.
    KernelDrops {
        /// Whose host (`host` when both ends share it).
        side: String,
        /// Dropped because a receiving socket's buffer was full (`RcvbufErrors`):
        /// the receiver could not keep up.
        rcvbuf: u64,
        /// Not queued by a sender (`SndbufErrors`).
        sndbuf: u64,
    },
    /// Datagrams were sent or received in batches (GSO, sendmmsg, io_uring, GRO),
    /// so their timestamps are per batch and the jitter figure says nothing about
    /// the path.
    JitterFromBatches {
        /// The direction.
        dir: FlowDir,
        /// The batching strategies.
        strategies: String,
    },
    /// The receiver discarded the bytes without copying them to the application
    /// (MSG_TRUNC, splice to /dev/null): the goodput is above what an application
    /// that reads its data would see.
    DiscardingReceiver {
        /// Which end received.
        side: String,
        /// Its strategy.
        strategy: String,
    },
    /// The interval rates did not settle, or settled late: the summary averages over
    /// a ramp or an unstable path.
    NotSteady {
        /// The direction.
        dir: FlowDir,
        /// From where on the rates stayed within the tolerance; `None` if never.
        settled_after: Option<Nanos>,
        /// The measured time.
        measured: Nanos,
        /// Coefficient of variation of the rates after settling.
        cv: f64,
    },
    /// Nothing, or almost nothing, a UDP sender sent arrived: the goodput and the
    /// verdict describe a test that did not get through.
    TotalLoss {
        /// The direction.
        dir: FlowDir,
        /// Datagrams sent.
        sent: u64,
        /// Datagrams received.
        received: u64,
    },
    /// The host was busy with work that is neither end's: system-wide CPU figures
    /// include it, the test's own do not.
    ForeignLoad {
        /// Which end's host.
        side: String,
        /// Busy cores that are neither end's.
        cores: f64,
        /// Busy cores system-wide.
        busy_cores: f64,
        /// The other processes that ran most, each as `name (pid N): C cores, last
        /// on core K`.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        top: Vec<String>,
    },
}

impl Warning {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            Warning::WindowCapped { .. } => {
                "raise net.core.rmem_max / net.core.wmem_max on both hosts, or ask for less"
                    .into()
            }
            Warning::ByteCountMismatch { .. } => {
                "the peer stopped early or the run was cut; rerun and check both logs".into()
            }
            Warning::CpuSaturated { .. } => {
                "the result may be CPU-bound: pin threads with --affinity, use fewer streams, or compare service demand"
                    .into()
            }
            Warning::TooShort { .. } => "run longer with --time".into(),
            Warning::NotSteady { .. } => {
                "the rates ramped or swung: raise --warmup past the settling point, run longer \
                 with --time, or look at the interval lines"
                    .into()
            }
            Warning::SenderShortfall { .. } => {
                "the sender could not keep up: use a batching strategy (--io batch), fewer \
                 flows per core, or ask for a rate it can send (-b)"
                    .into()
            }
            Warning::UnpacedUdp { .. } => {
                "for the path's loss, pace the sender below what the receiver keeps up with (-b)"
                    .into()
            }
            Warning::KernelDrops { .. } => {
                "a receiver that cannot keep up: a larger receive buffer (-w, net.core.rmem_max), \
                 a batching receiver (--rx-io batch), or a lower rate (-b)"
                    .into()
            }
            Warning::JitterFromBatches { .. } => {
                "for a jitter figure, send and receive one datagram per call (--io copy)".into()
            }
            Warning::DiscardingReceiver { .. } => {
                "for what an application would see, receive with --rx-io copy or batch".into()
            }
            Warning::TotalLoss { .. } => {
                "the datagrams did not get through: pace the sender below the path's rate \
                 (-b), and keep datagrams within the MTU (-l; a datagram loses every fragment \
                 with any one of them)"
                    .into()
            }
            Warning::ForeignLoad { .. } => {
                "another process was busy on this host: service demand counts the test's own \
                 threads; stop the other load, or pin the test away from it with --affinity"
                    .into()
            }
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::WindowCapped {
                side,
                requested,
                granted,
                cap,
            } => write!(
                f,
                "{side}: window {requested} requested, kernel granted {granted} (reported \
                 doubled){}",
                cap.as_ref()
                    .map(|c| format!(": capped at {c}"))
                    .unwrap_or_default()
            ),
            Warning::ByteCountMismatch {
                dir,
                sent,
                received,
            } => write!(
                f,
                "{}: sender counted {} B, receiver {} B",
                dir.name(),
                sent.0,
                received.0
            ),
            Warning::NotSteady {
                dir,
                settled_after,
                measured,
                cv,
            } => match settled_after {
                Some(t) => write!(
                    f,
                    "{}: not steady: the interval rates settled only after {t} of {measured} \
                     (CV {:.1}% after)",
                    dir.name(),
                    cv * 100.0
                ),
                None => write!(
                    f,
                    "{}: not steady: the interval rates never settled within 15% over {measured}",
                    dir.name()
                ),
            },
            Warning::SenderShortfall { dir, asked, sent } => write!(
                f,
                "{}: the sender reached {sent} of the {asked} asked ({:.0}%)",
                dir.name(),
                100.0 * sent.bps() / asked.bps().max(1.0)
            ),
            Warning::KernelDrops {
                side,
                rcvbuf,
                sndbuf,
            } => write!(
                f,
                "{side}: the kernel dropped {rcvbuf} datagram(s) at full receive buffers \
                 (RcvbufErrors) and {sndbuf} at full send buffers (SndbufErrors)"
            ),
            Warning::UnpacedUdp { dir } => write!(
                f,
                "{}: the UDP sender was not paced (-b 0): its loss is the receiver's shortfall, not the path's",
                dir.name()
            ),
            Warning::JitterFromBatches { dir, strategies } => write!(
                f,
                "{}: jitter is not meaningful: datagrams moved in batches ({strategies})",
                dir.name()
            ),
            Warning::DiscardingReceiver { side, strategy } => write!(
                f,
                "{side}: the receiver ({strategy}) discarded the data without copying it: the \
                 goodput is above what an application would see"
            ),
            Warning::ForeignLoad {
                side,
                cores,
                busy_cores,
                top,
            } => {
                write!(
                    f,
                    "{side}: {cores:.2} of {busy_cores:.2} busy cores on the host were neither \
                     end's (foreign load)"
                )?;
                if !top.is_empty() {
                    write!(f, "; most: {}", top.join(", "))?;
                }
                Ok(())
            }
            Warning::CpuSaturated { side, core, busy } => {
                write!(f, "{side}: core {core} was {busy} busy")
            }
            Warning::TooShort { what } => write!(f, "too short: {what}"),
            Warning::TotalLoss {
                dir,
                sent,
                received,
            } => write!(
                f,
                "{}: total loss: {received} of {sent} datagrams arrived ({:.2}%)",
                dir.name(),
                100.0 * *received as f64 / (*sent).max(1) as f64
            ),
        }
    }
}
