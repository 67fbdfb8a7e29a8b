//! The classifier: a sample's call chain (leaf first) to the category its time
//! was spent on, by a versioned table of function names (docs/CPU-BREAKDOWN.md).
//!
//! The leaf decides, unless it is generic: a function that any category's work
//! passes through (an interrupt's entry and exit, where interrupts are turned
//! back on, RCU, `memset`), which hands the decision to its caller, and so on up
//! the chain. A function the table does not name decides nothing: its sample is
//! unclassified, counted in `other` and as unclassified, never guessed from its
//! callers.
//!
//! `cpu-clock` (a software timer, what a host without a PMU has) cannot sample
//! where interrupts are off: that time lands where they are turned back on
//! (`_raw_spin_unlock_irqrestore`, `handle_softirqs`), which is generic here, so
//! it goes to the function that did the work with interrupts off.
//!
//! Pure: names in, a decision out.

use netsonde_model::profile::Category;

/// The table's version, stored with every breakdown: bump it when a rule
/// changes what a chain is classified as.
pub const CLASSIFIER_VERSION: u32 = 1;

/// How a rule matches a function's name (leading underscores and compiler
/// suffixes such as `.isra.0` removed first).
#[derive(Debug, Clone, Copy)]
enum Pat {
    /// The whole name.
    Is(&'static str),
    /// Its start.
    Starts(&'static str),
    /// Anywhere in it.
    Has(&'static str),
}

/// What a rule says of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Says {
    /// Its samples are this category's.
    Cat(Category),
    /// Its caller decides.
    Generic,
}

use Category::*;
use Pat::{Has, Is, Starts};
use Says::{Cat, Generic};

/// The kernel's table, first match wins: exact names and narrow patterns before
/// the prefixes they would otherwise fall under.
const KERNEL: &[(Pat, Says)] = &[
    // Generic: where interrupts are turned back on (cpu-clock's samples land
    // there), interrupt entry and exit, RCU, memset, retpolines.
    (Is("raw_spin_unlock_irqrestore"), Generic),
    (Is("raw_spin_unlock_irq"), Generic),
    (Is("handle_softirqs"), Generic),
    (Is("do_softirq"), Generic),
    (Is("local_bh_enable_ip"), Generic),
    (Is("irq_exit_rcu"), Generic),
    (Starts("sysvec_"), Generic),
    (Starts("asm_"), Generic),
    (Starts("irq_"), Generic),
    (Starts("rcu_read_"), Generic),
    (Starts("memset"), Generic),
    (Starts("x86_indirect_thunk"), Generic),
    (Starts("x86_return_thunk"), Generic),
    (Starts("srso_"), Generic),
    // Library code any subsystem calls: lists, trees, bitmaps.
    (Starts("list_"), Generic),
    (Starts("rb_"), Generic),
    (Starts("find_next_bit"), Generic),
    (Starts("find_first_bit"), Generic),
    (Is("raw_callee_save___pv_queued_spin_unlock"), Cat(Locks)),
    // Data copy: payload between user and kernel memory, and within it.
    (Starts("copy_to_iter"), Cat(DataCopy)),
    (Starts("copy_from_iter"), Cat(DataCopy)),
    (Starts("copy_user"), Cat(DataCopy)),
    (Starts("copy_to_user"), Cat(DataCopy)),
    (Starts("copy_from_user"), Cat(DataCopy)),
    (Starts("copy_page"), Cat(DataCopy)),
    (Is("rep_movs_alternative"), Cat(DataCopy)),
    (Starts("memcpy"), Cat(DataCopy)),
    (Starts("memmove"), Cat(DataCopy)),
    (Is("pi_memcpy"), Cat(DataCopy)),
    (Is("simple_copy_to_iter"), Cat(DataCopy)),
    (Is("skb_datagram_iter"), Cat(DataCopy)),
    (Is("skb_copy_datagram_iter"), Cat(DataCopy)),
    (Is("skb_copy_to_page_nocache"), Cat(DataCopy)),
    (Is("ip_generic_getfrag"), Cat(DataCopy)),
    // Hardened usercopy's checks belong to every copy to or from user space.
    (Is("check_object_size"), Cat(DataCopy)),
    (Is("check_heap_object"), Cat(DataCopy)),
    (Is("check_stack_object"), Cat(DataCopy)),
    (Is("virt_addr_valid"), Cat(DataCopy)),
    (Is("is_vmalloc_addr"), Cat(DataCopy)),
    // Checksums.
    (Starts("csum"), Cat(Checksum)),
    (Has("_csum"), Cat(Checksum)),
    (Is("do_csum"), Cat(Checksum)),
    (Starts("skb_checksum"), Cat(Checksum)),
    (Is("ip_send_check"), Cat(Checksum)),
    (Is("tcp_v4_send_check"), Cat(Checksum)),
    (Is("udp4_hwcsum"), Cat(Checksum)),
    // The device layer: GRO/GSO (before TCP's and IP's prefixes), qdiscs,
    // drivers, NAPI, the backlog.
    (Has("gro_"), Cat(Netdevice)),
    (Has("gso_"), Cat(Netdevice)),
    (Is("skb_segment"), Cat(Netdevice)),
    (Starts("dev_"), Cat(Netdevice)),
    (Starts("netif_"), Cat(Netdevice)),
    (Starts("net_rx_action"), Cat(Netdevice)),
    (Starts("net_tx_action"), Cat(Netdevice)),
    (Starts("napi_poll"), Cat(Netdevice)),
    (Is("napi_complete_done"), Cat(Netdevice)),
    (Is("process_backlog"), Cat(Netdevice)),
    (Is("enqueue_to_backlog"), Cat(Netdevice)),
    (Is("validate_xmit_skb"), Cat(Netdevice)),
    (Is("eth_type_trans"), Cat(Netdevice)),
    (Starts("loopback_"), Cat(Netdevice)),
    (Starts("veth_"), Cat(Netdevice)),
    (Starts("virtnet_"), Cat(Netdevice)),
    (Starts("virtqueue_"), Cat(Netdevice)),
    (Starts("vring_"), Cat(Netdevice)),
    (Starts("tun_"), Cat(Netdevice)),
    (Starts("sch_"), Cat(Netdevice)),
    (Starts("qdisc_"), Cat(Netdevice)),
    (Starts("pfifo_"), Cat(Netdevice)),
    (Starts("tbf_"), Cat(Netdevice)),
    (Starts("htb_"), Cat(Netdevice)),
    (Starts("fq_"), Cat(Netdevice)),
    (Starts("xdp_"), Cat(Netdevice)),
    (Starts("bpf_prog_run"), Cat(Netdevice)),
    (Starts("e1000"), Cat(Netdevice)),
    (Starts("ixgbe_"), Cat(Netdevice)),
    (Starts("i40e_"), Cat(Netdevice)),
    (Starts("ice_"), Cat(Netdevice)),
    (Starts("mlx5e_"), Cat(Netdevice)),
    (Starts("mlx4_en_"), Cat(Netdevice)),
    (Starts("ena_"), Cat(Netdevice)),
    (Starts("gve_"), Cat(Netdevice)),
    (Starts("bnxt_"), Cat(Netdevice)),
    // Memory accounting and allocators (before skb's: an skb's page frags are
    // pages).
    (Is("skb_page_frag_refill"), Cat(Memory)),
    (Is("sk_page_frag_refill"), Cat(Memory)),
    (Starts("sk_mem_"), Cat(Memory)),
    (Is("sk_forced_mem_schedule"), Cat(Memory)),
    (Is("tcp_wmem_schedule"), Cat(Memory)),
    (Is("tcp_try_rmem_schedule"), Cat(Memory)),
    (Starts("udp_rmem_"), Cat(Memory)),
    (Is("sock_kmalloc"), Cat(Memory)),
    (Starts("kmem_cache"), Cat(Memory)),
    (Starts("kmalloc"), Cat(Memory)),
    (Starts("kfree"), Cat(Memory)),
    (Starts("kvmalloc"), Cat(Memory)),
    (Starts("kvfree"), Cat(Memory)),
    (Starts("slab_"), Cat(Memory)),
    (Starts("put_cpu_partial"), Cat(Memory)),
    (Is("build_detached_freelist"), Cat(Memory)),
    (Starts("alloc_pages"), Cat(Memory)),
    (Starts("alloc_frozen_pages"), Cat(Memory)),
    (Starts("get_page_from_freelist"), Cat(Memory)),
    (Starts("rmqueue"), Cat(Memory)),
    (Starts("free_pages"), Cat(Memory)),
    (Starts("free_frozen_page"), Cat(Memory)),
    (Starts("free_unref_page"), Cat(Memory)),
    (Is("free_tail_page_prepare"), Cat(Memory)),
    (Is("get_pfnblock_flags_mask"), Cat(Memory)),
    (Starts("folio_put"), Cat(Memory)),
    (Starts("folios_put"), Cat(Memory)),
    (Starts("put_page"), Cat(Memory)),
    (Starts("page_frag_"), Cat(Memory)),
    (Starts("page_counter_"), Cat(Memory)),
    (Starts("mem_cgroup_"), Cat(Memory)),
    (Starts("memcg_"), Cat(Memory)),
    (Starts("mod_memcg"), Cat(Memory)),
    (Starts("obj_cgroup_"), Cat(Memory)),
    (Starts("refill_obj_stock"), Cat(Memory)),
    (Starts("css_rstat"), Cat(Memory)),
    (Is("get_netmem"), Cat(Memory)),
    (Starts("put_netmem"), Cat(Memory)),
    // Socket buffers.
    (Is("tcp_stream_alloc_skb"), Cat(Skb)),
    (Starts("skb_"), Cat(Skb)),
    (Starts("pskb_"), Cat(Skb)),
    (Starts("alloc_skb"), Cat(Skb)),
    (Starts("build_skb"), Cat(Skb)),
    (Starts("napi_build_skb"), Cat(Skb)),
    (Starts("napi_alloc_skb"), Cat(Skb)),
    (Starts("napi_consume_skb"), Cat(Skb)),
    (Starts("napi_skb_cache"), Cat(Skb)),
    (Starts("consume_skb"), Cat(Skb)),
    (Is("copy_skb_header"), Cat(Skb)),
    (Is("sock_alloc_send_pskb"), Cat(Skb)),
    (Is("sock_wfree"), Cat(Skb)),
    (Is("sock_rfree"), Cat(Skb)),
    (Is("tcp_wfree"), Cat(Skb)),
    // Locks.
    (Starts("raw_spin_"), Cat(Locks)),
    (Starts("raw_read_"), Cat(Locks)),
    (Starts("raw_write_"), Cat(Locks)),
    (Has("queued_spin_lock"), Cat(Locks)),
    (Has("queued_spin_unlock"), Cat(Locks)),
    (Is("lock_sock_nested"), Cat(Locks)),
    (Is("lock_sock"), Cat(Locks)),
    (Is("release_sock"), Cat(Locks)),
    (Starts("mutex_"), Cat(Locks)),
    // Scheduling, sleeping and waking, polling, IPIs.
    (Starts("schedule"), Cat(Scheduling)),
    (Is("cond_resched"), Cat(Scheduling)),
    (Starts("finish_task_switch"), Cat(Scheduling)),
    (Starts("pick_next_task"), Cat(Scheduling)),
    (Starts("enqueue_task"), Cat(Scheduling)),
    (Starts("dequeue_task"), Cat(Scheduling)),
    (Starts("update_curr"), Cat(Scheduling)),
    (Starts("update_load_avg"), Cat(Scheduling)),
    (Starts("sched_"), Cat(Scheduling)),
    (Starts("try_to_wake_up"), Cat(Scheduling)),
    (Starts("ttwu_"), Cat(Scheduling)),
    (Starts("wake_up"), Cat(Scheduling)),
    (Has("wake_function"), Cat(Scheduling)),
    (Starts("select_task_rq"), Cat(Scheduling)),
    (Starts("resched_"), Cat(Scheduling)),
    (Starts("wakeup_preempt"), Cat(Scheduling)),
    (Starts("check_preempt"), Cat(Scheduling)),
    (Starts("psi_"), Cat(Scheduling)),
    (Is("sock_def_readable"), Cat(Scheduling)),
    (Is("sock_def_write_space"), Cat(Scheduling)),
    (Is("sk_stream_write_space"), Cat(Scheduling)),
    (Is("sk_wait_data"), Cat(Scheduling)),
    (Starts("sk_stream_wait"), Cat(Scheduling)),
    (Is("wait_woken"), Cat(Scheduling)),
    (Starts("prepare_to_wait"), Cat(Scheduling)),
    (Is("finish_wait"), Cat(Scheduling)),
    (Is("add_wait_queue"), Cat(Scheduling)),
    (Is("remove_wait_queue"), Cat(Scheduling)),
    (Starts("ep_"), Cat(Scheduling)),
    (Starts("do_epoll"), Cat(Scheduling)),
    (Starts("do_sys_poll"), Cat(Scheduling)),
    (Starts("do_select"), Cat(Scheduling)),
    (Starts("core_sys_select"), Cat(Scheduling)),
    (Is("sock_poll"), Cat(Scheduling)),
    (Is("tcp_poll"), Cat(Scheduling)),
    (Is("udp_poll"), Cat(Scheduling)),
    (Starts("hrtimer_nanosleep"), Cat(Scheduling)),
    (Has("send_IPI"), Cat(Scheduling)),
    (Starts("smp_call_function"), Cat(Scheduling)),
    (Starts("generic_smp_call_function"), Cat(Scheduling)),
    (Starts("llist_"), Cat(Scheduling)),
    // TCP, UDP, IP, routing, netfilter, congestion control, MPTCP.
    (Starts("tcp"), Cat(TcpIp)),
    (Starts("udp"), Cat(TcpIp)),
    (Starts("ip_"), Cat(TcpIp)),
    (Starts("ipv4_"), Cat(TcpIp)),
    (Starts("ip6_"), Cat(TcpIp)),
    (Starts("ipv6_"), Cat(TcpIp)),
    (Starts("inet"), Cat(TcpIp)),
    (Starts("raw_local_deliver"), Cat(TcpIp)),
    (Starts("raw_v4_"), Cat(TcpIp)),
    (Starts("icmp"), Cat(TcpIp)),
    (Starts("mptcp_"), Cat(TcpIp)),
    (Starts("bbr_"), Cat(TcpIp)),
    (Starts("cubictcp"), Cat(TcpIp)),
    (Starts("bictcp"), Cat(TcpIp)),
    (Starts("minmax_"), Cat(TcpIp)),
    (Starts("fib_"), Cat(TcpIp)),
    (Starts("dst_"), Cat(TcpIp)),
    (Starts("rt_"), Cat(TcpIp)),
    (Starts("nf_"), Cat(TcpIp)),
    (Starts("ipt_"), Cat(TcpIp)),
    (Starts("xfrm"), Cat(TcpIp)),
    (Starts("sk_reset_timer"), Cat(TcpIp)),
    (Starts("sk_stop_timer"), Cat(TcpIp)),
    (Is("sk_dst_check"), Cat(TcpIp)),
    (Is("sk_filter_trim_cap"), Cat(TcpIp)),
    (Is("sk_free"), Cat(TcpIp)),
    (Is("put_cmsg"), Cat(TcpIp)),
    (Is("sock_recv_errqueue"), Cat(TcpIp)),
    // System-call entry and exit, descriptors, the socket and file layers, the
    // security hooks every call passes.
    (Starts("entry_SYSCALL"), Cat(Syscall)),
    (Starts("do_syscall"), Cat(Syscall)),
    (Starts("syscall_"), Cat(Syscall)),
    (Starts("x64_sys"), Cat(Syscall)),
    (Starts("sys_"), Cat(Syscall)),
    (Starts("do_sys_"), Cat(Syscall)),
    (Starts("exit_to_user_mode"), Cat(Syscall)),
    (Starts("fdget"), Cat(Syscall)),
    (Starts("fget"), Cat(Syscall)),
    (Is("fput"), Cat(Syscall)),
    (Starts("sockfd_lookup"), Cat(Syscall)),
    (Starts("sock_sendmsg"), Cat(Syscall)),
    (Starts("sock_recvmsg"), Cat(Syscall)),
    (Starts("sock_write_iter"), Cat(Syscall)),
    (Starts("sock_read_iter"), Cat(Syscall)),
    (Starts("security_"), Cat(Syscall)),
    (Starts("apparmor_"), Cat(Syscall)),
    (Starts("selinux_"), Cat(Syscall)),
    (Starts("bpf_lsm_"), Cat(Syscall)),
    (Starts("import_"), Cat(Syscall)),
    (Starts("iovec_from_user"), Cat(Syscall)),
    (Is("copy_msghdr_from_user"), Cat(Syscall)),
    (Is("copy_iovec_from_user"), Cat(Syscall)),
    (Starts("move_addr_to_"), Cat(Syscall)),
    (Starts("get_user"), Cat(Syscall)),
    (Starts("put_user"), Cat(Syscall)),
    (Starts("iov_iter_"), Cat(Syscall)),
    (Starts("vfs_"), Cat(Syscall)),
    (Starts("ksys_"), Cat(Syscall)),
    (Starts("do_iter_"), Cat(Syscall)),
    (Starts("rw_verify_area"), Cat(Syscall)),
    (Starts("rseq_"), Cat(Syscall)),
    (Starts("do_recvmmsg"), Cat(Syscall)),
    (Starts("do_sendmmsg"), Cat(Syscall)),
    (Starts("io_"), Cat(Syscall)),
    // sendfile and splice: the pipe and page cache a file's pages come through.
    (Starts("do_splice"), Cat(Syscall)),
    (Starts("splice_"), Cat(Syscall)),
    (Is("direct_splice_actor"), Cat(Syscall)),
    (Starts("do_sendfile"), Cat(Syscall)),
    (Starts("filemap_"), Cat(Syscall)),
    (Starts("shmem_"), Cat(Syscall)),
    (Starts("page_cache_pipe"), Cat(Syscall)),
    (Starts("pipe_"), Cat(Syscall)),
    (Starts("touch_atime"), Cat(Syscall)),
    (Starts("atime_needs_update"), Cat(Syscall)),
    (Starts("folio_"), Cat(Syscall)),
    (Starts("xas_"), Cat(Syscall)),
    // Known, and none of the above: timers and timekeeping, page faults, BPF
    // programs attached to the path (tracing).
    (Starts("mod_timer"), Cat(Other)),
    (Starts("add_timer"), Cat(Other)),
    (Starts("timer_"), Cat(Other)),
    (Is("lock_timer_base"), Cat(Other)),
    (Starts("hrtimer_"), Cat(Other)),
    (Starts("run_timer"), Cat(Other)),
    (Starts("bpf_"), Cat(Other)),
    (Is("copy_from_kernel_nofault"), Cat(Other)),
    (Is("current_time"), Cat(Syscall)),
    (Starts("ktime_"), Cat(Other)),
    (Is("read_tsc"), Cat(Other)),
    (Starts("exc_page_fault"), Cat(Other)),
    (Starts("handle_mm_fault"), Cat(Other)),
];

/// User space's table, matched against a symbol's demangled path (and, for an
/// inlined frame, the functions it was inlined into).
const USER: &[(Pat, Says)] = &[
    (Starts("ring_core_"), Cat(Encryption)),
    (Has("ring::"), Cat(Encryption)),
    (Has("rustls::"), Cat(Encryption)),
    (Has("netsonde_tls::"), Cat(Encryption)),
    (Has("quinn"), Cat(Quic)),
    (Has("netsonde_quic::"), Cat(Quic)),
    (Has("tokio::"), Cat(Quic)),
    (Starts("memmove"), Cat(DataCopy)),
    (Starts("memcpy"), Cat(DataCopy)),
    (Starts("memset"), Generic),
    (Is("malloc"), Cat(Memory)),
    (Is("free"), Cat(Memory)),
    (Is("realloc"), Cat(Memory)),
    (Starts("int_malloc"), Cat(Memory)),
    (Starts("int_free"), Cat(Memory)),
    (Starts("unlink_chunk"), Cat(Memory)),
    (Starts("malloc_consolidate"), Cat(Memory)),
    (Starts("libc_malloc"), Cat(Memory)),
    (Starts("libc_free"), Cat(Memory)),
    (Starts("libc_"), Cat(Syscall)),
    (Starts("GI___"), Cat(Syscall)),
    (Is("recvmmsg"), Cat(Syscall)),
    (Is("sendmmsg"), Cat(Syscall)),
    (Is("writev"), Cat(Syscall)),
    (Is("readv"), Cat(Syscall)),
    (Is("syscall"), Cat(Syscall)),
    (Has("netsonde"), Cat(UserLoop)),
    (Starts("vdso_"), Cat(UserLoop)),
    (Starts("clock_gettime"), Cat(UserLoop)),
    (Has("hdrhistogram::"), Cat(UserLoop)),
    (Has("quanta::"), Cat(UserLoop)),
    // The standard library and common collections: whose they are depends on
    // the caller, which a user-space sample does not carry.
    (Has("std::"), Generic),
    (Has("core::"), Generic),
    (Has("alloc::"), Generic),
    (Has("hashbrown::"), Generic),
    (Has("bytes::"), Generic),
];

/// A name with leading underscores and compiler suffixes (`.isra.0`,
/// `.constprop.0`, `.cold`) removed.
fn normalise(name: &str) -> &str {
    let name = name.trim_start_matches('_');
    name.split_once('.').map_or(name, |(base, _)| base)
}

fn says(table: &[(Pat, Says)], name: &str) -> Option<Says> {
    let n = normalise(name);
    table.iter().find_map(|&(pat, says)| {
        let hit = match pat {
            Is(p) => n == p,
            Starts(p) => n.starts_with(p),
            Has(p) => name.contains(p),
        };
        hit.then_some(says)
    })
}

/// What a chain was classified as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision<'a> {
    /// The category.
    pub category: Category,
    /// The function that decided it (the leaf when nothing did).
    pub by: &'a str,
    /// Whether a rule decided it; `false`: unclassified, in `Other`.
    pub known: bool,
}

fn decide<'a>(
    table: &[(Pat, Says)],
    chain: &[&'a str],
    fallback: Option<Category>,
) -> Decision<'a> {
    let unclassified = |by| Decision {
        category: Other,
        by,
        known: false,
    };
    for &name in chain {
        match says(table, name) {
            Some(Cat(category)) => {
                return Decision {
                    category,
                    by: name,
                    known: true,
                }
            }
            Some(Generic) => {}
            // A function no rule names decides nothing, and is not guessed
            // from its callers.
            None => return unclassified(name),
        }
    }
    let by = chain.first().copied().unwrap_or("");
    // A chain of generic functions only is the fallback's (user space's own
    // work), or unclassified.
    match fallback.filter(|_| !chain.is_empty()) {
        Some(category) => Decision {
            category,
            by,
            known: true,
        },
        None => unclassified(by),
    }
}

/// Classifies a kernel call chain, leaf first.
pub fn kernel<'a>(chain: &[&'a str]) -> Decision<'a> {
    decide(KERNEL, chain, None)
}

/// Classifies a user-space sample by its function's names: the function and
/// the ones it was inlined into, innermost first. Generic code (the standard
/// library) goes to `generic`, the category of the flow's own user-space work
/// (netsonde's loop, or the QUIC stack a QUIC flow runs in).
pub fn user<'a>(names: &[&'a str], generic: Category) -> Decision<'a> {
    decide(USER, names, Some(generic))
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
