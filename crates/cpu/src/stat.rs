//! Parsing `/proc/stat` into a [`StatSnapshot`]. Pure: text in, counters out.
//!
//! The lines this reads look like
//!
//! ```text
//! cpu  4000 100 2100 50000 300 40 150 0 500 0
//! cpu0 2500 60 1200 24000 100 30 120 0 400 0
//! ctxt 987654
//! ```
//!
//! The columns after the name are, in order: user, nice, system, idle, iowait, irq,
//! softirq, steal, guest, guest_nice, in `USER_HZ` ticks (jiffies). Kernels before 2.6
//! print fewer of them (2.4 has only the first four); missing trailing columns read as
//! zero. guest and guest_nice are already counted in user and nice, so they are
//! ignored rather than counted twice. Lines other than `cpu*` and `ctxt` are skipped.

use std::collections::BTreeMap;

use crate::CpuError;

/// Fewest columns a `cpu` line can have (user, nice, system, idle: Linux 2.4).
const MIN_COLUMNS: usize = 4;

/// One `cpu` line's counters, in jiffies since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// User mode (includes guest time).
    pub user: u64,
    /// User mode at low priority (includes guest_nice time).
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with outstanding disk I/O (Linux 2.5.41 on; 0 before).
    pub iowait: u64,
    /// Hardware interrupts (Linux 2.6.0 on; 0 before).
    pub irq: u64,
    /// Software interrupts (Linux 2.6.0 on; 0 before).
    pub softirq: u64,
    /// Stolen by the hypervisor (Linux 2.6.11 on; 0 before).
    pub steal: u64,
}

impl CpuTimes {
    /// Sum of all columns: the core's whole time.
    pub fn total(&self) -> u64 {
        self.user
            .saturating_add(self.nice)
            .saturating_add(self.system)
            .saturating_add(self.idle)
            .saturating_add(self.iowait)
            .saturating_add(self.irq)
            .saturating_add(self.softirq)
            .saturating_add(self.steal)
    }

    /// Column-wise `self - earlier`, saturating at zero. Saturating matters: iowait is
    /// known to go backwards on some kernels.
    pub fn saturating_sub(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            nice: self.nice.saturating_sub(earlier.nice),
            system: self.system.saturating_sub(earlier.system),
            idle: self.idle.saturating_sub(earlier.idle),
            iowait: self.iowait.saturating_sub(earlier.iowait),
            irq: self.irq.saturating_sub(earlier.irq),
            softirq: self.softirq.saturating_sub(earlier.softirq),
            steal: self.steal.saturating_sub(earlier.steal),
        }
    }

    /// From the numeric columns of one line; `None` when there are too few.
    fn from_columns(cols: &[u64]) -> Option<CpuTimes> {
        if cols.len() < MIN_COLUMNS {
            return None;
        }
        let col = |i: usize| cols.get(i).copied().unwrap_or(0);
        Some(CpuTimes {
            user: col(0),
            nice: col(1),
            system: col(2),
            idle: col(3),
            iowait: col(4),
            irq: col(5),
            softirq: col(6),
            steal: col(7),
        })
    }
}

/// Raw snapshot of `/proc/stat`: the aggregate `cpu` line, one entry per `cpuN` line,
/// and the system-wide context switch count.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StatSnapshot {
    /// The aggregate `cpu` line (all cores summed).
    pub total: CpuTimes,
    /// Per-core counters by core number, for the cores online when read.
    pub cores: BTreeMap<u32, CpuTimes>,
    /// Context switches since boot, system-wide (`ctxt`), when present.
    pub ctxt: Option<u64>,
}

/// Parses the text of `/proc/stat`.
///
/// Tolerates missing trailing columns (old kernels) and unknown lines; fails on a
/// `cpu` or `ctxt` line that does not parse, on a repeated core, and when there is no
/// aggregate `cpu` line at all (which is what any other file looks like).
pub fn parse_proc_stat(text: &str) -> Result<StatSnapshot, CpuError> {
    let mut total = None;
    let mut cores = BTreeMap::new();
    let mut ctxt = None;

    for (idx, line) in text.lines().enumerate() {
        let bad = |reason: &'static str| CpuError::BadStatLine {
            line_no: idx + 1,
            line: line.to_string(),
            reason,
        };
        let mut fields = line.split_whitespace();
        let Some(name) = fields.next() else {
            continue;
        };
        if name == "ctxt" {
            let value = fields.next().ok_or_else(|| bad("ctxt has no value"))?;
            ctxt = Some(value.parse().map_err(|_| bad("ctxt is not a number"))?);
            continue;
        }
        let Some(suffix) = name.strip_prefix("cpu") else {
            continue;
        };
        let cols = fields
            .map(str::parse::<u64>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad("a column is not a number"))?;
        let times = CpuTimes::from_columns(&cols)
            .ok_or_else(|| bad("fewer than 4 columns (user nice system idle)"))?;
        if suffix.is_empty() {
            if total.replace(times).is_some() {
                return Err(bad("second aggregate cpu line"));
            }
        } else {
            let core: u32 = suffix
                .parse()
                .map_err(|_| bad("core number is not a number"))?;
            if cores.insert(core, times).is_some() {
                return Err(bad("core listed twice"));
            }
        }
    }

    Ok(StatSnapshot {
        total: total.ok_or(CpuError::NoAggregateLine)?,
        cores,
        ctxt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = include_str!("../tests/fixtures/proc_stat_before.txt");
    const OLD_KERNEL: &str = include_str!("../tests/fixtures/proc_stat_old_kernel.txt");
    const GARBAGE: &str = include_str!("../tests/fixtures/proc_stat_garbage.txt");

    #[test]
    fn modern_kernel_reads_every_column_but_guest() {
        let s = parse_proc_stat(BEFORE).unwrap();
        assert_eq!(
            s.total,
            CpuTimes {
                user: 4000,
                nice: 100,
                system: 2100,
                idle: 50000,
                iowait: 300,
                irq: 40,
                softirq: 150,
                steal: 0,
            }
        );
        assert_eq!(s.cores.keys().copied().collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(s.cores[&0].user, 2500);
        assert_eq!(s.cores[&0].softirq, 120);
        assert_eq!(s.cores[&1].iowait, 200);
        // guest (column 9) is part of user already and must not be added again.
        assert_eq!(
            s.cores[&0].total(),
            2500 + 60 + 1200 + 24000 + 100 + 30 + 120
        );
        assert_eq!(s.ctxt, Some(987_654));
    }

    #[test]
    fn old_kernel_missing_columns_read_as_zero() {
        let s = parse_proc_stat(OLD_KERNEL).unwrap();
        assert_eq!(
            s.cores[&1],
            CpuTimes {
                user: 400,
                nice: 10,
                system: 150,
                idle: 4000,
                ..CpuTimes::default()
            }
        );
        assert_eq!(s.total.total(), 9320);
        assert_eq!(s.ctxt, Some(115_315));
    }

    #[test]
    fn ctxt_is_optional() {
        let s = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!(s.ctxt, None);
        assert_eq!(s.cores.len(), 1);
    }

    #[test]
    fn non_numeric_column_is_an_error_naming_the_line() {
        let err = parse_proc_stat(GARBAGE).unwrap_err();
        match &err {
            CpuError::BadStatLine { line_no, line, .. } => {
                assert_eq!(*line_no, 3);
                assert!(line.starts_with("cpu1 1500 forty"));
            }
            other => panic!("unexpected error {other:?}"),
        }
        assert!(err.to_string().contains("line 3"), "{err}");
    }

    #[test]
    fn other_garbage_is_an_error() {
        let cases = [
            ("", "empty"),
            ("hello world\n", "prose"),
            ("\u{0}\u{1}\u{7f}binary\n", "binary"),
            ("cpu0 1 2 3 4\n", "no aggregate line"),
        ];
        for (text, what) in cases {
            assert!(
                matches!(parse_proc_stat(text), Err(CpuError::NoAggregateLine)),
                "{what}"
            );
        }
        let bad_line = [
            ("cpu 1 2 3\n", "three columns"),
            ("cpu 1 2 3 4\ncpux 1 2 3 4\n", "core is not a number"),
            ("cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu0 1 2 3 4\n", "core twice"),
            ("cpu 1 2 3 4\ncpu 1 2 3 4\n", "aggregate twice"),
            ("cpu 1 2 3 -4\n", "negative"),
            ("cpu 1 2 3 4\nctxt lots\n", "ctxt not a number"),
            ("cpu 1 2 3 4\nctxt\n", "ctxt without value"),
        ];
        for (text, what) in bad_line {
            assert!(
                matches!(parse_proc_stat(text), Err(CpuError::BadStatLine { .. })),
                "{what}"
            );
        }
    }
}
