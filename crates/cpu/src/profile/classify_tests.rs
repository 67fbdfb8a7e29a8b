//! The classifier on call chains recorded from this kernel (`perf record -e
//! cpu-clock -g` of `netsonde client`, Linux 6.18: `tests/fixtures/profile/`).

use std::collections::BTreeMap;

use super::*;

/// A fixture: (samples, chain leaf first). A user-space leaf is `user:NAME`.
fn fixture(name: &str) -> Vec<(u64, Vec<String>)> {
    let path = format!(
        "{}/tests/fixtures/profile/{name}.chains",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (n, chain) = l.split_once('\t').expect("count TAB chain");
            (
                n.parse().expect("count"),
                chain.split(';').map(String::from).collect(),
            )
        })
        .collect()
}

fn classify_chain(chain: &[String], generic: Category) -> Decision<'_> {
    let names: Vec<&str> = chain.iter().map(|s| s.as_str()).collect();
    match names[0].strip_prefix("user:") {
        Some(u) => {
            let d = user(&[u], generic);
            Decision { by: &chain[0], ..d }
        }
        None => {
            let d = kernel(&names);
            let i = names.iter().position(|n| *n == d.by).unwrap_or(0);
            Decision { by: &chain[i], ..d }
        }
    }
}

/// Samples per category, and the unclassified ones by leaf.
fn tally(name: &str, generic: Category) -> (BTreeMap<Category, u64>, BTreeMap<String, u64>, u64) {
    let mut cats = BTreeMap::new();
    let mut unknown = BTreeMap::new();
    let mut all = 0;
    for (n, chain) in fixture(name) {
        let d = classify_chain(&chain, generic);
        *cats.entry(d.category).or_insert(0) += n;
        if !d.known {
            *unknown.entry(d.by.to_string()).or_insert(0) += n;
        }
        all += n;
    }
    (cats, unknown, all)
}

#[test]
fn nearly_every_recorded_sample_is_classified() {
    for (name, generic) in [
        ("tcp", Category::UserLoop),
        ("sendfile", Category::UserLoop),
        ("udp", Category::UserLoop),
        ("tls", Category::UserLoop),
        ("rr", Category::UserLoop),
        ("quic", Category::Quic),
    ] {
        let (_, unknown, all) = tally(name, generic);
        let missed: u64 = unknown.values().sum();
        let mut worst: Vec<_> = unknown.iter().collect();
        worst.sort_by(|a, b| b.1.cmp(a.1));
        eprintln!(
            "{name}: {missed} of {all} unclassified, most: {:?}",
            &worst[..worst.len().min(8)]
        );
        assert!(
            (missed as f64) < 0.02 * all as f64,
            "{name}: {missed} of {all} unclassified: {unknown:?}"
        );
    }
}

#[test]
fn a_copy_is_a_copy_whoever_calls_it() {
    let chain = ["_copy_from_iter", "tcp_sendmsg_locked", "tcp_sendmsg"];
    let d = kernel(&chain);
    assert_eq!(
        (d.category, d.by, d.known),
        (Category::DataCopy, "_copy_from_iter", true)
    );
    let d = kernel(&["memcpy_orig", "tcp_recvmsg_locked"]);
    assert_eq!(d.category, Category::DataCopy);
}

#[test]
fn where_interrupts_come_back_on_the_caller_decides() {
    let d = kernel(&[
        "_raw_spin_unlock_irqrestore",
        "tcp_write_xmit",
        "tcp_sendmsg_locked",
    ]);
    assert_eq!((d.category, d.by), (Category::TcpIp, "tcp_write_xmit"));
    let d = kernel(&[
        "handle_softirqs",
        "__irq_exit_rcu",
        "sysvec_apic_timer_interrupt",
        "asm_sysvec_apic_timer_interrupt",
        "_raw_spin_unlock_irqrestore",
        "sock_def_readable",
    ]);
    assert_eq!(
        (d.category, d.by),
        (Category::Scheduling, "sock_def_readable")
    );
    let d = kernel(&["dev_gro_receive", "napi_gro_receive"]);
    assert_eq!(
        d.category,
        Category::Netdevice,
        "GRO before the device prefix"
    );
    let d = kernel(&["tcp_gro_receive"]);
    assert_eq!(d.category, Category::Netdevice, "GRO before TCP's prefix");
    let d = kernel(&["skb_page_frag_refill", "sk_page_frag_refill"]);
    assert_eq!(d.category, Category::Memory, "page frags are pages");
    let d = kernel(&["finish_task_switch.isra.0", "__schedule"]);
    assert_eq!(d.category, Category::Scheduling, "suffixes are dropped");
}

#[test]
fn an_unknown_function_is_counted_not_guessed() {
    let d = kernel(&["frobnicate_widget", "tcp_sendmsg"]);
    assert_eq!(
        (d.category, d.by, d.known),
        (Category::Other, "frobnicate_widget", false)
    );
    let d = kernel(&["_raw_spin_unlock_irq"]);
    assert_eq!(
        (d.category, d.known),
        (Category::Other, false),
        "generic to the top"
    );
    let d = kernel(&[]);
    assert!(!d.known);
    let d = user(&["serde_json::de::from_str"], Category::UserLoop);
    assert_eq!((d.category, d.known), (Category::Other, false));
}

#[test]
fn user_space_by_its_crate() {
    let u = |n: &'static str| user(&[n], Category::UserLoop).category;
    assert_eq!(
        u("ring_core_0_17_14__aes_gcm_enc_update_vaes_avx2"),
        Category::Encryption
    );
    assert_eq!(u("ring::aead::aes_gcm::seal"), Category::Encryption);
    assert_eq!(
        u("<rustls::crypto::ring::quic::PacketKey as rustls::quic::PacketKey>::encrypt_in_place"),
        Category::Encryption,
        "QUIC's packet protection is encryption"
    );
    assert_eq!(
        u("quinn_proto::connection::Connection::handle_event"),
        Category::Quic
    );
    assert_eq!(
        u("<netsonde_engine::stream::TcpSender as netsonde_engine::flow::Flow>::step"),
        Category::UserLoop
    );
    assert_eq!(u("__memmove_avx512_unaligned_erms"), Category::DataCopy);
    assert_eq!(u("__libc_recv"), Category::Syscall);
    assert_eq!(u("_int_malloc"), Category::Memory);
    // The standard library is the flow's own work: the QUIC stack's in a QUIC
    // flow, whose user space is quinn's.
    let std = "alloc::collections::btree::map::BTreeMap<K,V,A>::insert";
    assert_eq!(user(&[std], Category::Quic).category, Category::Quic);
    assert_eq!(
        user(&[std], Category::UserLoop).category,
        Category::UserLoop
    );
    // An inlined standard-library frame is decided by the function it is in.
    let d = user(
        &[
            "core::ptr::copy_nonoverlapping",
            "netsonde_engine::verify::check",
        ],
        Category::Quic,
    );
    assert_eq!(
        (d.category, d.by),
        (Category::UserLoop, "netsonde_engine::verify::check")
    );
}

#[test]
fn sendfile_copies_less_than_a_copying_sender_in_the_recordings() {
    let copy_share = |name| {
        let (cats, _, all) = tally(name, Category::UserLoop);
        cats.get(&Category::DataCopy).copied().unwrap_or(0) as f64 / all as f64
    };
    let (tcp, sendfile) = (copy_share("tcp"), copy_share("sendfile"));
    // Both recordings hold both ends: sendfile removes the sender's copy, the
    // receiver's stays.
    assert!(
        sendfile < 0.75 * tcp,
        "copy share: tcp {tcp:.3}, sendfile {sendfile:.3}"
    );
    let (tls, _, all) = tally("tls", Category::UserLoop);
    let crypto = tls.get(&Category::Encryption).copied().unwrap_or(0) as f64 / all as f64;
    assert!(crypto > 0.15, "tls: encryption {crypto:.3}");
}
