//! The kernel's network work outside any process: softirq run on an idle core
//! or in a kernel thread (`ksoftirqd`), which no flow thread's event sees. One
//! system-wide sampling event per core the process may run on, at a fifth of
//! the flow threads' rate (a core's timer fires whether or not it is busy), its
//! samples kept only where the chain is network softirq (`net_rx_action`,
//! `net_tx_action`) in the idle task or a kernel thread: the work the CPU
//! table's share model attributes to the test by its share of the bytes.
//!
//! Needs `perf_event_paranoid` 0 or lower, or `CAP_PERFMON`; without, the
//! breakdown says it was not sampled.

use std::collections::HashMap;

use netsonde_model::profile::{Category, CategorySamples, Elsewhere};
use netsonde_model::units::Nanos;
use perf_event_open::config::{CallChain, Cpu, Opts, Proc, SampleOn};
use perf_event_open::count::Counter;
use perf_event_open::event::sw::Software;
use perf_event_open::sample::record::sample::CallChain as Chain;
use perf_event_open::sample::record::Record;
use perf_event_open::sample::Sampler;

use super::{classify, count, kallsyms, refused, ProfileError, MAX_FRAMES};

/// A sample per this much of each core's time: 1 kHz.
pub const ELSEWHERE_PERIOD: Nanos = Nanos(1_000_000);

/// Each core's ring: 2^5 pages (128 KiB), well over the 50 ms between drains.
const RING_PAGES_EXP: u8 = 5;

/// Functions that make a chain the network's softirq work.
const NETWORK: [&str; 2] = ["net_rx_action", "net_tx_action"];

/// Functions that make a chain a kernel thread's (the idle task is told by its
/// pid, 0).
const KERNEL_THREAD: [&str; 2] = ["kthread", "smpboot_thread_fn"];

/// The per-core events, and the kernel chains counted so far (with whether the
/// sample was in the idle task).
pub(super) struct Cores {
    events: Vec<(Counter, Sampler)>,
    chains: HashMap<(bool, Box<[u64]>), u64>,
    samples: u64,
    lost: u64,
}

impl Cores {
    /// Opens an event on every core this process may run on.
    pub(super) fn start() -> Result<Cores, ProfileError> {
        let mut opts = Opts {
            sample_on: SampleOn::Count(ELSEWHERE_PERIOD.0),
            enable: true,
            ..Opts::default()
        };
        opts.sample_format.call_chain = Some(CallChain {
            exclude_user: true,
            exclude_kernel: false,
            defer_user: false,
            max_stack_frames: MAX_FRAMES,
        });
        opts.record_id_format.task = true;
        let cores = crate::host::allowed_cores();
        if cores.is_empty() {
            return Err(ProfileError::NoThreads);
        }
        let events = cores
            .into_iter()
            .map(|c| {
                let counter = Counter::new(Software::CpuClock, (Proc::ALL, Cpu(c)), opts.clone())
                    .map_err(refused)?;
                let sampler = counter
                    .sampler(RING_PAGES_EXP)
                    .map_err(ProfileError::Open)?;
                Ok((counter, sampler))
            })
            .collect::<Result<Vec<_>, ProfileError>>()?;
        Ok(Cores {
            events,
            chains: HashMap::new(),
            samples: 0,
            lost: 0,
        })
    }

    /// Counts the kernel-mode samples in the rings so far.
    pub(super) fn drain(&mut self) {
        for (_, sampler) in &self.events {
            let Some(records) = sampler.iter() else {
                continue;
            };
            for (_, record) in records {
                match record {
                    Record::Sample(s) => {
                        self.samples += 1;
                        let idle = s.record_id.task.is_some_and(|t| t.pid == 0);
                        let Some(ips) = s.call_chain.iter().flatten().find_map(|c| match c {
                            Chain::Kernel(ips) if !ips.is_empty() => Some(ips.as_slice()),
                            _ => None,
                        }) else {
                            continue;
                        };
                        let key = (idle, Box::<[u64]>::from(ips));
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

    /// Stops the events and classifies the network softirq samples outside
    /// any process.
    pub(super) fn finish(mut self) -> Elsewhere {
        for (counter, _) in &self.events {
            let _ = counter.disable();
        }
        self.drain();
        let kernel = kallsyms::kernel().unwrap_or_default();
        let mut by: HashMap<Category, u64> = HashMap::new();
        for ((idle, ips), n) in &self.chains {
            let names: Vec<&str> = ips
                .iter()
                .map(|ip| kernel.lookup(*ip).unwrap_or(""))
                .collect();
            if !outside_processes(*idle, &names) {
                continue;
            }
            *by.entry(classify::kernel(&names).category).or_insert(0) += n;
        }
        Elsewhere {
            period: ELSEWHERE_PERIOD,
            cores: self.events.len() as u32,
            samples: self.samples,
            lost: self.lost,
            categories: Category::ALL
                .iter()
                .filter_map(|&category| {
                    let samples = by.get(&category).copied().unwrap_or(0);
                    (samples > 0).then_some(CategorySamples {
                        category,
                        samples,
                        user: 0,
                    })
                })
                .collect(),
        }
    }
}

/// Whether a chain is the network's softirq work outside any process: in the
/// idle task or a kernel thread.
pub(super) fn outside_processes(idle: bool, chain: &[&str]) -> bool {
    let has = |names: &[&str]| chain.iter().any(|n| names.contains(n));
    has(&NETWORK) && (idle || has(&KERNEL_THREAD))
}

/// Opens the per-core events, or says in a line why not.
pub(super) fn start() -> Result<Cores, String> {
    Cores::start().map_err(|e| match e {
        ProfileError::NotPermitted { paranoid } => format!(
            "the kernel's network work outside processes was not sampled: \
             kernel.perf_event_paranoid is {paranoid} (0 or CAP_PERFMON samples every core)"
        ),
        other => format!("the kernel's network work outside processes was not sampled: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_network_softirq_outside_processes_counts() {
        let ksoftirqd = [
            "tcp_v4_rcv",
            "net_rx_action",
            "handle_softirqs",
            "run_ksoftirqd",
            "smpboot_thread_fn",
            "kthread",
            "ret_from_fork",
        ];
        assert!(outside_processes(false, &ksoftirqd));
        let on_idle = ["ip_rcv", "net_rx_action", "handle_softirqs", "do_idle"];
        assert!(outside_processes(true, &on_idle));
        assert!(!outside_processes(false, &on_idle), "in a process: its own");
        let timer = ["hrtimer_interrupt", "do_idle"];
        assert!(!outside_processes(true, &timer), "not the network's");
        let kworker = ["memcpy", "process_one_work", "worker_thread", "kthread"];
        assert!(!outside_processes(false, &kworker));
    }
}
