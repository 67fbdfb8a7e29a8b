//! What the other processes on the host ran: the foreign load.
//!
//! Every user process's CPU time (`utime` + `stime` in `/proc/PID/stat`, in clock
//! ticks) except this process's own, summed at the start and at the end of an
//! interval. Kernel threads are left out: on a host that runs a network test, their
//! busy time (ksoftirqd, the NIC's workers) is network work done for the test.
//! Processes that start during the interval count all their time; those that exit
//! during it count nothing, so the figure can only err low.

use std::collections::HashMap;

use netsonde_model::units::Nanos;

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags: a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// CPU ticks of every other user process, by pid.
#[derive(Debug, Clone, Default)]
pub struct Others {
    ticks: HashMap<u32, u64>,
}

/// One `/proc/PID/stat` line: its flags and utime + stime in ticks.
pub fn parse_stat(line: &str) -> Option<(u64, u64)> {
    // The command name is in parentheses and may hold spaces or parentheses.
    let rest = &line[line.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, flags 9, utime 14, stime 15.
    let flags = f.get(6)?.parse().ok()?;
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some((flags, utime + stime))
}

impl Others {
    /// Reads every process's figures now.
    pub fn read() -> Others {
        let me = std::process::id();
        let mut ticks = HashMap::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Others { ticks };
        };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(line) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if let Some((flags, t)) = parse_stat(&line) {
                if flags & PF_KTHREAD == 0 {
                    ticks.insert(pid, t);
                }
            }
        }
        Others { ticks }
    }

    /// The CPU time the other processes ran between `self` (earlier) and `later`.
    pub fn since(&self, later: &Others) -> Nanos {
        let hz = nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
            .ok()
            .flatten()
            .filter(|&h| h > 0)
            .unwrap_or(100) as u64;
        let ticks: u64 = later
            .ticks
            .iter()
            .map(|(pid, &t)| t.saturating_sub(self.ticks.get(pid).copied().unwrap_or(0)))
            .sum();
        Nanos(ticks.saturating_mul(1_000_000_000) / hz)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn stat_lines_parse_whatever_the_name() {
        let line =
            "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 40 0 0 20 0 1 0 5 0 0";
        assert_eq!(parse_stat(line), Some((4194560, 290)));
        let kthread = "12 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 7 31 0 0 20 0 1 0 5 0 0";
        let (flags, t) = parse_stat(kthread).unwrap();
        assert!(flags & PF_KTHREAD != 0);
        assert_eq!(t, 38);
        assert_eq!(parse_stat("garbage"), None);
    }

    /// A child that spins shows up; this process, spinning too, does not.
    #[test]
    fn another_process_spinning_is_counted_and_this_one_is_not() {
        let before = Others::read();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_millis(300);
        let mut x = 0u64;
        while Instant::now() < until {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let after = Others::read();
        let _ = child.kill();
        let _ = child.wait();
        let ran = before.since(&after);
        // On two cores both spin at once; the child's 300 ms are counted at the
        // kernel's tick (10 ms), ours are not at all.
        assert!(
            ran >= Nanos::from_millis(200) && ran < Nanos::from_millis(550),
            "{ran}"
        );
    }
}
