//! `/proc/net/softnet_stat`: one line per core of hexadecimal columns. Column 1
//! is packets processed, 2 packets dropped at a full input backlog
//! (`netdev_max_backlog`), 3 times the receive softirq stopped with work left
//! (`time_squeeze`: out of `netdev_budget` or `netdev_budget_usecs`). Since
//! Linux 5.10 column 13 is the core's number, which is not the line's index
//! when cores are offline; older kernels have fewer columns, and there the
//! line's index is used.

use netsonde_model::nic::SoftnetCore;

/// One core's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SoftnetRow {
    /// The core.
    pub core: u32,
    /// Packets processed.
    pub processed: u64,
    /// Backlog drops.
    pub dropped: u64,
    /// Squeezes.
    pub time_squeeze: u64,
}

/// Parses the file's text. A line with fewer than three hexadecimal columns is
/// skipped (and still takes its index). Never panics.
pub fn parse_softnet(text: &str) -> Vec<SoftnetRow> {
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let cols: Vec<u64> = line
                .split_whitespace()
                .map_while(|w| u64::from_str_radix(w, 16).ok())
                .collect();
            if cols.len() < 3 {
                return None;
            }
            let core = match cols.get(12) {
                Some(&c) => u32::try_from(c).ok()?,
                None => u32::try_from(i).ok()?,
            };
            Some(SoftnetRow {
                core,
                processed: cols[0],
                dropped: cols[1],
                time_squeeze: cols[2],
            })
        })
        .collect()
}

/// Per core, the drops and squeezes between two readings; cores where both are
/// zero, or that only one reading has, are left out. The counters are 32-bit
/// in the kernel and wrap: a smaller second reading is taken as one wrap.
pub fn softnet_deltas(before: &[SoftnetRow], after: &[SoftnetRow]) -> Vec<SoftnetCore> {
    let d32 = |a: u64, b: u64| {
        if b >= a {
            b - a
        } else {
            (b + (1 << 32)).saturating_sub(a)
        }
    };
    after
        .iter()
        .filter_map(|b| {
            let a = before.iter().find(|a| a.core == b.core)?;
            let s = SoftnetCore {
                core: b.core,
                dropped: d32(a.dropped, b.dropped),
                time_squeeze: d32(a.time_squeeze, b.time_squeeze),
            };
            (s.dropped > 0 || s.time_squeeze > 0).then_some(s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VIRTIO: &str = include_str!("../../tests/fixtures/nic/virtio/softnet_stat.txt");
    const GARBAGE: &str = include_str!("../../tests/fixtures/nic/garbage.txt");

    #[test]
    fn captured_softnet_has_a_row_per_core_with_its_number() {
        let rows = parse_softnet(VIRTIO);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].core, 0);
        assert_eq!(rows[1].core, 1);
        assert!(rows[0].processed > 0);
    }

    #[test]
    fn core_number_comes_from_column_13_when_present() {
        // Core 1 offline: the second line is core 2.
        let text = "\
00000010 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000
00000020 00000003 00000004 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000002 00000000 00000000
";
        let rows = parse_softnet(text);
        assert_eq!(rows[1].core, 2);
        assert_eq!(rows[1].dropped, 3);
        assert_eq!(rows[1].time_squeeze, 4);
        // An old kernel's 11 columns: the index is the core.
        let old = "0000a000 00000000 0000000f 0 0 0 0 0 0 0 0\n0000b000 00000001 00000000 0 0 0 0 0 0 0 0\n";
        let rows = parse_softnet(old);
        assert_eq!((rows[1].core, rows[1].dropped), (1, 1));
        assert_eq!(rows[0].time_squeeze, 15);
    }

    #[test]
    fn deltas_skip_quiet_cores_and_survive_wraps() {
        let a = [
            SoftnetRow {
                core: 0,
                processed: 1,
                dropped: 5,
                time_squeeze: 0,
            },
            SoftnetRow {
                core: 1,
                processed: 1,
                dropped: 0xffff_fff0,
                time_squeeze: 3,
            },
        ];
        let b = [
            SoftnetRow {
                core: 0,
                processed: 9,
                dropped: 5,
                time_squeeze: 0,
            },
            SoftnetRow {
                core: 1,
                processed: 9,
                dropped: 0x10,
                time_squeeze: 4,
            },
        ];
        let d = softnet_deltas(&a, &b);
        assert_eq!(
            d,
            [SoftnetCore {
                core: 1,
                dropped: 0x20,
                time_squeeze: 1
            }]
        );
    }

    #[test]
    fn garbage_gives_nothing_and_no_panic() {
        let _ = parse_softnet(GARBAGE);
        assert!(parse_softnet("").is_empty());
        assert!(parse_softnet("zz 1\n1 2\n").is_empty());
        // A core number past u32 is skipped.
        let big = "1 2 3 4 5 6 7 8 9 a b c 1ffffffff\n";
        assert!(parse_softnet(big).is_empty());
    }
}
