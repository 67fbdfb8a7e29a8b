//! Taking the two snapshots around a test: [`CpuSampler`] reads `/proc/stat` and
//! `getrusage` at start and again at finish, and hands both to [`cpu_delta`].

use std::path::Path;
use std::time::Instant;

use netsonde_model::cpu::{CpuReport, ThreadCpu};
use netsonde_model::units::Nanos;

use crate::delta::cpu_delta;
use crate::rusage::{read_rusage, RusageSnapshot};
use crate::stat::{parse_proc_stat, StatSnapshot};
use crate::CpuError;

/// Where the kernel publishes per-core CPU counters.
pub const PROC_STAT: &str = "/proc/stat";

/// Reads and parses `/proc/stat` now.
pub fn read_proc_stat() -> Result<StatSnapshot, CpuError> {
    let path = Path::new(PROC_STAT);
    let text = std::fs::read_to_string(path).map_err(|source| CpuError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_proc_stat(&text)
}

/// CPU counters taken at the start of a measured interval.
#[derive(Debug, Clone)]
pub struct CpuSampler {
    stat: StatSnapshot,
    rusage: RusageSnapshot,
    /// The test's threads, their CPU clocks and task stats at the start.
    threads: Vec<(i32, Option<Nanos>, Option<crate::thread::TaskStat>)>,
    /// The other processes' CPU at the start.
    others: crate::processes::Others,
    /// The UDP drop counters at the start.
    udp: Option<netsonde_model::cpu::UdpDrops>,
    /// The watched interface's NIC counters at the start ([`CpuSampler::watch`]).
    nic: Option<crate::nic::NicSnapshot>,
    /// The process's cgroup's CPU limits and counters at the start.
    cgroup: Option<crate::cgroup::CgroupSnapshot>,
    started: Instant,
}

impl CpuSampler {
    /// Reads `/proc/stat` and `getrusage` now and remembers the time.
    pub fn start() -> Result<CpuSampler, CpuError> {
        CpuSampler::start_with(&[])
    }

    /// As [`CpuSampler::start`], and reads the CPU clocks of `threads` (the test's
    /// own flow threads, by thread id) too.
    pub fn start_with(threads: &[i32]) -> Result<CpuSampler, CpuError> {
        let others = crate::processes::Others::read();
        let udp = crate::snmp::read_udp_drops();
        let cgroup = crate::cgroup::CgroupSnapshot::read();
        let stat = read_proc_stat()?;
        let rusage = read_rusage()?;
        Ok(CpuSampler {
            stat,
            rusage,
            others,
            udp,
            threads: threads
                .iter()
                .map(|&t| (t, crate::thread::cpu_time(t), crate::thread::task_stat(t)))
                .collect(),
            nic: None,
            cgroup,
            started: Instant::now(),
        })
    }

    /// Watches the interface `ifname` too: reads its NIC counters now, and the
    /// report's `nic` gets their change at finish. `None` watches nothing.
    pub fn watch(mut self, ifname: Option<String>) -> CpuSampler {
        self.nic = ifname.map(|name| crate::nic::NicSnapshot::read(&name));
        self
    }

    /// As [`CpuSampler::start_with`], with the UDP drop counters' starting values
    /// read earlier (`udp`): a measured interval that starts as the flows do
    /// (no warm-up) takes them before the flows start, since a short burst is
    /// over, and its drops counted, before the sampler's own thread gets here.
    pub fn start_from(
        threads: &[i32],
        udp: Option<netsonde_model::cpu::UdpDrops>,
    ) -> Result<CpuSampler, CpuError> {
        let mut s = CpuSampler::start_with(threads)?;
        if udp.is_some() {
            s.udp = udp;
        }
        Ok(s)
    }

    /// Reads again and returns the report for the interval since [`CpuSampler::start`].
    /// Does not consume the sampler, so it can be called at any time, more than once.
    /// A thread that exited in between counts what `last` says it had when it
    /// ended (its clock is gone), or nothing.
    pub fn finish(&self) -> Result<CpuReport, CpuError> {
        self.finish_with(&|_| None)
    }

    /// As [`CpuSampler::finish`], with the last reading of each thread that ended
    /// (its CPU clock and task stat as it ended).
    pub fn finish_with(
        &self,
        last: &dyn Fn(i32) -> Option<(Nanos, Option<crate::thread::TaskStat>)>,
    ) -> Result<CpuReport, CpuError> {
        let stat = read_proc_stat()?;
        let rusage = read_rusage()?;
        let flow_threads: Vec<ThreadCpu> = self
            .threads
            .iter()
            .filter_map(|&(tid, at, stat_at)| {
                let (now, stat_now) = match crate::thread::cpu_time(tid) {
                    Some(now) => (now, crate::thread::task_stat(tid)),
                    None => last(tid)?,
                };
                let stat = stat_at.zip(stat_now);
                Some(ThreadCpu {
                    tid,
                    flows: Vec::new(),
                    cpu: Nanos(now.0.saturating_sub(at?.0)),
                    user: stat.map(|(a, b)| Nanos(b.user.0.saturating_sub(a.user.0))),
                    sys: stat.map(|(a, b)| Nanos(b.sys.0.saturating_sub(a.sys.0))),
                    core: stat.and_then(|(_, b)| b.core),
                    wait: stat.and_then(|(a, b)| Some(Nanos(b.wait?.0.saturating_sub(a.wait?.0)))),
                })
            })
            .collect();
        let threads =
            (!self.threads.is_empty()).then(|| Nanos(flow_threads.iter().map(|t| t.cpu.0).sum()));
        let elapsed = Nanos::from(self.started.elapsed());
        let mut report = cpu_delta(&self.stat, &stat, &self.rusage, &rusage, elapsed);
        report.threads = threads;
        report.flow_threads = flow_threads;
        let others = crate::processes::Others::read();
        report.others = Some(self.others.since(&others));
        report.partners = Some(self.others.partners_since(&others));
        report.stack_bytes = self.others.stack_bytes_since(&others);
        report.foreign_top = self.others.top_since(&others, 3);
        report.pid = std::process::id();
        report.udp_drops = self.udp.zip(crate::snmp::read_udp_drops()).map(|(a, b)| {
            netsonde_model::cpu::UdpDrops {
                rcvbuf_errors: b.rcvbuf_errors.saturating_sub(a.rcvbuf_errors),
                sndbuf_errors: b.sndbuf_errors.saturating_sub(a.sndbuf_errors),
                in_errors: b.in_errors.saturating_sub(a.in_errors),
            }
        });
        report.cgroup = self
            .cgroup
            .as_ref()
            .zip(crate::cgroup::CgroupSnapshot::read())
            .map(|(a, b)| a.since(&b));
        report.nic = self
            .nic
            .as_ref()
            .map(|at| crate::nic::NicSnapshot::read(&at.interface).since(at));
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Float slack for shares that should be within [0, 100] and sum to 100.
    const EPS: f64 = 1e-6;

    #[test]
    fn live_sampler_reports_sane_shares() {
        let sampler = CpuSampler::start().unwrap();
        let spin_until = Instant::now() + Duration::from_millis(50);
        let mut x = 0u64;
        while Instant::now() < spin_until {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let r = sampler.finish().unwrap();

        assert!(r.elapsed >= Nanos::from_millis(50), "elapsed {}", r.elapsed);
        assert!(!r.cores.is_empty());
        for c in r.cores.iter().chain(std::iter::once(&r.total)) {
            let fields = [
                c.user, c.nice, c.sys, c.irq, c.softirq, c.iowait, c.steal, c.idle,
            ];
            for f in fields {
                assert!((-EPS..=100.0 + EPS).contains(&f.0), "{c:?}");
            }
            let sum: f64 = fields.iter().map(|f| f.0).sum();
            assert!((sum - 100.0).abs() < EPS, "sum {sum} for {c:?}");
        }
        assert!(r.busy_cores >= 0.0 && r.busy_cores <= r.cores.len() as f64 + EPS);
        assert!(r.process.user.0 + r.process.sys.0 > 0, "{:?}", r.process);

        // finish does not consume: a second call covers a longer interval.
        let again = sampler.finish().unwrap();
        assert!(again.elapsed >= r.elapsed);
    }

    #[test]
    fn watched_interface_gets_nic_activity() {
        let r = CpuSampler::start().unwrap().finish().unwrap();
        assert_eq!(r.nic, None, "nothing watched");
        let s = CpuSampler::start().unwrap().watch(Some("lo".into()));
        let r = s.finish().unwrap();
        assert_eq!(r.nic.expect("watched").interface, "lo");
    }

    #[test]
    fn live_proc_stat_has_cores() {
        let s = read_proc_stat().unwrap();
        assert!(!s.cores.is_empty());
        assert!(s.total.total() > 0);
    }
}
