//! The verdict on a saturated flow thread: how its time split, where it ran,
//! and what to try ([`thread_verdict`]).

use super::{verdict, Bottleneck, BusyThread, CpuKind, Diagnosis, ThreadLoad};

/// A UDP sender's advice: datagrams are at most 64 KiB, so fewer calls per
/// byte come from batching, not from larger writes.
pub(super) const DATAGRAM_SENDER_ADVICE: &str =
    "fewer system calls per datagram: --io batch (sendmmsg) \
     or gso, larger datagrams (at most -l 63K; -l 1472 fits a 1500 B MTU unfragmented), or more \
     streams (-P 2) on more cores";

/// A TLS flow thread whose user time is at least this share of its busy time
/// is bound by its crypto: the records' sealing and opening are all the user
/// time such a thread has (the plain TCP loop's own is about 1% of it).
const ENCRYPTION_SHARE: f64 = 0.3;

/// A TLS flow bound by its crypto's advice.
const TLS_ADVICE: &str = "cheaper crypto per byte: an AES-GCM suite where the CPU has AES-NI \
     (--tls-suite TLS13_AES_128_GCM_SHA256), ChaCha20-Poly1305 where it has not; more streams \
     (-P 2) on more cores; or kernel TLS where the kernel has the tls module \
     (net.ipv4.tcp_available_ulp lists it)";

/// A QUIC flow bound by its user-space stack's advice.
const QUIC_ADVICE: &str = "less per-packet work in user space: keep GSO on (the default; \
     --no-gso makes every datagram a system call), larger messages (-l), more streams (-P 2) on \
     more cores; tls-stream leaves the packets to the kernel's TCP";

pub(super) fn thread_verdict(t: &ThreadLoad, also: &[String], datagrams: bool) -> Diagnosis {
    let kind = t.kind();
    let split = match (t.user, t.sys) {
        (Some(u), Some(s)) => format!(
            ": user {u:.0}%, system {s:.0}% (system includes the softirq work run in its \
             context: on loopback and veth, the receiving stack)"
        ),
        _ => String::new(),
    };
    let core = match (t.core, t.core_softirq) {
        (Some(c), Some(si)) => format!("; it last ran on core {c}, whose irq+softirq was {si:.0}%"),
        (Some(c), None) => format!("; it last ran on core {c}"),
        _ => String::new(),
    };
    let idle = match t.idle_cores {
        Some(i) if i >= 0.2 => {
            format!("; the host had {i:.1} idle cores: one thread, not the host, is the limit")
        }
        _ => String::new(),
    };
    let waited = match t.waited {
        Some(w) if w >= 1.0 => format!(
            " and waited {w:.1}% for a core (other threads or processes had it): it never \
             blocked, so it wanted a whole core"
        ),
        _ => String::new(),
    };
    let stolen = match t.stolen {
        Some(st) if st >= 1.0 => format!(
            "; the hypervisor took about {st:.1}% more from its core (steal time): a VM's \
             vCPU is not always on a physical core"
        ),
        _ => String::new(),
    };
    let also = if also.is_empty() {
        String::new()
    } else {
        format!("; also {}", also.join(", "))
    };
    let flows = t
        .flows
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",");
    // The sealing and opening as timed, when they were.
    let timed = |what: &str| match (t.crypto, t.handshakes) {
        (Some(k), Some(h)) => format!(
            " ({what} and the handshakes' key exchanges and signatures took {k:.0}% of the \
             interval, timed, the handshakes {h:.0}%)"
        ),
        (Some(k), None) => format!(" ({what} took {k:.0}% of the interval, timed)"),
        _ => String::new(),
    };
    let (crypto, crypto_advice) = match t.user {
        Some(u) if t.encrypts && u >= ENCRYPTION_SHARE * t.busy => (
            format!(
                "; its user time is the TLS records' encryption and decryption (rustls){}: \
                 encryption is the limit",
                timed("sealing and opening them")
            ),
            TLS_ADVICE,
        ),
        Some(u) if t.quic && u >= ENCRYPTION_SHARE * t.busy => (
            format!(
                "; its user time is QUIC's stack in user space (quinn: packets, their \
                 encryption{}, acknowledgements, congestion control): the user-space \
                 transport is the limit",
                timed("which")
            ),
            QUIC_ADVICE,
        ),
        _ => (String::new(), ""),
    };
    let advice = match (kind, t.role.as_str()) {
        _ if !crypto.is_empty() => crypto_advice,
        (Some(CpuKind::User), _) if t.verifies => {
            "--verify checks every byte in user space: leave it off to measure the path, or \
             spread the flows over cores (-P 2)"
        }
        (Some(CpuKind::User), _) => "less work per byte in the application: larger messages (-l)",
        (_, "sender") if datagrams => DATAGRAM_SENDER_ADVICE,
        (_, "sender") => {
            "fewer system calls and copies per byte: larger writes (-l 256K), --tx-io \
             zerocopy or sendfile; or more streams (-P 2) on more cores: one thread goes no \
             faster"
        }
        (_, "receiver") => {
            "a cheaper receive: --rx-io batch or uring, or more streams (-P 2) on more cores \
             (with RPS on a real NIC)"
        }
        _ => "more flows (-P 2) on more cores: one thread goes no faster",
    };
    verdict(
        Bottleneck::Cpu {
            side: t.side.clone(),
            core: t.core,
            cpu: kind,
            thread: Some(BusyThread {
                what: "flow thread".into(),
                flows: t.flows.clone(),
                busy: t.busy,
            }),
        },
        format!(
            "the {} flow thread of flow {flows} ({}) ran {:.1}% of the measured \
             interval{waited}{stolen}{split}{crypto}{core}{idle}{also}",
            t.side, t.role, t.busy
        ),
        advice,
    )
}
