//! The CPU limits of the cgroup this process runs in: its quota (the tightest
//! from its own cgroup up to the hierarchy's root), the quota's throttling,
//! and its cpuset. cgroup v1 (`cpu.cfs_quota_us`, `cpu.cfs_period_us`,
//! `cpu.stat`'s `throttled_time` in ns, `cpuset.effective_cpus`) and v2
//! (`cpu.max`, `cpu.stat`'s `throttled_usec`, `cpuset.cpus.effective`), the
//! controllers' mounts found in `/proc/self/mountinfo` and the process's
//! cgroups in `/proc/self/cgroup`. Parsing is pure and tested on captures.

use std::path::{Path, PathBuf};

use netsonde_model::cpu::CgroupCpu;
use netsonde_model::units::Nanos;

/// Where a controller's files are: the mount of its hierarchy and the
/// process's cgroup in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// 1 or 2.
    pub version: u8,
    /// The hierarchy's mount point.
    pub mount: PathBuf,
    /// The cgroup's path within it, as `/proc/self/cgroup` gives it.
    pub path: String,
}

impl Placement {
    /// The cgroup's folder, and its ancestors' up to the mount, innermost first.
    fn dirs(&self) -> Vec<(String, PathBuf)> {
        let mut out = Vec::new();
        let mut path = self.path.trim_end_matches('/').to_string();
        loop {
            let dir = self.mount.join(path.trim_start_matches('/'));
            out.push((
                if path.is_empty() {
                    "/".into()
                } else {
                    path.clone()
                },
                dir,
            ));
            match path.rfind('/') {
                Some(i) if !path.is_empty() => path.truncate(i),
                _ => break,
            }
        }
        out
    }
}

/// Where `controller`'s files are for this process: its v1 hierarchy if one
/// has it, else the v2 hierarchy (whose controllers are all in one place).
pub fn placement(controller: &str, cgroups: &str, mountinfo: &str) -> Option<Placement> {
    let mut v2 = None;
    for line in cgroups.lines() {
        let mut f = line.splitn(3, ':');
        let (id, ctrls, path) = (f.next()?, f.next()?, f.next()?);
        if id == "0" && ctrls.is_empty() {
            v2 = Some(path.to_string());
        } else if ctrls.split(',').any(|c| c == controller) {
            let mount = mount_of(mountinfo, |fs, opts| {
                fs == "cgroup" && opts.split(',').any(|o| o == controller)
            })?;
            return Some(Placement {
                version: 1,
                mount,
                path: path.to_string(),
            });
        }
    }
    let path = v2?;
    let mount = mount_of(mountinfo, |fs, _| fs == "cgroup2")?;
    Some(Placement {
        version: 2,
        mount,
        path,
    })
}

/// The first mount whose file system type and super options `pick` accepts.
fn mount_of(mountinfo: &str, pick: impl Fn(&str, &str) -> bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let point = left.split(' ').nth(4)?;
        let mut r = right.split(' ');
        let (fs, _source, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
        pick(fs, opts).then(|| PathBuf::from(point))
    })
}

/// A v1 quota: `cpu.cfs_quota_us` and `cpu.cfs_period_us` (µs; -1 unlimited).
pub fn parse_v1_quota(quota: &str, period: &str) -> Option<(f64, Nanos)> {
    let q: i64 = quota.trim().parse().ok()?;
    let p: u64 = period.trim().parse().ok()?;
    (q > 0 && p > 0).then(|| (q as f64 / p as f64, Nanos(p * 1000)))
}

/// A v2 quota: `cpu.max` ("max 100000" unlimited, "30000 100000").
pub fn parse_v2_max(max: &str) -> Option<(f64, Nanos)> {
    let mut f = max.split_whitespace();
    let q: u64 = f.next()?.parse().ok()?;
    let p: u64 = f.next()?.parse().ok()?;
    (q > 0 && p > 0).then(|| (q as f64 / p as f64, Nanos(p * 1000)))
}

/// `cpu.stat`'s periods, throttled periods and throttled time (v1's
/// `throttled_time` is ns, v2's `throttled_usec` µs).
pub fn parse_stat(stat: &str) -> (u64, u64, Nanos) {
    let mut out = (0, 0, Nanos(0));
    for line in stat.lines() {
        let mut f = line.split_whitespace();
        let (Some(k), Some(v)) = (f.next(), f.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "nr_periods" => out.0 = v,
            "nr_throttled" => out.1 = v,
            "throttled_time" => out.2 = Nanos(v),
            "throttled_usec" => out.2 = Nanos(v.saturating_mul(1000)),
            _ => {}
        }
    }
    out
}

/// A reading of the cgroup's limits and counters.
#[derive(Debug, Clone, PartialEq)]
pub struct CgroupSnapshot {
    now: CgroupCpu,
}

impl CgroupSnapshot {
    /// Reads this process's cgroup now; `None` without a cpu controller.
    pub fn read() -> Option<CgroupSnapshot> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let cpu = placement("cpu", &cgroups, &mountinfo)?;
        let mut now = read_quota(&cpu);
        now.cpus = placement("cpuset", &cgroups, &mountinfo).and_then(|p| {
            let file = if p.version == 1 {
                "cpuset.effective_cpus"
            } else {
                "cpuset.cpus.effective"
            };
            let dir = p.dirs().into_iter().next()?.1;
            let text = std::fs::read_to_string(dir.join(file)).ok()?;
            Some(text.trim().to_string()).filter(|t| !t.is_empty())
        });
        Some(CgroupSnapshot { now })
    }

    /// The limits now, and the counters' change since `self`.
    pub fn since(&self, later: &CgroupSnapshot) -> CgroupCpu {
        let (a, b) = (&self.now, &later.now);
        let same = a.path == b.path;
        CgroupCpu {
            periods: if same {
                b.periods.saturating_sub(a.periods)
            } else {
                0
            },
            throttled_periods: if same {
                b.throttled_periods.saturating_sub(a.throttled_periods)
            } else {
                0
            },
            throttled: if same {
                b.throttled.saturating_sub(a.throttled)
            } else {
                Nanos(0)
            },
            ..b.clone()
        }
    }
}

/// The tightest quota from the process's cgroup up, with that cgroup's
/// counters (the innermost cgroup's when none has a quota).
fn read_quota(p: &Placement) -> CgroupCpu {
    let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).ok();
    let mut best: Option<CgroupCpu> = None;
    for (path, dir) in p.dirs() {
        let quota = match p.version {
            1 => read(&dir, "cpu.cfs_quota_us")
                .zip(read(&dir, "cpu.cfs_period_us"))
                .and_then(|(q, per)| parse_v1_quota(&q, &per)),
            _ => read(&dir, "cpu.max").and_then(|m| parse_v2_max(&m)),
        };
        let (periods, throttled_periods, throttled) =
            read(&dir, "cpu.stat").map_or((0, 0, Nanos(0)), |s| parse_stat(&s));
        let here = CgroupCpu {
            version: p.version,
            path,
            quota_cores: quota.map(|q| q.0),
            period: quota.map(|q| q.1),
            periods,
            throttled_periods,
            throttled,
            cpus: None,
        };
        let tighter = match (&best, here.quota_cores) {
            (None, _) => true,
            (Some(b), Some(q)) => b.quota_cores.is_none_or(|bq| q < bq),
            (Some(_), None) => false,
        };
        if tighter {
            best = Some(here);
        }
    }
    best.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This machine's kind: v1 controllers, v2 mounted beside them.
    const HYBRID_CGROUP: &str = "12:pids:/\n4:memory:/process_api/b1f0\n3:cpuset:/\n\
                                 2:cpuacct:/\n1:cpu:/sonde-q\n0::/\n";
    const HYBRID_MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
31 25 0:27 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu
32 25 0:28 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct
33 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset
";
    /// A v2-only host (a current distribution, a Kubernetes node).
    const V2_CGROUP: &str = "0::/kubepods/pod1/c1\n";
    const V2_MOUNTS: &str =
        "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n";

    #[test]
    fn the_cpu_controller_is_found_in_v1_before_v2_and_in_v2_alone() {
        let p = placement("cpu", HYBRID_CGROUP, HYBRID_MOUNTS).unwrap();
        assert_eq!(p.version, 1);
        assert_eq!(p.mount, PathBuf::from("/sys/fs/cgroup/cpu"));
        assert_eq!(p.path, "/sonde-q");
        let dirs: Vec<_> = p.dirs().into_iter().map(|d| d.1).collect();
        assert_eq!(
            dirs,
            vec![
                PathBuf::from("/sys/fs/cgroup/cpu/sonde-q"),
                PathBuf::from("/sys/fs/cgroup/cpu")
            ]
        );
        let p = placement("cpu", V2_CGROUP, V2_MOUNTS).unwrap();
        assert_eq!(p.version, 2);
        let dirs: Vec<_> = p.dirs().into_iter().map(|d| d.0).collect();
        assert_eq!(
            dirs,
            vec!["/kubepods/pod1/c1", "/kubepods/pod1", "/kubepods", "/"]
        );
        assert_eq!(placement("cpu", "garbage", ""), None);
    }

    #[test]
    fn quotas_and_throttling_parse_in_both_versions() {
        assert_eq!(
            parse_v1_quota("30000\n", "100000\n"),
            Some((0.3, Nanos(100_000_000)))
        );
        assert_eq!(parse_v1_quota("-1\n", "100000\n"), None);
        assert_eq!(
            parse_v2_max("30000 100000\n"),
            Some((0.3, Nanos(100_000_000)))
        );
        assert_eq!(parse_v2_max("max 100000\n"), None);
        let v1 = "nr_periods 33\nnr_throttled 31\nthrottled_time 2203999870\nnr_bursts 0\n";
        assert_eq!(parse_stat(v1), (33, 31, Nanos(2_203_999_870)));
        let v2 = "usage_usec 1\nnr_periods 10\nnr_throttled 4\nthrottled_usec 120000\n";
        assert_eq!(parse_stat(v2), (10, 4, Nanos(120_000_000)));
    }

    #[test]
    fn this_process_has_a_reading_where_the_kernel_has_the_controller() {
        match CgroupSnapshot::read() {
            Some(a) => {
                let c = a.since(&a);
                assert!(c.version == 1 || c.version == 2);
                assert_eq!(c.periods, 0);
            }
            None => eprintln!("skipped: no cgroup cpu controller here"),
        }
    }
}
