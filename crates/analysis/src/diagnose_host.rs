//! Whose CPU it was: a container's quota, a flow thread that wanted a core and
//! waited for one (starved), and a host busy with other work. Judged after the
//! direct evidence (windows, loss, pacing) and round trip: a thread is the
//! test's CPU limit only by the time it ran (`busy_thread`); the time it
//! waited for a core is the quota's or the other work's, named here.

use netsonde_model::spec::IoStrategy;

use super::thread::datagram_sender_advice;
use crate::advice::{offer, Try};

use super::{
    verdict, Bottleneck, CoreLoad, CpuKind, Diagnosis, DiagnosisInput, ThreadLoad, CPU_BUSY_PCT,
    MAJORITY_PCT, NEAR, THREAD_BUSY_PCT,
};

/// A cgroup throttled in at least this share of its periods over the
/// interval, percent, held its end to its quota: it used all of it in one
/// period of three or more, and was stopped for the rest of each. (On a busy
/// host a throttled process gets less of its quota, so fewer of its periods
/// end throttled: 15 of 29 beside two spinning cores, against 31 of 31 alone.)
pub const THROTTLED_PCT: f64 = 30.0;

/// The busiest core of either end, with its end's name.
pub(super) fn busiest(d: &DiagnosisInput) -> Option<(&'static str, &CoreLoad)> {
    let client = if d.one_host { "host" } else { "client" };
    [(client, &d.client_core), ("server", &d.server_core)]
        .into_iter()
        .filter_map(|(side, c)| Some((side, c.as_ref()?)))
        .reduce(|a, b| if b.1.busy > a.1.busy { b } else { a })
}

/// The core a thread's end is judged by: the host's when both ends share it.
fn core_of<'a>(d: &'a DiagnosisInput, side: &str) -> Option<&'a CoreLoad> {
    if d.one_host || side == "client" {
        d.client_core.as_ref()
    } else {
        d.server_core.as_ref()
    }
}

/// The flow threads' run and wait, for the evidence: "the client flow thread
/// of flow 0 (sender) ran 29.5% and waited 70.1% for a core".
fn thread_said(t: &ThreadLoad) -> String {
    let flows = t.flow_list();
    format!(
        "the {} flow thread of flow {flows} ({}) ran {:.1}% of the interval and waited {:.1}% \
         for a core",
        t.side,
        t.role,
        t.ran(),
        t.waited.unwrap_or(0.0)
    )
}

/// The most starved thread (the longest wait) of `side`, or of any end.
fn most_starved<'a>(d: &'a DiagnosisInput, side: Option<&str>) -> Option<&'a ThreadLoad> {
    d.threads
        .iter()
        .filter(|t| side.is_none_or(|s| s == "host" || s == t.side))
        .filter(|t| t.starved(THREAD_BUSY_PCT))
        .max_by(|a, b| a.waited.unwrap_or(0.0).total_cmp(&b.waited.unwrap_or(0.0)))
}

/// An end whose cgroup throttled it in most periods: its quota was its CPU
/// ceiling, whatever the host had idle.
pub(super) fn cpu_quota(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let (q, pct) = d
        .quotas
        .iter()
        .filter(|q| q.cgroup.quota_cores.is_some() && q.cgroup.periods >= 2)
        .filter_map(|q| Some((q, q.cgroup.throttled_pct()?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let c = &q.cgroup;
    let quota = c.quota_cores?;
    if pct < THROTTLED_PCT {
        if pct >= NEAR * THROTTLED_PCT {
            near.push(format!(
                "CPU quota ({} throttled in {pct:.0}% of periods)",
                q.side
            ));
        }
        return None;
    }
    let thread = most_starved(d, Some(&q.side))
        .map(|t| format!("; {}", thread_said(t)))
        .unwrap_or_default();
    let period = c
        .period
        .map(|p| format!(" (period {p})"))
        .unwrap_or_default();
    Some(verdict(
        Bottleneck::CpuQuota {
            side: q.side.clone(),
            quota_cores: quota,
            throttled_periods: c.throttled_periods,
            periods: c.periods,
        },
        format!(
            "the cgroup's quota of {quota:.2} CPU{period} throttled the {} in {} of {} periods \
             (its threads held stopped {} in all; cgroup v{} {}){thread}: the quota, not the \
             host, was this end's CPU ceiling",
            q.side, c.throttled_periods, c.periods, c.throttled, c.version, c.path
        ),
        "raise the quota (cgroup v2 cpu.max, v1 cpu.cfs_quota_us; a Kubernetes pod's \
         resources.limits.cpu, docker --cpus), or measure outside the container",
    ))
}

/// A flow thread that wanted a core (nearly) all the interval and waited for
/// one, on a host whose busy time was mostly the test's: the cores it waited
/// for were the test's own other threads' (more flow threads than cores, both
/// ends pinned to one), so the test's CPU is the limit, as a saturated thread
/// is (rule 6), and this thread's split (its crypto, its verify) says what it
/// was spent on.
#[allow(clippy::ptr_arg)] // a rule's signature: others push to it
pub(super) fn own_threads(d: &DiagnosisInput, _near: &mut Vec<String>) -> Option<Diagnosis> {
    let t = most_starved(d, None)?;
    let test = core_of(d, &t.side)
        .and_then(|c| c.test_pct)
        .filter(|p| *p >= MAJORITY_PCT)?;
    let mut v = super::thread::thread_verdict(t, &[], d.datagrams, d.spec.as_ref());
    v.evidence.push_str(&format!(
        "; the test was {test:.0}% of the host's busy time: the cores it waited for were \
         the test's own other threads'"
    ));
    Some(v)
}

/// The share of a busy core the test's flow threads that last ran on it must
/// have run for the core to be named with them.
const THREADS_FILL: f64 = 0.8;

/// A core (nearly) full with the test's work, which its flow threads that
/// last ran there ran most of (two threads pinned to one core, each half of
/// it): the verdict names the core with the thread that ran most, and what it
/// spent its time on. `None` when the core's time was not its threads'.
pub(super) fn core_of_threads(d: &DiagnosisInput, c: &CoreLoad) -> Option<Diagnosis> {
    let core = c.core?;
    let mut on: Vec<&ThreadLoad> = d
        .threads
        .iter()
        .filter(|t| !t.spins && t.core == Some(core))
        .collect();
    let ran: f64 = on.iter().map(|t| t.ran()).sum();
    if on.is_empty() || ran < THREADS_FILL * c.busy {
        return None;
    }
    on.sort_by(|a, b| b.ran().total_cmp(&a.ran()));
    let also: Vec<String> = on[1..]
        .iter()
        .map(|o| format!("{} flow thread {:?} at {:.1}%", o.side, o.flows, o.ran()))
        .collect();
    let mut v = super::thread::thread_verdict(on[0], &also, d.datagrams, d.spec.as_ref());
    v.evidence.push_str(&format!(
        "; core {core} was {:.1}% busy, {ran:.0}% of it the test's flow threads that last ran \
         there",
        c.busy
    ));
    Some(v)
}

/// A flow thread that wanted a core (nearly) all the interval and waited for
/// one while other work had the cores (the host was busy): starved, not the
/// test's CPU limit.
#[allow(clippy::ptr_arg)] // a rule's signature: others push to it
pub(super) fn starved_thread(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let t = most_starved(d, None)?;
    let c = core_of(d, &t.side);
    let test = c.and_then(|c| c.test_pct);
    let side = if d.one_host { "host" } else { t.side.as_str() };
    let who = c
        .filter(|c| !c.foreign.is_empty())
        .map(|c| format!("; most: {}", c.foreign.join(", ")))
        .unwrap_or_default();
    let share = test
        .map(|p| format!(" (the test was {p:.0}% of the host's busy time)"))
        .unwrap_or_default();
    let mut v = verdict(
        Bottleneck::HostBusy {
            side: side.into(),
            core: t.core,
            test_pct: test.unwrap_or(0.0),
        },
        format!(
            "{}: other work had the cores{share}{who}; the thread was starved, not the \
             test's CPU limit",
            thread_said(t)
        ),
        host_busy_advice(d),
    );
    v.candidates = near.to_vec();
    Some(v)
}

/// A busy host's advice: pinning, unless the test is pinned already.
fn host_busy_advice(d: &DiagnosisInput) -> String {
    offer(
        d.spec.as_ref(),
        "measure on a quieter host, or pin the test to cores the other work does not use",
        &[("{} (and --server-affinity)", Try::Pin)],
        "measure on a quieter host, or move the other work off the cores the test is pinned to",
    )
}

/// The busiest core was (nearly) full, mostly with other work: the test got
/// what was left.
#[allow(clippy::ptr_arg)] // a rule's signature: others push to it
pub(super) fn host_busy(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let (side, c) = busiest(d)?;
    if c.busy < CPU_BUSY_PCT {
        return None;
    }
    let test = c.test_pct.filter(|t| *t < MAJORITY_PCT)?;
    let core = c
        .core
        .map(|n| format!("core {n}"))
        .unwrap_or("a core".into());
    let who = if c.foreign.is_empty() {
        String::new()
    } else {
        format!("; most: {}", c.foreign.join(", "))
    };
    let mut v = verdict(
        Bottleneck::HostBusy {
            side: side.into(),
            core: c.core,
            test_pct: test,
        },
        format!(
            "{side} {core} was {:.1}% busy, but the test was only {test:.0}% of the host's \
             busy time: other processes and their traffic had the rest{who}",
            c.busy
        ),
        host_busy_advice(d),
    );
    v.candidates = near.to_vec();
    Some(v)
}

/// The busiest core (nearly) full with the test's work: the test's CPU limit,
/// named with its flow threads when they filled it ([`core_of_threads`]).
pub(super) fn busy_core(d: &DiagnosisInput, near: &mut Vec<String>) -> Option<Diagnosis> {
    let (side, c) = busiest(d)?;
    if c.busy < CPU_BUSY_PCT {
        if c.busy >= NEAR * CPU_BUSY_PCT {
            near.push(format!("CPU ({side} core {:.0}% busy)", c.busy));
        }
        return None;
    }
    let core = c
        .core
        .map(|n| format!("core {n}"))
        .unwrap_or("a core".into());
    // Mostly other work's: judged after round trip and the quota
    // (`host::host_busy`).
    if c.test_pct.is_some_and(|t| t < MAJORITY_PCT) {
        return None;
    }
    // The test's flow threads that ran on it filled it: the core is named
    // with the one that ran most, and what it spent its time on (its crypto,
    // its verify), as a saturated thread is.
    if let Some(v) = core_of_threads(d, c) {
        return Some(v);
    }
    let kind = c.kind();
    let split = if kind.is_some() {
        format!(
            " (user {:.0}%, system {:.0}%, irq+softirq {:.0}%)",
            c.user, c.sys, c.softirq
        )
    } else {
        String::new()
    };
    let spec = d.spec.as_ref();
    let advice = match kind {
        Some(CpuKind::Softirq) => {
            let more = offer(spec, "", &[("more streams ({})", Try::MoreStreams)], "");
            let more = if more.is_empty() {
                String::new()
            } else {
                format!("{more}, or ")
            };
            format!(
                "spread the receive work over cores: {more}RPS \
                 (/sys/class/net/DEV/queues/rx-0/rps_cpus)"
            )
        }
        Some(CpuKind::User) if d.datagrams => offer(
            spec,
            "less work per datagram in the application",
            &[("larger datagrams ({}, at most)", Try::Size(63 * 1024))],
            "less work per datagram in the application: a faster core",
        ),
        Some(CpuKind::User) => offer(
            spec,
            "less work per byte in the application",
            &[("larger messages ({})", Try::Size(256 * 1024))],
            "less work per byte in the application: a faster core",
        ),
        _ if d.datagrams => datagram_sender_advice(spec),
        _ => offer(
            spec,
            "fewer system calls per byte",
            &[
                ("{}", Try::Io(IoStrategy::Batch)),
                ("{}", Try::Io(IoStrategy::Auto)),
                ("larger messages ({})", Try::Size(256 * 1024)),
                ("more streams on more cores ({})", Try::MoreStreams),
            ],
            "a faster core, or more of them",
        ),
    };
    Some(verdict(
        Bottleneck::Cpu {
            side: side.into(),
            core: c.core,
            cpu: kind,
            thread: None,
        },
        format!("{side} {core} was {:.1}% busy{split}", c.busy),
        advice,
    ))
}
