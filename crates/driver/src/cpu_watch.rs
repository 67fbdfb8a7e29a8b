//! The CPU sampler of a test's flows: it reads the flow threads' clocks over
//! exactly the measured interval (from the end of warm-up to the end of the
//! interval or of the last flow), and the sleeps the flow threads wait with.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netsonde_cpu::profile::{self, Profiler};
use netsonde_engine::FlowClock;
use netsonde_model::cpu::CpuReport;
use netsonde_model::profile::{Category, Profile};
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

/// Sleeps until `at`, waking early when `stop` is set. Returns whether it stopped.
pub(crate) fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    sleep_until_or(
        at,
        Duration::from_millis(50),
        &|| stop.load(Ordering::Relaxed),
        &mut || {},
    )
}

/// Sleeps until `at`, waking early (within `step`) once `early` holds, and
/// doing `each` at every step. Returns whether it woke early.
pub(crate) fn sleep_until_or(
    at: Instant,
    step: Duration,
    early: &dyn Fn() -> bool,
    each: &mut dyn FnMut(),
) -> bool {
    loop {
        each();
        if early() {
            return true;
        }
        let now = Instant::now();
        if now >= at {
            return false;
        }
        std::thread::sleep((at - now).min(step));
    }
}

/// With no warm-up the measured interval starts with the flows: the UDP drop
/// counters' baseline is read before they exist (a burst of a few datagrams is
/// sent, and dropped, in microseconds). A load-latency test's load starts after
/// its probes' idle phase: none then.
pub(crate) fn udp_baseline(spec: &TestSpec) -> Option<netsonde_model::cpu::UdpDrops> {
    (spec.warmup.0 == 0 && spec.probe.is_none())
        .then(netsonde_cpu::snmp::read_udp_drops)
        .flatten()
}

/// A flow thread's last CPU clock reading: (tid, its CPU time, its task stats).
pub(crate) type Last = (i32, Nanos, Option<netsonde_cpu::thread::TaskStat>);

/// What the CPU sampler's thread watches.
pub(crate) struct CpuWatch {
    pub(crate) clock: FlowClock,
    pub(crate) stop: Arc<AtomicBool>,
    /// Each flow thread, as it registers.
    pub(crate) tids: Arc<std::sync::Mutex<Vec<ThreadFlows>>>,
    pub(crate) n_threads: usize,
    /// The UDP drop counters when the flows started, for a test with no warm-up.
    pub(crate) udp_at_start: Option<netsonde_model::cpu::UdpDrops>,
    /// The interface whose NIC counters are read.
    pub(crate) iface: Option<String>,
    /// The test ends by volume: look often.
    pub(crate) volume: bool,
    /// Flow threads still running.
    pub(crate) left: Arc<std::sync::atomic::AtomicUsize>,
    /// Threads that ended before the sampler's last reading.
    pub(crate) ended: Arc<std::sync::Mutex<Vec<Last>>>,
    /// Sample the flow threads for the CPU breakdown, the standard library's
    /// work going to this category (the flows' own: netsonde's loop, or the
    /// QUIC stack), a sample per this much of a thread's CPU; `None`: not
    /// asked.
    pub(crate) breakdown: Option<Breakdown>,
    /// Sample every core too, for the kernel's network work outside processes
    /// (stream tests: a core's timer wakes it when idle, which a latency test
    /// would feel).
    pub(crate) cores: bool,
    /// Nobody will read the results: end without naming the samples.
    pub(crate) abandoned: Arc<AtomicBool>,
}

/// How a test's CPU breakdown is sampled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Breakdown {
    /// What the standard library's work on the flow threads is counted as:
    /// netsonde's loop, or the QUIC stack.
    pub(crate) generic: Category,
    /// A sample per this much of a flow thread's CPU.
    pub(crate) period: Nanos,
    /// Why every core is not sampled for the kernel's work outside
    /// processes, where it is not.
    pub(crate) no_cores: Option<&'static str>,
}

/// Why a TLS or QUIC stream's cores are not sampled.
const USER_SPACE_CORES: &str = "not sampled for a TLS or QUIC stream: every core's sampling \
     at 1 kHz cost a one-core tls-stream 2.6% of its goodput and a quic-stream 7%";

/// How the CPU breakdown samples `spec`'s test (`None`: it asks for none).
/// The flow threads at 4 kHz of their CPU where the work is the kernel's, 1
/// kHz for TLS and 250 Hz for QUIC, whose work is in user space, which every
/// sample's interrupt slows; and for these two no core beside them (measured
/// on one core each end, interleaved on and off: at 4 kHz with every core the
/// sampling cost a tls-stream 9% of its goodput and a quic-stream 20%; as
/// here, 1.001 and 0.991 of their goodput unsampled: docs/CPU-BREAKDOWN.md).
pub(crate) fn breakdown_of(spec: &TestSpec) -> Option<Breakdown> {
    spec.breakdown().then(|| {
        let (generic, period, no_cores) = if spec.test.is_quic() {
            (Category::Quic, profile::QUIC_PERIOD, Some(USER_SPACE_CORES))
        } else if spec.test.is_tls() {
            (
                Category::UserLoop,
                profile::TLS_PERIOD,
                Some(USER_SPACE_CORES),
            )
        } else {
            (Category::UserLoop, profile::DEFAULT_PERIOD, None)
        };
        Breakdown {
            generic,
            period,
            no_cores,
        }
    })
}

/// The CPU over the measured interval: from the end of warm-up (once every
/// flow thread registered) to the end of the interval or of the last flow.
pub(crate) fn sample_cpu(w: CpuWatch) -> Option<CpuReport> {
    if sleep_until(w.clock.warm_end, &w.stop) {
        return None;
    }
    // Every thread registers as it starts: long before the end of warm-up, but
    // wait (briefly) for stragglers when there is none.
    let registered = Instant::now() + std::time::Duration::from_millis(200);
    let tids = loop {
        let t = w.tids.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if t.len() >= w.n_threads || Instant::now() >= registered {
            break t;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    let ids: Vec<i32> = tids.iter().map(|(t, _)| *t).collect();
    let sampler = netsonde_cpu::CpuSampler::start_from(&ids, w.udp_at_start)
        .ok()?
        .watch(w.iface);
    let mut profiler = w.breakdown.map(|b| {
        let mut p = Profiler::start(&ids, b.period, w.cores && b.no_cores.is_none());
        if let (Ok(p), Some(why)) = (p.as_mut(), b.no_cores) {
            p.cores_not_sampled(why);
        }
        (b.generic, p)
    });
    // A test that ends by volume ends when its flows do: look often enough that
    // the CPU's interval is within 2 ms of the bytes'.
    let step = Duration::from_millis(if w.volume { 2 } else { 50 });
    // The samples are counted every 50 ms, so the rings never fill.
    let mut drained = Instant::now();
    sleep_until_or(
        w.clock.end,
        step,
        &|| w.stop.load(Ordering::Relaxed) || w.left.load(Ordering::Acquire) == 0,
        &mut || {
            if let Some((_, Ok(p))) = profiler.as_mut() {
                if drained.elapsed() >= Duration::from_millis(50) {
                    p.drain();
                    drained = Instant::now();
                }
            }
        },
    );
    if w.abandoned.load(Ordering::Relaxed) {
        return None;
    }
    let mut report = sampler
        .finish_with(&|tid| {
            let e = w.ended.lock().unwrap_or_else(|e| e.into_inner());
            e.iter().find(|(t, ..)| *t == tid).map(|(_, n, s)| (*n, *s))
        })
        .ok()?;
    for t in &mut report.flow_threads {
        if let Some((_, flows)) = tids.iter().find(|(tid, _)| *tid == t.tid) {
            t.flows.clone_from(flows);
        }
    }
    report.profile = profiler.map(|(generic, p)| match p {
        Ok(p) => Profile::Taken(Box::new(p.finish(generic, &|tid| {
            let e = w.ended.lock().unwrap_or_else(|e| e.into_inner());
            e.iter().find(|(t, ..)| *t == tid).map(|(_, n, _)| *n)
        }))),
        Err(e) => Profile::NotTaken { why: e.to_string() },
    });
    Some(report)
}

/// A flow thread's id and the flows it runs.
pub(crate) type ThreadFlows = (i32, Vec<u32>);

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;

    /// TLS and QUIC streams are sampled at 1 kHz and 250 Hz and their cores
    /// not at all, saying why; TCP at 4 kHz with its cores; a
    /// request/response test not unless asked.
    #[test]
    fn a_user_space_transport_is_sampled_less_and_says_why() {
        let of = |t: TestKind| breakdown_of(&TestSpec::new(t));
        let tcp = of(TestKind::TcpStream).unwrap();
        assert_eq!((tcp.period, tcp.no_cores), (Nanos(250_000), None));
        let tls = of(TestKind::TlsStream).unwrap();
        assert_eq!(tls.period, Nanos(1_000_000));
        assert!(tls.no_cores.is_some_and(|w| w.contains("TLS or QUIC")));
        let quic = of(TestKind::QuicStream).unwrap();
        assert_eq!(
            (quic.period, quic.generic),
            (Nanos(4_000_000), Category::Quic)
        );
        assert!(quic.no_cores.is_some());
        assert!(of(TestKind::TcpRr).is_none());
    }
}
