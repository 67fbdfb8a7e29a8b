//! `/proc/interrupts`, which lines belong to a NIC, and the kernel's CPU lists.
//!
//! The header names the online cores' columns (`CPU0 CPU2` when core 1 is
//! offline); each numbered line has one count per column, then the interrupt
//! chip, the hardware IRQ and the action names. Lines with a name instead of a
//! number (`NMI`, `LOC`) are the architecture's and belong to no device.

/// One numbered line of `/proc/interrupts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrqLine {
    /// The IRQ number.
    pub irq: u32,
    /// Count per core, as `(core, count)` in header order.
    pub counts: Vec<(u32, u64)>,
    /// Everything after the counts (chip, hardware IRQ, action names).
    pub desc: String,
}

impl IrqLine {
    /// The last action's name: the last word of the description
    /// (`virtio2-input.0`, `ice-lan1-TxRx-0`).
    pub fn name(&self) -> &str {
        self.desc.split_whitespace().last().unwrap_or("")
    }
}

/// Parses `/proc/interrupts` text into its numbered lines. Without a `CPUn`
/// header there are no columns to read, so no lines; counts that do not parse
/// end a line's counts. Never panics.
pub fn parse_interrupts(text: &str) -> Vec<IrqLine> {
    let mut lines = text.lines();
    let cores: Vec<u32> = match lines.next() {
        Some(header) => header
            .split_whitespace()
            .filter_map(|w| w.strip_prefix("CPU")?.parse().ok())
            .collect(),
        None => return Vec::new(),
    };
    if cores.is_empty() {
        return Vec::new();
    }
    lines
        .filter_map(|line| {
            let (irq, rest) = line.trim_start().split_once(':')?;
            let irq: u32 = irq.trim().parse().ok()?;
            let mut counts = Vec::with_capacity(cores.len());
            let mut rest = rest.trim_start();
            for &core in &cores {
                let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                let Ok(n) = rest[..end].parse::<u64>() else {
                    break;
                };
                counts.push((core, n));
                rest = rest[end..].trim_start();
            }
            Some(IrqLine {
                irq,
                counts,
                desc: rest.trim().to_string(),
            })
        })
        .collect()
}

/// What identifies a NIC's interrupt lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NicIds<'a> {
    /// The interface's name (`ice-lan1-TxRx-0`, `eth0-TxRx-0`).
    pub ifname: &'a str,
    /// Its PCI address (`0000:81:00.0`, in `mlx5_comp0@pci:0000:81:00.0` and in
    /// newer kernels' chip column `PCI-MSIX-0000:00:03.0`).
    pub pci: Option<&'a str>,
    /// Its virtio device (`virtio2`, in `virtio2-input.0`).
    pub virtio: Option<&'a str>,
    /// The IRQs of the device's `msi_irqs/` folder in sysfs.
    pub msi: &'a [u32],
}

/// The lines that belong to the NIC: those listed in its `msi_irqs/` when there
/// are any, else those whose description names the interface (as a whole word),
/// its PCI address or its virtio device.
pub fn nic_lines<'l>(lines: &'l [IrqLine], ids: &NicIds<'_>) -> Vec<&'l IrqLine> {
    if !ids.msi.is_empty() {
        return lines.iter().filter(|l| ids.msi.contains(&l.irq)).collect();
    }
    lines
        .iter()
        .filter(|l| {
            has_word(&l.desc, ids.ifname)
                || ids.pci.is_some_and(|p| !p.is_empty() && l.desc.contains(p))
                || ids
                    .virtio
                    .is_some_and(|v| l.desc.split_whitespace().any(|w| is_virtio_queue(w, v)))
        })
        .collect()
}

/// `virtio2-input.0` for `virtio2` (not `virtio22-input.0`).
fn is_virtio_queue(word: &str, dev: &str) -> bool {
    !dev.is_empty() && word.strip_prefix(dev).is_some_and(|r| r.starts_with('-'))
}

/// Whether `text` has `word` with no letter, digit or `_` on either side
/// (`eth1` is in `eth1-TxRx-0`, not in `eth10-TxRx-0`).
fn has_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
    text.match_indices(word).any(|(at, _)| {
        edge(text[..at].chars().next_back()) && edge(text[at + word.len()..].chars().next())
    })
}

/// Parses a kernel CPU list (`0-3,8,10-11`) into cores, in order. A part that
/// does not parse, or a range of more than 65,536, is skipped.
pub fn parse_cpulist(text: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for part in text
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    if a <= b && b - a <= 65_536 {
                        out.extend(a..=b);
                    }
                }
            }
            None => out.extend(part.parse::<u32>().ok()),
        }
    }
    out
}

/// Per core, how many interrupts `lines` took between two readings (lines by
/// IRQ number; a line or core only one reading has is left out; a count that
/// went backwards counts 0). Cores that took none are left out.
pub fn irq_deltas(
    before: &[IrqLine],
    after: &[IrqLine],
    irqs: &[u32],
) -> std::collections::BTreeMap<u32, u64> {
    let mut per_core = std::collections::BTreeMap::new();
    for b in after.iter().filter(|l| irqs.contains(&l.irq)) {
        let Some(a) = before.iter().find(|l| l.irq == b.irq) else {
            continue;
        };
        for &(core, n) in &b.counts {
            if let Some(&(_, m)) = a.counts.iter().find(|(c, _)| *c == core) {
                let d = n.saturating_sub(m);
                if d > 0 {
                    *per_core.entry(core).or_insert(0u64) += d;
                }
            }
        }
    }
    per_core
}

#[cfg(test)]
mod tests {
    use super::*;

    const ICE: &str = include_str!("../../tests/fixtures/nic/ice/interrupts.txt");
    const VIRTIO: &str = include_str!("../../tests/fixtures/nic/virtio/interrupts.txt");
    const GARBAGE: &str = include_str!("../../tests/fixtures/nic/garbage.txt");

    #[test]
    fn ice_lines_are_found_by_interface_and_pci_address() {
        let lines = parse_interrupts(ICE);
        assert!(lines.iter().all(|l| l.counts.len() == 16), "{lines:?}");
        let ids = NicIds {
            ifname: "lan1",
            pci: Some("0000:65:00.1"),
            ..NicIds::default()
        };
        let mine: Vec<&str> = nic_lines(&lines, &ids).iter().map(|l| l.name()).collect();
        assert_eq!(mine[0], "ice-0000:65:00.1:misc");
        assert!(mine.contains(&"ice-lan1-TxRx-0"), "{mine:?}");
        assert!(mine.contains(&"ice-lan1-TxRx-2"), "{mine:?}");
        assert_eq!(mine.len(), 4, "{mine:?}");
        assert!(!mine.iter().any(|n| n.contains("65:00.0")), "{mine:?}");
        let first = lines
            .iter()
            .find(|l| l.name() == "ice-lan1-TxRx-0")
            .unwrap();
        assert_eq!(first.irq, 78);
        assert_eq!(first.counts[0], (0, 1670));
    }

    #[test]
    fn virtio_lines_are_found_by_device_or_msi_irqs() {
        let lines = parse_interrupts(VIRTIO);
        let by_name = NicIds {
            ifname: "eth0",
            virtio: Some("virtio2"),
            ..NicIds::default()
        };
        let mine: Vec<&str> = nic_lines(&lines, &by_name)
            .iter()
            .map(|l| l.name())
            .collect();
        assert_eq!(
            mine,
            ["virtio2-config", "virtio2-input.0", "virtio2-output.0"]
        );
        let msi = [38, 39];
        let by_msi = NicIds {
            msi: &msi,
            ..by_name
        };
        let irqs: Vec<u32> = nic_lines(&lines, &by_msi).iter().map(|l| l.irq).collect();
        assert_eq!(irqs, [38, 39]);
        // The architecture's lines (LOC, NMI) are not parsed as IRQs.
        assert!(lines.iter().all(|l| l.irq < 1000));
    }

    #[test]
    fn words_do_not_match_inside_longer_names() {
        assert!(has_word("ice-eth1-TxRx-0", "eth1"));
        assert!(!has_word("ice-eth10-TxRx-0", "eth1"));
        assert!(!has_word("xeth1", "eth1"));
        assert!(!has_word("anything", ""));
        assert!(!is_virtio_queue("virtio22-input.0", "virtio2"));
    }

    #[test]
    fn deltas_per_core() {
        let before =
            "  CPU0 CPU2\n 38: 10 5 PCI-MSIX x virtio2-input.0\n 39: 1 1 PCI x virtio2-output.0\n";
        let after =
            "  CPU0 CPU2\n 38: 15 5 PCI-MSIX x virtio2-input.0\n 39: 1 9 PCI x virtio2-output.0\n";
        let d = irq_deltas(
            &parse_interrupts(before),
            &parse_interrupts(after),
            &[38, 39],
        );
        assert_eq!(d, [(0, 5), (2, 8)].into_iter().collect());
        let d = irq_deltas(&parse_interrupts(after), &parse_interrupts(before), &[38]);
        assert!(d.is_empty(), "a counter going back counts nothing");
    }

    #[test]
    fn cpulists() {
        assert_eq!(parse_cpulist("0-3,8,10-11\n"), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpulist("5"), [5]);
        assert!(parse_cpulist("").is_empty());
        assert!(parse_cpulist("3-1,x,-,0-4294967295").is_empty());
    }

    #[test]
    fn garbage_gives_nothing_and_no_panic() {
        for l in parse_interrupts(GARBAGE) {
            let _ = l.name();
        }
        assert!(parse_interrupts("").is_empty());
        assert!(parse_interrupts("no header\n 1: 2 3 x\n").is_empty());
        let odd = parse_interrupts("CPU0 CPU1\n 7: 12\n 8:\n x: 1 2\n 9: 1 y z\n");
        assert_eq!(odd.len(), 3);
        assert_eq!(odd[2].counts, [(0, 1)]);
    }
}
