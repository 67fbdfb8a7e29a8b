//! The verdict on a saturated flow thread: how its time split, where it ran,
//! and what to try ([`thread_verdict`]).

use netsonde_model::spec::{IoStrategy, TestSpec};

use netsonde_model::profile::Category;

use super::{verdict, Bottleneck, BusyThread, CpuKind, Diagnosis, ThreadLoad};
use crate::advice::{offer, Part, Try};

/// A UDP sender's advice: datagrams are at most 64 KiB, so fewer calls per
/// byte come from batching, not from larger writes.
pub(super) fn datagram_sender_advice(spec: Option<&TestSpec>) -> String {
    offer(
        spec,
        "fewer system calls per datagram",
        &[
            ("{} (sendmmsg, with GSO)", Try::Io(IoStrategy::Batch)),
            (
                "larger datagrams ({}, at most; 1472 fits a 1500 B MTU unfragmented)",
                Try::Size(63 * 1024),
            ),
            ("more streams on more cores ({})", Try::MoreStreams),
        ],
        "a sender that already batches its largest datagrams on every stream it has: a \
         faster core",
    )
}

/// A TLS flow thread whose user time is at least this share of its busy time
/// is bound by its crypto: the records' sealing and opening are all the user
/// time such a thread has (the plain TCP loop's own is about 1% of it).
const ENCRYPTION_SHARE: f64 = 0.3;

/// A TLS flow bound by its crypto's advice.
fn tls_advice(spec: Option<&TestSpec>) -> String {
    let parts = offer(
        spec,
        "cheaper crypto per byte",
        &[
            (
                "an AES-GCM suite where the CPU has AES-NI ({})",
                Try::TlsSuite("TLS13_AES_128_GCM_SHA256"),
            ),
            ("more streams on more cores ({})", Try::MoreStreams),
        ],
        "cheaper crypto per byte",
    );
    format!(
        "{parts}; ChaCha20-Poly1305 where the CPU has no AES-NI; or kernel TLS where the \
         kernel has the tls module (net.ipv4.tcp_available_ulp lists it)"
    )
}

/// A QUIC flow bound by its user-space stack's advice.
fn quic_advice(spec: Option<&TestSpec>) -> String {
    let more = offer(
        spec,
        "",
        &[
            ("larger messages ({})", Try::Size(256 * 1024)),
            ("more streams on more cores ({})", Try::MoreStreams),
        ],
        "",
    );
    let more = if more.is_empty() {
        String::new()
    } else {
        format!(", {more}")
    };
    format!(
        "less per-packet work in user space: keep GSO on (the default; --no-gso makes every \
         datagram a system call){more}; tls-stream leaves the packets to the kernel's TCP"
    )
}

/// A category at least this share of a thread's samples is what it spends its
/// CPU on, and what the advice is chosen by.
const DOMINANT_SHARE: f64 = 0.3;

/// "; its sampled CPU went to copy 55%, TCP/IP 29%, memory 5%", from the
/// thread's call chains; empty where none were sampled.
fn spent_on(t: &ThreadLoad) -> String {
    let top: Vec<String> = t
        .spent
        .iter()
        .take(3)
        .filter(|(_, s)| *s >= 0.05)
        .map(|(c, s)| format!("{} {:.0}%", c.label(), 100.0 * s))
        .collect();
    if top.is_empty() {
        String::new()
    } else {
        format!("; its sampled CPU went to {}", top.join(", "))
    }
}

/// The advice for what a saturated thread spends most of its CPU on (its
/// sampled call chains), where one category is at least [`DOMINANT_SHARE`] of
/// it and there is advice for it; `None` leaves the advice to its user/system
/// split.
fn category_advice(t: &ThreadLoad, datagrams: bool, spec: Option<&TestSpec>) -> Option<String> {
    const ONE: &str = "one thread goes no faster: a faster core";
    let more: Part = ("more streams on more cores ({})", Try::MoreStreams);
    let (top, share) = *t.spent.first()?;
    if share < DOMINANT_SHARE {
        return None;
    }
    let sender = t.role == "sender";
    let pct = 100.0 * share;
    Some(match top {
        Category::DataCopy if sender && !datagrams => offer(
            spec,
            &format!("{pct:.0}% of its CPU copies data: send without the copy"),
            &[
                ("{}", Try::TxIo(IoStrategy::Sendfile)),
                ("{}", Try::TxIo(IoStrategy::Zerocopy)),
                more,
            ],
            ONE,
        ),
        Category::DataCopy => offer(
            spec,
            &format!(
                "{pct:.0}% of its CPU copies data, a copy a receiver cannot leave out with \
                 recv(2): spread it"
            ),
            &[more],
            ONE,
        ),
        Category::TcpIp
        | Category::Netdevice
        | Category::Skb
        | Category::Memory
        | Category::Checksum => {
            let larger = offer(
                spec,
                &format!(
                    "{pct:.0}% of its CPU is per-packet work ({}): fewer, larger packets",
                    top.label()
                ),
                &[("larger writes ({})", Try::Size(256 * 1024)), more],
                ONE,
            );
            format!(
                "{larger}; keep GSO/GRO on (ethtool -k), and a larger MTU where the path \
                 allows it (the lab's --mtu 9000)"
            )
        }
        Category::Scheduling => offer(
            spec,
            &format!("{pct:.0}% of its CPU sleeps and wakes: fewer wake-ups"),
            &[
                ("busy polling ({})", Try::Io(IoStrategy::Busypoll)),
                ("batching ({})", Try::Io(IoStrategy::Batch)),
            ],
            ONE,
        ),
        Category::Syscall => offer(
            spec,
            &format!("{pct:.0}% of its CPU enters and leaves the kernel: fewer system calls"),
            &[
                ("{}", Try::Io(IoStrategy::Batch)),
                ("{}", Try::Io(IoStrategy::Uring)),
                ("larger messages ({})", Try::Size(256 * 1024)),
            ],
            ONE,
        ),
        Category::Locks => offer(
            spec,
            &format!("{pct:.0}% of its CPU waits on locks: fewer flows contending"),
            &[("pinned flows ({})", Try::Pin)],
            ONE,
        ),
        _ => return None,
    })
}

pub(super) fn thread_verdict(
    t: &ThreadLoad,
    also: &[String],
    datagrams: bool,
    spec: Option<&TestSpec>,
) -> Diagnosis {
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
    let flows = t.flow_list();
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
            tls_advice(spec),
        ),
        Some(u) if t.quic && u >= ENCRYPTION_SHARE * t.busy => (
            format!(
                "; its user time is QUIC's stack in user space (quinn: packets, their \
                 encryption{}, acknowledgements, congestion control): the user-space \
                 transport is the limit",
                timed("which")
            ),
            quic_advice(spec),
        ),
        _ => (String::new(), String::new()),
    };
    const ONE: &str = "one thread goes no faster: a faster core";
    let more: Part = ("more streams on more cores ({})", Try::MoreStreams);
    let spent = spent_on(t);
    let by_category = category_advice(t, datagrams, spec);
    let advice = match (kind, t.role.as_str()) {
        _ if !crypto.is_empty() => crypto_advice,
        _ if by_category.is_some() => by_category.unwrap_or_default(),
        (Some(CpuKind::User), _) if t.verifies => offer(
            spec,
            "--verify checks every byte in user space",
            &[("{} to measure the path", Try::NoVerify), more],
            ONE,
        ),
        (Some(CpuKind::User), _) => offer(
            spec,
            "less work per byte in the application",
            &[("larger messages ({})", Try::Size(256 * 1024)), more],
            ONE,
        ),
        (_, "sender") if datagrams => datagram_sender_advice(spec),
        (_, "sender") => offer(
            spec,
            "fewer system calls and copies per byte",
            &[
                ("larger writes ({})", Try::Size(256 * 1024)),
                ("{}", Try::TxIo(IoStrategy::Zerocopy)),
                ("{}", Try::TxIo(IoStrategy::Sendfile)),
                more,
            ],
            ONE,
        ),
        (_, "receiver") => offer(
            spec,
            "a cheaper receive",
            &[
                ("{}", Try::RxIo(IoStrategy::Batch)),
                ("{}", Try::RxIo(IoStrategy::Uring)),
                ("{} (with RPS on a real NIC)", Try::MoreStreams),
            ],
            ONE,
        ),
        _ => offer(spec, "", &[more], ONE),
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
             interval{waited}{stolen}{split}{crypto}{spent}{core}{idle}{also}",
            t.side, t.role, t.busy
        ),
        advice,
    )
}
