//! CPU accounting figures as they travel between the ends and into results. How they
//! are taken lives in the `netsonde-cpu` crate; this is only the vocabulary.

use serde::{Deserialize, Serialize};

use crate::units::{Nanos, Percent};

/// Where one core's (or all cores') time went during the measured interval, as shares
/// of that core's time. Taken system-wide from `/proc/stat`, so it includes softirq
/// work that the kernel does for the test on behalf of no process.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CoreUsage {
    /// Core number, or `None` for the average over all cores.
    pub core: Option<u32>,
    /// User mode.
    pub user: Percent,
    /// User mode at low priority.
    pub nice: Percent,
    /// Kernel mode (system calls, the socket layer).
    pub sys: Percent,
    /// Hardware interrupts.
    pub irq: Percent,
    /// Software interrupts (most of the receive path: NAPI, GRO, TCP input).
    pub softirq: Percent,
    /// Waiting for I/O (idle with outstanding disk I/O).
    pub iowait: Percent,
    /// Stolen by the hypervisor.
    pub steal: Percent,
    /// Idle.
    pub idle: Percent,
}

impl CoreUsage {
    /// Busy share: everything but idle, iowait and steal.
    pub fn busy(&self) -> Percent {
        Percent(self.user.0 + self.nice.0 + self.sys.0 + self.irq.0 + self.softirq.0)
    }
}

/// This process's own use, from `getrusage(RUSAGE_SELF)`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// User CPU time.
    pub user: Nanos,
    /// System CPU time.
    pub sys: Nanos,
    /// Voluntary context switches (the process blocked).
    pub voluntary_ctxsw: u64,
    /// Involuntary context switches (the process was preempted).
    pub involuntary_ctxsw: u64,
}

/// The kernel's UDP drop counters (`/proc/net/snmp`), or their change over an
/// interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UdpDrops {
    /// Datagrams dropped because a receiving socket's buffer was full.
    pub rcvbuf_errors: u64,
    /// Datagrams a sender could not queue.
    pub sndbuf_errors: u64,
    /// Datagrams dropped on input, for any reason.
    pub in_errors: u64,
}

/// CPU use on one host over the measured interval (and, beside it, the host's UDP
/// drop counters over the same interval).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuReport {
    /// Wall time the figures cover.
    pub elapsed: Nanos,
    /// One entry per online core.
    pub cores: Vec<CoreUsage>,
    /// Average over all cores.
    pub total: CoreUsage,
    /// Busy time summed over cores, in cores (2.0 = two cores fully busy).
    pub busy_cores: f64,
    /// This process's share.
    pub process: ProcessUsage,
    /// CPU time this end's flow threads ran over the interval, from their own
    /// clocks (user, system, and the softirq work run in their context): the test's
    /// own CPU, apart from the rest of the process and the host. `None` where not
    /// taken.
    #[serde(default)]
    pub threads: Option<Nanos>,
    /// CPU time the host's other user processes ran over the interval (all but
    /// this one; kernel threads left out). `None` where not taken.
    #[serde(default)]
    pub others: Option<Nanos>,
    /// This process's id, so two ends can tell whether they are one process.
    #[serde(default)]
    pub pid: u32,
    /// UDP datagrams the host's kernel dropped over the interval (this network
    /// namespace's counters); `None` where not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_drops: Option<UdpDrops>,
    /// Each flow thread's CPU over the interval (their sum is `threads`), with the
    /// flows it carried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_threads: Vec<ThreadCpu>,
    /// What the test's interface and the kernel's receive path counted over the
    /// interval (NIC drops, backlog drops, the NIC's interrupts per core);
    /// `None` where not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<crate::nic::NicActivity>,
    /// CPU time of the other processes that are part of the test (a peer tool's
    /// server on this host, the lab's emulator); `None` where not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partners: Option<Nanos>,
    /// Bytes the host's network interfaces counted over the interval, received
    /// plus sent, summed over every network namespace a process is in: the
    /// traffic the host's stack handled, the test's and everyone else's.
    /// `None` where not taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_bytes: Option<u64>,
    /// The other processes that ran most over the interval (at most three):
    /// who the foreign load was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_top: Vec<ForeignProcess>,
    /// The CPU limits of the cgroup this end's process ran in (the tightest
    /// quota from its cgroup up), and its throttling over the interval; `None`
    /// where not taken (no cgroup cpu controller).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupCpu>,
    /// Where this end's flow threads spent their CPU (sampled with call chains),
    /// or why that was not taken; `None` from an end that predates it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::profile::Profile>,
}

/// A cgroup's CPU limits and what they did over the measured interval: the
/// quota a container (a Kubernetes pod's `limits.cpu`, `docker --cpus`) is
/// held to, from cgroup v1's `cpu.cfs_quota_us`/`cpu.cfs_period_us` or v2's
/// `cpu.max`, and its throttling from `cpu.stat`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CgroupCpu {
    /// The cgroup version whose files were read (1 or 2).
    pub version: u8,
    /// The cgroup whose quota is the tightest, as `/proc/self/cgroup` names
    /// paths (this process's own where none has a quota).
    pub path: String,
    /// The quota in cores (quota over period); `None` when unlimited.
    pub quota_cores: Option<f64>,
    /// The enforcement period.
    pub period: Option<Nanos>,
    /// Enforcement periods that elapsed over the interval (only periods in
    /// which the group ran count).
    pub periods: u64,
    /// Of them, the periods in which the group used its quota and was stopped.
    pub throttled_periods: u64,
    /// The time its threads were held stopped, summed over them.
    pub throttled: Nanos,
    /// The cores its cpuset allows, as the kernel lists them (`0-1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
}

impl CgroupCpu {
    /// The share of the interval's periods in which the quota throttled the
    /// group, percent (`None` with no period).
    pub fn throttled_pct(&self) -> Option<f64> {
        (self.periods > 0).then(|| 100.0 * self.throttled_periods as f64 / self.periods as f64)
    }

    /// One line: `quota 0.30 CPU (period 100 ms), throttled in 31 of 31 periods (1.42 s)`.
    pub fn describe(&self) -> String {
        let quota = match (self.quota_cores, self.period) {
            (Some(q), Some(p)) => format!("quota {q:.2} CPU (period {p})"),
            (Some(q), None) => format!("quota {q:.2} CPU"),
            _ => "no CPU quota".into(),
        };
        let throttled = if self.quota_cores.is_some() {
            format!(
                ", throttled in {} of {} periods ({})",
                self.throttled_periods, self.periods, self.throttled
            )
        } else {
            String::new()
        };
        let cpus = self
            .cpus
            .as_ref()
            .map(|c| format!(", cpuset {c}"))
            .unwrap_or_default();
        format!(
            "cgroup v{} {}: {quota}{throttled}{cpus}",
            self.version, self.path
        )
    }
}

/// Another process on the host and what it ran over the measured interval.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ForeignProcess {
    /// Its process id.
    pub pid: u32,
    /// Its command name.
    pub name: String,
    /// CPU time it ran (user and system, at the kernel's tick).
    pub cpu: Nanos,
    /// The core it last ran on at the end of the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<u32>,
}

/// One flow thread's CPU time over the measured interval, from its own clock.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThreadCpu {
    /// The thread's id.
    pub tid: i32,
    /// The flows (by id) the thread ran: one, or a group sharing an epoll.
    pub flows: Vec<u32>,
    /// CPU time it ran (user, system and the softirq work run in its context).
    pub cpu: Nanos,
    /// Its user time over the interval, at the kernel's tick (`/proc`'s task
    /// stat); `None` where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Nanos>,
    /// Its system time over the interval (with softirq work run in its context),
    /// at the kernel's tick; `None` where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys: Option<Nanos>,
    /// The core it last ran on at the end of the interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<u32>,
    /// Time it was runnable but waited for a core over the interval (other load
    /// competed); `None` where the kernel keeps no scheduler statistics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<Nanos>,
}

impl CpuReport {
    /// Busy CPU time summed over all cores.
    pub fn busy_time(&self) -> Nanos {
        Nanos((self.busy_cores * self.elapsed.0 as f64) as u64)
    }

    /// The flow threads' CPU, in cores (1.0 = one core busy for the interval).
    pub fn thread_cores(&self) -> Option<f64> {
        let t = self.threads?;
        (self.elapsed.0 > 0).then(|| t.0 as f64 / self.elapsed.0 as f64)
    }

    /// One flow thread's CPU, in cores.
    pub fn cores_of(&self, t: &ThreadCpu) -> f64 {
        if self.elapsed.0 == 0 {
            0.0
        } else {
            t.cpu.0 as f64 / self.elapsed.0 as f64
        }
    }

    /// irq and softirq time summed over cores, in cores: work the kernel did for
    /// the network that no process is charged for.
    pub fn interrupt_cores(&self) -> f64 {
        self.cores
            .iter()
            .map(|c| (c.irq.0 + c.softirq.0) / 100.0)
            .sum()
    }

    /// The other processes that ran most, each as `name (pid N): C cores, last
    /// on core K`, leaving out `peer` (the other end's process on this host).
    pub fn foreign_named(&self, peer: Option<u32>) -> Vec<String> {
        let secs = self.elapsed.0.max(1) as f64;
        self.foreign_top
            .iter()
            .filter(|p| Some(p.pid) != peer)
            .map(|p| {
                let core = p
                    .core
                    .map(|c| format!(", last on core {c}"))
                    .unwrap_or_default();
                format!(
                    "{} (pid {}): {:.2} cores{core}",
                    p.name,
                    p.pid,
                    p.cpu.0 as f64 / secs
                )
            })
            .collect()
    }

    /// The process's CPU time as a percentage of one core.
    pub fn process_percent(&self) -> Percent {
        Percent::of(
            (self.process.user.0 + self.process.sys.0) as f64,
            self.elapsed.0 as f64,
        )
    }
}
