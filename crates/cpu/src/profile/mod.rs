//! Where a test's CPU goes: its flow threads sampled with call chains
//! (`perf_event_open`, through the `perf-event-open` crate), each sample's chain
//! named (the kernel's from `/proc/kallsyms`, netsonde's own from its symbols)
//! and classified ([`classify`]) into the categories of the host-stack studies.
//!
//! A [`Profiler`] opens one sampling event per flow thread: the software
//! `cpu-clock` event (the hardware cycle counter is not there on a host
//! without a PMU, as in most VMs), a sample per [`DEFAULT_PERIOD`] of the
//! thread's own CPU time, with the kernel's call chain and the user-space
//! address. The events are on only while their threads run, so an idle core is
//! never woken to sample. The CPU sampler's thread drains the rings during the
//! interval ([`Profiler::drain`]: only counting raw chains, no symbol work) and
//! names and classifies them once it ends ([`Profiler::finish`]).

pub mod classify;
pub mod elsewhere;
pub mod exe;
pub mod kallsyms;

use std::collections::HashMap;

use netsonde_model::profile::{
    Category, CategorySamples, CpuBreakdown, FunctionSamples, ThreadSamples,
};
use netsonde_model::units::Nanos;
use perf_event_open::config::{CallChain, Cpu, Opts, Proc, SampleOn};
use perf_event_open::count::Counter;
use perf_event_open::event::sw::Software;
use perf_event_open::sample::record::sample::CallChain as Chain;
use perf_event_open::sample::record::Record;
use perf_event_open::sample::Sampler;

/// A sample per this much of a thread's CPU time: 4 kHz while it runs. The
/// bench (bench/cpu-breakdown.sh) measures what it costs a stream's goodput.
pub const DEFAULT_PERIOD: Nanos = Nanos(250_000);
/// A sample per this much of a TLS stream's flow thread's CPU: 1 kHz (its
/// work is in user space, which each sample slows more: docs/CPU-BREAKDOWN.md).
pub const TLS_PERIOD: Nanos = Nanos(1_000_000);
/// A QUIC stream's flow thread's: 250 Hz, for the same reason.
pub const QUIC_PERIOD: Nanos = Nanos(4_000_000);

/// The deepest kernel chain kept: deep enough for a receive path run in
/// softirq on top of a send (about 30 frames on loopback); the classifier
/// decides within the first few.
pub(crate) const MAX_FRAMES: u16 = 48;

/// Each thread's ring: 2^6 pages (256 KiB), about 200 ms of samples at the
/// default rate; the sampler drains it every 50 ms.
const RING_PAGES_EXP: u8 = 6;

/// Distinct chains kept per test; samples of chains beyond it are lost (and
/// counted so).
pub(crate) const MAX_CHAINS: usize = 32_768;

/// The `perf_event_paranoid` setting, for the reason a sample was refused.
const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";

/// Why a breakdown could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The kernel refused to sample (no `CAP_PERFMON`, and
    /// `perf_event_paranoid` above 1).
    #[error(
        "not permitted: kernel.perf_event_paranoid is {paranoid}; sampling a process's own \
         threads with their kernel work needs 1 or lower, or CAP_PERFMON"
    )]
    NotPermitted {
        /// The setting, as read.
        paranoid: String,
    },
    /// `perf_event_open` failed otherwise (no such event, a seccomp filter).
    #[error("perf_event_open failed: {0}")]
    Open(std::io::Error),
    /// The kernel's symbols' addresses are hidden (`kernel.kptr_restrict`).
    #[error("kernel symbols hidden (kernel.kptr_restrict; needs CAP_SYSLOG)")]
    Hidden,
    /// No thread was given.
    #[error("no flow thread to sample")]
    NoThreads,
}

/// What a sample was taken in: a kernel chain (leaf first), or a user-space
/// address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Where {
    Kernel(Box<[u64]>),
    User(u64),
}

/// The sampling events on a test's flow threads, and the chains counted so far.
pub struct Profiler {
    /// Each thread's event, its ring, and its CPU clock as the event started.
    events: Vec<(Counter, Sampler, i32, Option<Nanos>)>,
    period: Nanos,
    /// (thread, where) -> samples.
    chains: HashMap<(u32, Where), u64>,
    samples: u64,
    lost: u64,
    /// Every core's event for the kernel's network work outside processes,
    /// or why there is none.
    cores: Option<Result<elsewhere::Cores, String>>,
}

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("events", &self.events.len())
            .field("period", &self.period)
            .field("samples", &self.samples)
            .field("lost", &self.lost)
            .finish()
    }
}

/// Counts one more sample of `key`; `false` when it is new and the map already
/// holds [`MAX_CHAINS`] keys (the sample is lost, and its caller counts it so).
pub(crate) fn count<K: Eq + std::hash::Hash>(chains: &mut HashMap<K, u64>, key: K) -> bool {
    if let Some(n) = chains.get_mut(&key) {
        *n += 1;
    } else if chains.len() < MAX_CHAINS {
        chains.insert(key, 1);
    } else {
        return false;
    }
    true
}

/// Reads what a breakdown needs before a test starts (the kernel's symbols,
/// once per process), so that none of it lands in a measured interval.
pub fn prepare() {
    let _ = kallsyms::kernel();
    let _ = exe::symbols();
}

pub(crate) fn refused(e: std::io::Error) -> ProfileError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => ProfileError::NotPermitted {
            paranoid: std::fs::read_to_string(PARANOID)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unreadable".into()),
        },
        _ => ProfileError::Open(e),
    }
}

impl Profiler {
    /// Starts sampling `tids` (threads of this process), a sample per `period`
    /// of each one's CPU time, and, with `cores`, every core this process may
    /// run on for the kernel's network work outside processes.
    pub fn start(tids: &[i32], period: Nanos, cores: bool) -> Result<Profiler, ProfileError> {
        if tids.is_empty() {
            return Err(ProfileError::NoThreads);
        }
        let kernel = kallsyms::kernel().ok_or(ProfileError::Hidden)?;
        if kernel.hidden() {
            return Err(ProfileError::Hidden);
        }
        let mut opts = Opts {
            sample_on: SampleOn::Count(period.0.max(10_000)),
            enable: true,
            ..Opts::default()
        };
        opts.sample_format.call_chain = Some(CallChain {
            exclude_user: true,
            exclude_kernel: false,
            defer_user: false,
            max_stack_frames: MAX_FRAMES,
        });
        opts.sample_format.code_addr = true;
        opts.record_id_format.task = true;
        let events = tids
            .iter()
            .map(|&tid| {
                let target = (Proc(u32::try_from(tid).unwrap_or(0)), Cpu::ALL);
                let counter =
                    Counter::new(Software::CpuClock, target, opts.clone()).map_err(refused)?;
                // Read beside the event's start: the window the samples cover.
                let at = crate::thread::cpu_time(tid);
                let sampler = counter
                    .sampler(RING_PAGES_EXP)
                    .map_err(ProfileError::Open)?;
                Ok((counter, sampler, tid, at))
            })
            .collect::<Result<Vec<_>, ProfileError>>()?;
        Ok(Profiler {
            events,
            period,
            chains: HashMap::new(),
            samples: 0,
            lost: 0,
            cores: cores.then(elsewhere::start),
        })
    }

    /// Says that every core is not sampled, and why (the breakdown's
    /// `elsewhere_why`), for a test that did not ask for it.
    pub fn cores_not_sampled(&mut self, why: &str) {
        if self.cores.is_none() {
            self.cores = Some(Err(why.to_string()));
        }
    }

    /// Counts the samples in the rings so far (off the data path: the CPU
    /// sampler's thread, every 50 ms).
    pub fn drain(&mut self) {
        if let Some(Ok(c)) = self.cores.as_mut() {
            c.drain();
        }
        for (_, sampler, ..) in &self.events {
            let Some(records) = sampler.iter() else {
                continue;
            };
            for (_, record) in records {
                match record {
                    Record::Sample(s) => {
                        self.samples += 1;
                        let tid = s.record_id.task.map_or(0, |t| t.tid);
                        let at = s
                            .call_chain
                            .iter()
                            .flatten()
                            .find_map(|c| match c {
                                Chain::Kernel(ips) if !ips.is_empty() => {
                                    Some(Where::Kernel(ips.as_slice().into()))
                                }
                                _ => None,
                            })
                            .or_else(|| s.code_addr.map(|(ip, _)| Where::User(ip)));
                        let Some(at) = at else {
                            self.lost += 1;
                            continue;
                        };
                        let key = (tid, at);
                        if !count(&mut self.chains, key) {
                            self.lost += 1;
                        }
                    }
                    Record::LostRecords(l) => self.lost += l.lost_records,
                    Record::LostSamples(l) => self.lost += l.lost_samples,
                    _ => {}
                }
            }
        }
    }

    /// Stops sampling, counts what is left and classifies every sample:
    /// `generic` is the category of the threads' own user-space work where the
    /// standard library ran (netsonde's loop, or a QUIC flow's stack); `last`
    /// is the CPU clock a thread that has ended stopped at.
    pub fn finish(
        mut self,
        generic: Category,
        last: &dyn Fn(i32) -> Option<Nanos>,
    ) -> CpuBreakdown {
        let mut clock = Some(0u64);
        for (counter, _, tid, at) in &self.events {
            let _ = counter.disable();
            // Read beside the event's end: the threads' own clocks over the
            // window the samples cover.
            let now = crate::thread::cpu_time(*tid).or_else(|| last(*tid));
            clock = clock
                .zip(now.zip(*at))
                .map(|(c, (n, a))| c + n.0.saturating_sub(a.0));
        }
        self.drain();
        let (elsewhere, elsewhere_why) = match self.cores.take() {
            Some(Ok(c)) => (Some(c.finish()), None),
            Some(Err(why)) => (None, Some(why)),
            None => (None, None),
        };
        let kernel = kallsyms::kernel().unwrap_or_default();
        let mut users: HashMap<u64, Vec<String>> = HashMap::new();
        let mut by_category: HashMap<Category, u64> = HashMap::new();
        let mut by_thread: HashMap<(u32, Category), u64> = HashMap::new();
        let mut in_user: HashMap<Category, u64> = HashMap::new();
        let mut by_function: HashMap<(String, Category), u64> = HashMap::new();
        let mut unclassified = 0;
        for ((tid, at), n) in &self.chains {
            let (category, by, known) = match at {
                Where::Kernel(ips) => {
                    let names: Vec<&str> = ips
                        .iter()
                        .map(|ip| kernel.lookup(*ip).unwrap_or(""))
                        .collect();
                    let d = classify::kernel(&names);
                    (d.category, d.by.to_string(), d.known)
                }
                Where::User(ip) => {
                    let names = users.entry(*ip).or_insert_with(|| user_names(*ip));
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    let d = classify::user(&names, generic);
                    (d.category, d.by.to_string(), d.known)
                }
            };
            *by_category.entry(category).or_insert(0) += n;
            if matches!(at, Where::User(_)) {
                *in_user.entry(category).or_insert(0) += n;
            }
            *by_thread.entry((*tid, category)).or_insert(0) += n;
            *by_function.entry((by, category)).or_insert(0) += n;
            if !known {
                unclassified += n;
            }
        }
        let mut top: Vec<FunctionSamples> = by_function
            .into_iter()
            .map(|((name, category), samples)| FunctionSamples {
                name: if name.is_empty() {
                    "[unknown]".into()
                } else {
                    name
                },
                category,
                samples,
            })
            .collect();
        top.sort_by(|a, b| b.samples.cmp(&a.samples).then_with(|| a.name.cmp(&b.name)));
        top.truncate(10);
        let in_order = |count: &dyn Fn(Category) -> u64, user: &dyn Fn(Category) -> u64| {
            Category::ALL
                .iter()
                .filter_map(|&category| {
                    let samples = count(category);
                    (samples > 0).then(|| CategorySamples {
                        category,
                        samples,
                        user: user(category),
                    })
                })
                .collect::<Vec<_>>()
        };
        let mut tids: Vec<u32> = by_thread.keys().map(|k| k.0).collect();
        tids.sort_unstable();
        tids.dedup();
        let threads = tids
            .into_iter()
            .map(|tid| ThreadSamples {
                tid: tid as i32,
                categories: in_order(&|c| by_thread.get(&(tid, c)).copied().unwrap_or(0), &|_| 0),
            })
            .collect();
        CpuBreakdown {
            event: "cpu-clock".into(),
            period: self.period,
            classifier: classify::CLASSIFIER_VERSION,
            samples: self.samples,
            lost: self.lost,
            categories: in_order(&|c| by_category.get(&c).copied().unwrap_or(0), &|c| {
                in_user.get(&c).copied().unwrap_or(0)
            }),
            unclassified,
            top,
            threads,
            elsewhere,
            elsewhere_why,
            clock: clock.map(Nanos),
        }
    }
}

/// The names of the function a user-space address is in: the executable's
/// own symbol for its code; in a shared library, the function and those it
/// was inlined into, innermost first (empty where no symbol covers it).
fn user_names(ip: u64) -> Vec<String> {
    let exe = exe::symbols();
    if let Some(name) = exe.lookup(ip) {
        return vec![name];
    }
    if exe.covers(ip) {
        // The executable's, between its symbols: not parsed from its
        // debug information (a second and 100+ MB).
        return Vec::new();
    }
    let mut names = Vec::new();
    backtrace::resolve(ip as usize as *mut std::ffi::c_void, |symbol| {
        if let Some(name) = symbol.name() {
            names.push(format!("{name:#}"));
        }
    });
    names
}

#[cfg(test)]
#[path = "profile_tests.rs"]
mod tests;
