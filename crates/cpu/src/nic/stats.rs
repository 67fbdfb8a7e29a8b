//! A NIC's statistics (`ethtool -S`) and which of them count drops.
//!
//! The text form is `NIC statistics:` then one `     name: value` line per
//! counter; [`parse_ethtool_s`] reads it (the fixtures are in that form), and the
//! live path builds the same name/value list from `ETHTOOL_GSTRINGS` and
//! `ETHTOOL_GSTATS`. [`classify`] says what a counter counts, by its name and
//! the driver, from the drivers' sources:
//!
//! | driver | counter | class |
//! |---|---|---|
//! | mlx5_core | `rx_out_of_buffer` (queue counter: no receive WQE posted), `rx_buff_alloc_err`, `rxN_buff_alloc_err` | ring |
//! | mlx5_core | `rx_discards_phy`, `rx_prioN_buf_discard` (port buffer) | port |
//! | mlx5_core | `rx_xdp_drop`, `rxN_xdp_drop` | XDP |
//! | mlx5_core | `rx_wqe_err`, `rxN_wqe_err`, `rx_crc_errors_phy` | error |
//! | mlx5_core | `rx_if_down_packets` | other |
//! | mlx5_core | `tx_queue_dropped`, `txN_dropped` | tx |
//! | ixgbe, igb, e1000e | `rx_no_buffer_count`, `rx_missed_errors`, `rx_no_dma_resources` | ring |
//! | ixgbe | `fdir_miss` (a flow director lookup miss, *not* a drop) | none |
//! | ice | `rx_dropped` (VSI `rx_discards`: no descriptor), `rx_dropped.nic` (port `rx_discards`), `rx_alloc_fail`, `rx_pg_alloc_fail` | ring |
//! | ice | `tx_dropped_link_down.nic`, `tx_errors`, `tx_timeout.nic` | tx |
//! | i40e | `port.rx_dropped` | ring |
//! | virtio_net | `rx_queue_N_drops`, `rx_drops` | ring |
//! | virtio_net, veth | `rx_queue_N_xdp_drops`, `peer_tx_queue_N_xdp_xmit_err`, `tx_queue_N_xdp_xmit_errors` | XDP |
//! | any | `rx_crc_errors`, `rx_length_errors`, `rx_frame_errors` | error |
//! | any | `rx_fifo_errors`, `rx_over_errors` | ring |
//! | any other driver | `rx_dropped` (the netdev's software drops) | other |
//! | any | `tx_dropped`, `tx_timeout_count`, `tx_errors` | tx |
//!
//! Per-queue names are folded before matching: mlx5's `rx3_` and `tx3_`,
//! virtio's and veth's `_queue_3_`, bnx2x's `[3]: ` and be2net's `rxq3: `.

use netsonde_model::nic::DropClass;

/// One `ethtool -S` counter.
pub type Stat = (String, u64);

/// The counters of `ethtool -S` text. Lines before `NIC statistics:` (when it is
/// there), lines without a `name: value` shape, and values that are not
/// unsigned integers are skipped: odd input gives fewer counters, never a panic.
pub fn parse_ethtool_s(text: &str) -> Vec<Stat> {
    let body = match text.find("NIC statistics:") {
        Some(at) => &text[at + "NIC statistics:".len()..],
        None => text,
    };
    body.lines()
        .filter_map(|line| {
            // The value follows the last ": " (bnx2x prints "[0]: rx_bytes: 1").
            let (name, value) = line.trim().rsplit_once(':')?;
            let value = value.trim().parse::<u64>().ok()?;
            let name = name.trim();
            (!name.is_empty()).then(|| (name.to_string(), value))
        })
        .collect()
}

/// A counter's name with its queue number folded away: `rx3_buff_alloc_err` →
/// `rx_buff_alloc_err`, `rx_queue_3_drops` → `rx_queue_drops`, `[3]:
/// rx_discards` → `rx_discards`, `rxq3: rx_drops_no_frags` → `rx_drops_no_frags`.
pub fn fold_queue(name: &str) -> String {
    let name = match name.rsplit_once(": ") {
        Some((_, rest)) => rest,
        None => name,
    };
    let mut out = String::with_capacity(name.len());
    for (i, part) in name.split('_').enumerate() {
        let digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        if digits {
            continue; // rx_queue_3_drops
        }
        let stem = part.trim_end_matches(|c: char| c.is_ascii_digit());
        let folded = if i == 0 && (stem == "rx" || stem == "tx") {
            stem // rx3_..., tx12_...
        } else {
            part
        };
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(folded);
    }
    out
}

/// What the counter `name` of `driver` counts, or `None` when it is not a drop
/// or error counter (packets, bytes, checksum states, flow director misses).
pub fn classify(driver: Option<&str>, name: &str) -> Option<DropClass> {
    let n = fold_queue(name);
    let n = n.as_str();
    let driver = driver.unwrap_or("");
    let class = match n {
        "rx_out_of_buffer"
        | "rx_buff_alloc_err"
        | "rx_no_buffer_count"
        | "rx_missed_errors"
        | "rx_no_dma_resources"
        | "rx_queue_drops"
        | "rx_drops"
        | "port.rx_dropped"
        | "rx_dropped.nic"
        | "rx_alloc_fail"
        | "rx_pg_alloc_fail"
        | "rx_fifo_errors"
        | "rx_over_errors" => DropClass::RxRing,
        "rx_dropped" if driver == "ice" => DropClass::RxRing,
        "rx_discards_phy" => DropClass::RxPort,
        "rx_xdp_drop"
        | "rx_xdp_drops"
        | "rx_queue_xdp_drops"
        | "peer_tx_queue_xdp_xmit_err"
        | "tx_queue_xdp_xmit_errors"
        | "rx_xdp_tx_errors"
        | "rx_queue_xdp_tx_errors"
        | "tx_xdp_tx_drops" => DropClass::Xdp,
        "rx_wqe_err"
        | "rx_crc_errors"
        | "rx_crc_errors_phy"
        | "rx_length_errors"
        | "rx_frame_errors"
        | "rx_length_errors.nic"
        | "rx_crc_errors.nic" => DropClass::RxError,
        "rx_dropped" | "rx_if_down_packets" | "rx_discards" => DropClass::RxOther,
        "tx_dropped"
        | "tx_queue_dropped"
        | "tx_dropped_link_down.nic"
        | "tx_timeout_count"
        | "tx_timeout.nic"
        | "tx_errors"
        | "tx_errors.nic"
        | "tx_tx_timeouts" => DropClass::Tx,
        _ if n.starts_with("rx_prio") && n.ends_with("_buf_discard") => DropClass::RxPort,
        _ => return None,
    };
    Some(class)
}

/// The counters of `before` and `after` that [`classify`] calls drops, with
/// their increase; counters that did not move, or that only one side has, are
/// left out. A counter that went backwards (a driver reset) counts 0. A
/// per-queue counter whose sum the driver also reports (virtio's `rx0_drops`
/// beside `rx_drops`, mlx5's `rx3_buff_alloc_err` beside `rx_buff_alloc_err`)
/// is left out, so a drop is counted once.
pub fn drop_deltas(
    driver: Option<&str>,
    before: &[Stat],
    after: &[Stat],
) -> Vec<netsonde_model::nic::DropCounter> {
    after
        .iter()
        .filter_map(|(name, b)| {
            let class = classify(driver, name)?;
            let folded = fold_queue(name);
            if folded != *name && after.iter().any(|(n, _)| *n == folded) {
                return None;
            }
            let (_, a) = before.iter().find(|(n, _)| n == name)?;
            let delta = b.saturating_sub(*a);
            (delta > 0).then(|| netsonde_model::nic::DropCounter {
                name: name.clone(),
                class,
                delta,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MLX5: &str = include_str!("../../tests/fixtures/nic/mlx5/ethtool_S.txt");
    const MLX5_RINGS: &str = include_str!("../../tests/fixtures/nic/mlx5/ethtool_S_rings.txt");
    const IXGBE: &str = include_str!("../../tests/fixtures/nic/ixgbe/ethtool_S.txt");
    const VIRTIO: &str = include_str!("../../tests/fixtures/nic/virtio/ethtool_S.txt");
    const VETH: &str = include_str!("../../tests/fixtures/nic/veth/ethtool_S.txt");
    const GARBAGE: &str = include_str!("../../tests/fixtures/nic/garbage.txt");

    fn drops_of(driver: &str, stats: &[Stat]) -> Vec<(String, DropClass, u64)> {
        stats
            .iter()
            .filter_map(|(n, v)| Some((n.clone(), classify(Some(driver), n)?, *v)))
            .collect()
    }

    #[test]
    fn queue_numbers_are_folded() {
        assert_eq!(fold_queue("rx3_buff_alloc_err"), "rx_buff_alloc_err");
        assert_eq!(fold_queue("tx12_dropped"), "tx_dropped");
        assert_eq!(fold_queue("rx_queue_3_drops"), "rx_queue_drops");
        assert_eq!(
            fold_queue("peer_tx_queue_0_xdp_xmit_err"),
            "peer_tx_queue_xdp_xmit_err"
        );
        assert_eq!(fold_queue("[3]: rx_discards"), "rx_discards");
        assert_eq!(fold_queue("rxq0: rx_drops_no_frags"), "rx_drops_no_frags");
        assert_eq!(fold_queue("rx_prio0_buf_discard"), "rx_prio0_buf_discard");
        assert_eq!(fold_queue("port.rx_dropped"), "port.rx_dropped");
        assert_eq!(fold_queue(""), "");
    }

    #[test]
    fn mlx5_counters_are_classified() {
        let stats = parse_ethtool_s(MLX5);
        assert!(stats.len() > 20, "{}", stats.len());
        assert_eq!(stats[0], ("rx_packets".to_string(), 845_320_277));
        let drops = drops_of("mlx5_core", &stats);
        let class = |n: &str| drops.iter().find(|d| d.0 == n).map(|d| d.1);
        assert_eq!(class("rx_xdp_drop"), Some(DropClass::Xdp));
        assert_eq!(class("rx_packets"), None);
        assert_eq!(class("rx_csum_none"), None);
        assert_eq!(
            classify(Some("mlx5_core"), "rx_out_of_buffer"),
            Some(DropClass::RxRing)
        );
        assert_eq!(
            classify(Some("mlx5_core"), "rx2_buff_alloc_err"),
            Some(DropClass::RxRing)
        );
        assert_eq!(
            classify(Some("mlx5_core"), "rx_discards_phy"),
            Some(DropClass::RxPort)
        );
        assert_eq!(
            classify(Some("mlx5_core"), "rx_prio3_buf_discard"),
            Some(DropClass::RxPort)
        );
        // This capture's drop counters are all zero.
        assert!(drops.iter().all(|d| d.2 == 0), "{drops:?}");
        // Its per-ring part: rxN_ names fold onto the ring classes.
        let rings = parse_ethtool_s(MLX5_RINGS);
        let drops = drops_of("mlx5_core", &rings);
        let names: Vec<&str> = drops.iter().map(|d| d.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "rx1_wqe_err",
                "rx1_buff_alloc_err",
                "rx2_xdp_drop",
                "rx2_wqe_err",
                "rx2_buff_alloc_err"
            ]
        );
        assert_eq!(drops[1].1, DropClass::RxRing);
        assert_eq!(drops[0].1, DropClass::RxError);
    }

    #[test]
    fn a_per_queue_counter_beside_its_sum_is_counted_once() {
        let before = parse_ethtool_s("rx_drops: 1\nrx0_drops: 1\nrx1_drops: 0\n");
        let after = parse_ethtool_s("rx_drops: 9\nrx0_drops: 5\nrx1_drops: 4\n");
        let d = drop_deltas(Some("virtio_net"), &before, &after);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].name.as_str(), d[0].delta), ("rx_drops", 8));
    }

    #[test]
    fn ixgbe_counters_are_classified_and_fdir_miss_is_not_a_drop() {
        let stats = parse_ethtool_s(IXGBE);
        let drops = drops_of("ixgbe", &stats);
        let class = |n: &str| drops.iter().find(|d| d.0 == n).map(|d| d.1);
        assert_eq!(class("rx_no_buffer_count"), Some(DropClass::RxRing));
        assert_eq!(class("rx_missed_errors"), Some(DropClass::RxRing));
        assert_eq!(class("rx_dropped"), Some(DropClass::RxOther));
        assert_eq!(class("tx_dropped"), Some(DropClass::Tx));
        assert_eq!(class("fdir_miss"), None);
        assert!(stats.iter().any(|(n, v)| n == "fdir_miss" && *v == 1));
        assert!(drops.iter().all(|d| d.2 == 0), "{drops:?}");
    }

    #[test]
    fn ice_names_from_the_driver_source_are_classified() {
        let ice = |n: &str| classify(Some("ice"), n);
        assert_eq!(ice("rx_dropped"), Some(DropClass::RxRing));
        assert_eq!(ice("rx_dropped.nic"), Some(DropClass::RxRing));
        assert_eq!(ice("tx_dropped_link_down.nic"), Some(DropClass::Tx));
        assert_eq!(ice("rx_csum_bad.nic"), None);
        assert_eq!(ice("fdir_sb_match.nic"), None);
        // On other drivers rx_dropped is the netdev's software drops.
        assert_eq!(
            classify(Some("ixgbe"), "rx_dropped"),
            Some(DropClass::RxOther)
        );
        assert_eq!(classify(None, "port.rx_dropped"), Some(DropClass::RxRing));
    }

    #[test]
    fn virtio_and_veth_captures_are_classified() {
        let stats = parse_ethtool_s(VIRTIO);
        let drops = drops_of("virtio_net", &stats);
        let class = |n: &str| drops.iter().find(|d| d.0 == n).map(|d| d.1);
        // Linux 6.18 names: a sum, then per queue.
        assert_eq!(class("rx_drops"), Some(DropClass::RxRing), "{drops:?}");
        assert_eq!(class("rx0_drops"), Some(DropClass::RxRing));
        assert_eq!(class("rx0_xdp_drops"), Some(DropClass::Xdp));
        assert_eq!(class("tx0_xdp_tx_drops"), Some(DropClass::Xdp));
        assert_eq!(class("tx_tx_timeouts"), Some(DropClass::Tx));
        assert_eq!(class("rx0_kicks"), None);
        // Older kernels' names.
        assert_eq!(
            classify(Some("virtio_net"), "rx_queue_3_drops"),
            Some(DropClass::RxRing)
        );
        let stats = parse_ethtool_s(VETH);
        assert!(stats.iter().any(|(n, _)| n == "peer_ifindex"));
        let drops = drops_of("veth", &stats);
        let class = |n: &str| drops.iter().find(|d| d.0 == n).map(|d| d.1);
        assert_eq!(
            class("rx_queue_0_xdp_drops"),
            Some(DropClass::Xdp),
            "{drops:?}"
        );
        assert_eq!(class("rx_queue_0_drops"), Some(DropClass::RxRing));
        assert_eq!(class("tx_queue_0_xdp_xmit_errors"), Some(DropClass::Xdp));
        assert_eq!(class("rx_queue_0_xdp_packets"), None);
        assert_eq!(classify(Some("veth"), "peer_ifindex"), None);
    }

    #[test]
    fn deltas_keep_moved_drop_counters_only() {
        let before = parse_ethtool_s(
            "NIC statistics:\n     rx_packets: 10\n     rx_out_of_buffer: 5\n     rx_discards_phy: 9\n",
        );
        let after = parse_ethtool_s(
            "NIC statistics:\n     rx_packets: 99\n     rx_out_of_buffer: 12\n     rx_discards_phy: 3\n     rx_wqe_err: 4\n",
        );
        let d = drop_deltas(Some("mlx5_core"), &before, &after);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].name, "rx_out_of_buffer");
        assert_eq!(d[0].delta, 7);
        assert_eq!(d[0].class, DropClass::RxRing);
    }

    #[test]
    fn garbage_gives_nothing_and_no_panic() {
        let stats = parse_ethtool_s(GARBAGE);
        for (n, _) in &stats {
            let _ = classify(None, n);
            let _ = fold_queue(n);
        }
        assert!(parse_ethtool_s("").is_empty());
        assert!(parse_ethtool_s("NIC statistics:").is_empty());
        assert!(parse_ethtool_s(":::\n: 5\nx: -1\ny: 1e9\n").is_empty());
    }
}
