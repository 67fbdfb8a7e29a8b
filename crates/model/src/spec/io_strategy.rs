//! How a flow moves its bytes through the kernel: the I/O strategies a spec
//! names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::{SpecError, TestKind};

/// How a flow moves its bytes through the kernel (`--io`, `--tx-io`, `--rx-io`).
/// `docs/IO-STRATEGIES.md` explains each and what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoStrategy {
    /// Blocking read/write, send/recv: the baseline.
    #[default]
    Copy,
    /// Non-blocking sockets; waits in edge-triggered epoll.
    Epoll,
    /// Many messages per system call: writev for TCP, sendmmsg/recvmmsg with UDP
    /// GSO/GRO for UDP.
    Batch,
    /// MSG_ZEROCOPY sends with completion accounting; MSG_TRUNC receives (the data
    /// is never copied to user space).
    Zerocopy,
    /// sendfile from a memory file (TCP sends).
    Sendfile,
    /// splice through a pipe: from a memory file when sending, to nowhere when
    /// receiving (TCP).
    Splice,
    /// io_uring with registered buffers and batched submissions.
    Uring,
    /// Non-blocking spin with SO_BUSY_POLL / SO_PREFER_BUSY_POLL: no interrupts,
    /// no sleeping, one busy core.
    Busypoll,
    /// Calibrates the candidates on the live connection and keeps the best.
    Auto,
    /// AF_XDP (UDP receives): an XDP program on the receiving interface hands the
    /// test's datagrams to an AF_XDP socket before the kernel's IP and UDP layers;
    /// the flow reads them from shared memory rings.
    Xdp,
}

impl IoStrategy {
    /// Every strategy.
    pub const ALL: [IoStrategy; 10] = [
        IoStrategy::Copy,
        IoStrategy::Epoll,
        IoStrategy::Batch,
        IoStrategy::Zerocopy,
        IoStrategy::Sendfile,
        IoStrategy::Splice,
        IoStrategy::Uring,
        IoStrategy::Busypoll,
        IoStrategy::Auto,
        IoStrategy::Xdp,
    ];

    /// Command-line and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            IoStrategy::Copy => "copy",
            IoStrategy::Epoll => "epoll",
            IoStrategy::Batch => "batch",
            IoStrategy::Zerocopy => "zerocopy",
            IoStrategy::Sendfile => "sendfile",
            IoStrategy::Splice => "splice",
            IoStrategy::Uring => "uring",
            IoStrategy::Busypoll => "busypoll",
            IoStrategy::Auto => "auto",
            IoStrategy::Xdp => "xdp",
        }
    }

    /// Whether it applies to a test on the sending (`tx`) or receiving side.
    pub fn applies(self, test: TestKind, tx: bool) -> Result<(), &'static str> {
        use IoStrategy::*;
        match (test, self) {
            (_, Copy | Epoll | Busypoll) => Ok(()),
            (TestKind::UdpStream, Xdp) if tx => {
                Err("xdp receives; its datagrams are sent by the kernel's stack")
            }
            (_, Xdp) if test != TestKind::UdpStream => {
                Err("xdp receives UDP streams; TCP and request/response need the kernel's stack")
            }
            (TestKind::TcpCrr | TestKind::TlsCrr | TestKind::QuicCrr, _) => Err(
                "a connect-request-response test opens a connection per transaction; only \
                 copy, epoll and busypoll apply",
            ),
            (TestKind::TcpRr | TestKind::UdpRr | TestKind::TlsRr | TestKind::QuicRr, _) => {
                Err("request/response runs one message at a time; use copy, epoll or busypoll")
            }
            (TestKind::UdpStream, Sendfile | Splice) => Err("sendfile and splice move TCP streams"),
            (TestKind::TcpStream, Sendfile) if !tx => Err("sendfile only sends"),
            _ => Ok(()),
        }
    }

    /// The sending and receiving strategies of a flow asked to run `self` on both
    /// ends (`--io`, a sweep's or a search's strategy axis): itself on each side
    /// it applies to, and `copy` on a side it does not when it applies to the
    /// other (sendfile only sends, xdp only receives), so the pair measures the
    /// one-sided strategy against the baseline's other end. A strategy that fits
    /// neither side stays on both, for [`super::TestSpec::validate`] to say why.
    pub fn sides(self, test: TestKind) -> (IoStrategy, IoStrategy) {
        let (tx, rx) = (self.applies(test, true), self.applies(test, false));
        match (tx.is_ok(), rx.is_ok()) {
            (true, false) => (self, IoStrategy::Copy),
            (false, true) => (IoStrategy::Copy, self),
            _ => (self, self),
        }
    }
}

impl fmt::Display for IoStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for IoStrategy {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IoStrategy::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| SpecError::UnknownIo(s.to_string()))
    }
}
