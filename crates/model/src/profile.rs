//! Where a test's CPU went: its flow threads' samples, each classified into one
//! of the categories of the host-stack studies (Cai et al., SIGCOMM 2021), as
//! they travel between the ends and into results. How they are taken and
//! classified lives in `netsonde-cpu` (`profile`); docs/CPU-BREAKDOWN.md gives
//! the classifier's table and its caveats.

use serde::{Deserialize, Serialize};

use crate::units::Nanos;

/// What a sample was spent on. The order is the table's and the text's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Copying payload between user and kernel memory (and within either).
    DataCopy,
    /// Computing or checking checksums in software.
    Checksum,
    /// TCP, UDP, IP and MPTCP protocol processing, congestion control, timers.
    TcpIp,
    /// The device layer: queueing disciplines, GRO/GSO, the driver, NAPI.
    Netdevice,
    /// Socket buffers: allocating, cloning, freeing and manipulating skbs.
    Skb,
    /// The memory allocators (pages, slabs) and memory accounting.
    Memory,
    /// Spinlocks, socket locks and mutexes.
    Locks,
    /// Scheduling, sleeping and waking (wait queues, polling, IPIs).
    Scheduling,
    /// System-call entry and exit, descriptor look-up, the socket and file layers.
    Syscall,
    /// netsonde's own loop in user space.
    UserLoop,
    /// Encryption: the AEAD and TLS records (rustls, ring).
    Encryption,
    /// The QUIC stack in user space (quinn, its runtime).
    Quic,
    /// Known functions of none of the above, and samples not classified.
    Other,
}

impl Category {
    /// Every category, in table order.
    pub const ALL: [Category; 13] = [
        Category::DataCopy,
        Category::Checksum,
        Category::TcpIp,
        Category::Netdevice,
        Category::Skb,
        Category::Memory,
        Category::Locks,
        Category::Scheduling,
        Category::Syscall,
        Category::UserLoop,
        Category::Encryption,
        Category::Quic,
        Category::Other,
    ];

    /// The short label the text and the plots use.
    pub fn label(self) -> &'static str {
        match self {
            Category::DataCopy => "copy",
            Category::Checksum => "checksum",
            Category::TcpIp => "TCP/IP",
            Category::Netdevice => "netdev",
            Category::Skb => "skb",
            Category::Memory => "memory",
            Category::Locks => "locks",
            Category::Scheduling => "sched",
            Category::Syscall => "syscall",
            Category::UserLoop => "user loop",
            Category::Encryption => "crypto",
            Category::Quic => "QUIC",
            Category::Other => "other",
        }
    }

    /// The name a metric or a column takes (`data_copy`, `tcp_ip`, ...).
    pub fn key(self) -> &'static str {
        match self {
            Category::DataCopy => "data_copy",
            Category::Checksum => "checksum",
            Category::TcpIp => "tcp_ip",
            Category::Netdevice => "netdevice",
            Category::Skb => "skb",
            Category::Memory => "memory",
            Category::Locks => "locks",
            Category::Scheduling => "scheduling",
            Category::Syscall => "syscall",
            Category::UserLoop => "user_loop",
            Category::Encryption => "encryption",
            Category::Quic => "quic",
            Category::Other => "other",
        }
    }
}

/// Samples in one category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CategorySamples {
    /// The category.
    pub category: Category,
    /// Samples classified into it.
    pub samples: u64,
    /// Of them, those taken in user space (a copy by `memcpy` in the
    /// application or a TLS library, rather than by the kernel).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub user: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A function the samples landed in (the leaf, or the first function above a
/// generic leaf that the classifier decided by).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionSamples {
    /// Its symbol (a kernel function, or a demangled user-space path).
    pub name: String,
    /// The category its samples went to.
    pub category: Category,
    /// Samples.
    pub samples: u64,
}

/// Where one end's flow threads spent their CPU over the measured interval, by
/// sampling them with call chains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuBreakdown {
    /// The event sampled: `cpu-clock` (a software timer; this is what a host
    /// without a PMU, a VM, has) or `cycles`.
    pub event: String,
    /// The sampling period: a sample per this much of a thread's CPU time.
    pub period: Nanos,
    /// The classifier table's version (docs/CPU-BREAKDOWN.md).
    pub classifier: u32,
    /// Samples taken of the flow threads.
    pub samples: u64,
    /// Samples the kernel could not write (the ring was full) or that could not be
    /// kept; they are in no category.
    pub lost: u64,
    /// Samples per category (every category with a sample, in table order).
    pub categories: Vec<CategorySamples>,
    /// Samples whose function no table names or that no symbol covered (in
    /// `other`, counted here): classified as nothing, never guessed.
    pub unclassified: u64,
    /// The functions most samples were decided by, most first (at most 10).
    pub top: Vec<FunctionSamples>,
    /// Each flow thread's samples per category, so a verdict on one thread
    /// names what that thread spent its CPU on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadSamples>,
    /// The kernel's network work outside any process (softirq on an idle core,
    /// in `ksoftirqd`), sampled on every core the process may run on; `None`
    /// where not sampled (`elsewhere_why` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elsewhere: Option<Elsewhere>,
    /// Why the kernel's work outside processes was not sampled, one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elsewhere_why: Option<String>,
    /// The flow threads' own CPU clocks over the window the samples cover
    /// (read beside the sampling's start and end), which `samples` times
    /// `period` estimates; `None` where a clock could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Nanos>,
}

/// The network softirq work that ran outside any process over the interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Elsewhere {
    /// A sample per this much of each core's time.
    pub period: Nanos,
    /// Cores sampled.
    pub cores: u32,
    /// Samples taken on them (all work, before keeping the network's outside
    /// processes).
    pub samples: u64,
    /// Samples lost.
    pub lost: u64,
    /// The network's softirq samples in the idle task or a kernel thread, per
    /// category.
    pub categories: Vec<CategorySamples>,
}

/// One flow thread's samples per category.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadSamples {
    /// Its thread id (as in `CpuReport::flow_threads`).
    pub tid: i32,
    /// Its samples per category (every category with one, in table order).
    pub categories: Vec<CategorySamples>,
}

/// Shares (0 to 1) of `categories`, most first.
pub fn shares(categories: &[CategorySamples]) -> Vec<(Category, f64)> {
    let all: u64 = categories.iter().map(|c| c.samples).sum();
    let mut v: Vec<(Category, f64)> = categories
        .iter()
        .filter(|c| c.samples > 0)
        .map(|c| (c.category, c.samples as f64 / all as f64))
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

impl CpuBreakdown {
    /// Samples in `c`.
    pub fn samples_in(&self, c: Category) -> u64 {
        self.categories
            .iter()
            .find(|s| s.category == c)
            .map_or(0, |s| s.samples)
    }

    /// `c`'s share of the classified samples, 0 to 1.
    pub fn share(&self, c: Category) -> f64 {
        let all: u64 = self.categories.iter().map(|s| s.samples).sum();
        if all == 0 {
            0.0
        } else {
            self.samples_in(c) as f64 / all as f64
        }
    }

    /// The CPU time the samples stand for: samples times the period.
    pub fn sampled(&self) -> Nanos {
        Nanos(self.samples.saturating_mul(self.period.0))
    }

    /// The category with the most samples, if any.
    pub fn dominant(&self) -> Option<Category> {
        self.categories
            .iter()
            .filter(|s| s.samples > 0)
            .max_by_key(|s| s.samples)
            .map(|s| s.category)
    }
}

/// Whether an end's breakdown was taken, and if not, why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Profile {
    /// Taken.
    Taken(Box<CpuBreakdown>),
    /// Not taken, and why (one line: no permission, turned off, no threads).
    NotTaken {
        /// Why.
        why: String,
    },
}

impl Profile {
    /// The breakdown, when taken.
    pub fn breakdown(&self) -> Option<&CpuBreakdown> {
        match self {
            Profile::Taken(b) => Some(b),
            Profile::NotTaken { .. } => None,
        }
    }
}

/// One end's breakdown per unit of work: each category's microseconds of the
/// flow threads' CPU per KiB moved (or per transaction), as the report shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostShare {
    /// The category.
    pub category: Category,
    /// Its share of the classified samples, 0 to 1.
    pub share: f64,
    /// Its microseconds per KiB moved (both directions), where bytes moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_kib: Option<f64>,
    /// Its microseconds per transaction, for a request/response test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub us_per_transaction: Option<f64>,
    /// The part of it that is the test's share of the kernel's network work
    /// outside any process (0 to 1); absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elsewhere: Option<f64>,
}

/// Splits the flow threads' CPU (`threads`, over the interval) by `b`'s shares
/// and adds `weight` (the test's share of the kernel's network work, halved
/// when both ends share the host: the CPU table's model) of the network work
/// sampled outside any process ([`CpuBreakdown::elsewhere`]); per KiB of
/// `moved` bytes and per transaction. Categories with no sample are left out.
pub fn cost_shares(
    b: &CpuBreakdown,
    threads: Nanos,
    moved: u64,
    transactions: Option<u64>,
    weight: f64,
) -> Vec<CostShare> {
    let us = threads.0 as f64 / 1e3;
    let elsewhere_us = |c: Category| {
        b.elsewhere.as_ref().map_or(0.0, |e| {
            let n = e
                .categories
                .iter()
                .find(|x| x.category == c)
                .map_or(0, |x| x.samples);
            weight * n as f64 * e.period.0 as f64 / 1e3
        })
    };
    let costs: Vec<(Category, f64, f64)> = Category::ALL
        .iter()
        .map(|&c| (c, b.share(c) * us, elsewhere_us(c)))
        .filter(|(_, t, e)| t + e > 0.0)
        .collect();
    let total: f64 = costs.iter().map(|(_, t, e)| t + e).sum();
    costs
        .into_iter()
        .map(|(category, t, e)| {
            let all = t + e;
            CostShare {
                category,
                share: all / total,
                us_per_kib: (moved > 0).then(|| all / (moved as f64 / 1024.0)),
                us_per_transaction: transactions.filter(|t| *t > 0).map(|n| all / n as f64),
                elsewhere: (e > 0.0).then(|| e / all),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breakdown(counts: &[(Category, u64)]) -> CpuBreakdown {
        CpuBreakdown {
            event: "cpu-clock".into(),
            period: Nanos(250_000),
            classifier: 1,
            samples: counts.iter().map(|c| c.1).sum(),
            lost: 0,
            categories: counts
                .iter()
                .map(|&(category, samples)| CategorySamples {
                    category,
                    samples,
                    user: 0,
                })
                .collect(),
            unclassified: 0,
            top: Vec::new(),
            threads: Vec::new(),
            elsewhere: None,
            elsewhere_why: None,
            clock: None,
        }
    }

    #[test]
    fn shares_split_the_threads_cpu_per_kib() {
        let b = breakdown(&[(Category::DataCopy, 30), (Category::TcpIp, 10)]);
        assert_eq!(b.dominant(), Some(Category::DataCopy));
        assert_eq!(b.sampled(), Nanos(40 * 250_000));
        // 1 ms of CPU over 1 MiB: 0.9765625 us/KiB, three quarters copying.
        let s = cost_shares(&b, Nanos(1_000_000), 1 << 20, None, 0.5);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].category, Category::DataCopy);
        assert!((s[0].share - 0.75).abs() < 1e-12);
        assert!((s[0].us_per_kib.unwrap() - 0.75 * 1000.0 / 1024.0).abs() < 1e-12);
        assert_eq!(s[0].us_per_transaction, None);
        assert_eq!(s[0].elsewhere, None);
    }

    #[test]
    fn the_tests_share_of_the_work_outside_processes_is_added() {
        let mut b = breakdown(&[(Category::DataCopy, 30), (Category::TcpIp, 10)]);
        // 2 ms of TCP/IP on idle cores and in ksoftirqd; the test's share 0.25.
        b.elsewhere = Some(Elsewhere {
            period: Nanos(1_000_000),
            cores: 2,
            samples: 500,
            lost: 0,
            categories: vec![CategorySamples {
                category: Category::TcpIp,
                samples: 2,
                user: 0,
            }],
        });
        let s = cost_shares(&b, Nanos(1_000_000), 1 << 20, None, 0.25);
        // TCP/IP: 0.25 ms in the threads + 0.5 ms elsewhere, of 1.5 ms.
        let tcp = s.iter().find(|c| c.category == Category::TcpIp).unwrap();
        assert!((tcp.share - 0.5).abs() < 1e-12, "{tcp:?}");
        assert!((tcp.elsewhere.unwrap() - 0.5 / 0.75).abs() < 1e-12);
        let copy = s.iter().find(|c| c.category == Category::DataCopy).unwrap();
        assert!((copy.share - 0.5).abs() < 1e-12);
        assert_eq!(copy.elsewhere, None);
    }

    #[test]
    fn a_profile_round_trips_as_json() {
        let p = Profile::Taken(Box::new(breakdown(&[(Category::Other, 1)])));
        let j = serde_json::to_string(&p).unwrap();
        assert!(j.contains("\"state\":\"taken\""), "{j}");
        assert_eq!(serde_json::from_str::<Profile>(&j).unwrap(), p);
        let n = Profile::NotTaken { why: "off".into() };
        assert_eq!(n.breakdown(), None);
    }
}
