//! Whose CPU is whose: the attribution of `side_cost` on a busy host.

use super::*;
use crate::cpu::{CpuReport, ProcessUsage};
use crate::host::HostFacts;
use crate::spec::FlowDir;

const SEC: u64 = 1_000_000_000;

fn ms(n: f64) -> Nanos {
    Nanos((n * 1e6) as u64)
}

fn flow(id: u32, role: Role, bytes: u64, messages: u64) -> FlowResult {
    FlowResult {
        id,
        dir: FlowDir::Up,
        role,
        bytes_total: Bytes(bytes),
        bytes: Bytes(bytes),
        messages,
        calls: messages,
        transactions: 0,
        transactions_total: 0,
        elapsed: Nanos(SEC),
        datagrams_sent: None,
        tcp_info: None,
        udp: None,
        latency: None,
        io: None,
        mptcp: None,
        stall: None,
    }
}

/// One second on a 2-core host: `busy` cores in all, this process `process_ms`
/// (of which its flow threads `threads_ms`), other processes `others_ms`, the
/// interfaces `stack_bytes`.
fn cpu(busy: f64, process_ms: f64, threads_ms: f64, others_ms: f64, stack: u64) -> CpuReport {
    CpuReport {
        elapsed: Nanos(SEC),
        busy_cores: busy,
        process: ProcessUsage {
            user: ms(process_ms * 0.2),
            sys: ms(process_ms * 0.8),
            ..ProcessUsage::default()
        },
        threads: Some(ms(threads_ms)),
        others: Some(ms(others_ms)),
        partners: Some(Nanos(0)),
        stack_bytes: Some(stack),
        pid: 7,
        ..CpuReport::default()
    }
}

fn side(flows: Vec<FlowResult>, cpu: CpuReport) -> SideResult {
    SideResult {
        host: HostFacts {
            boot_id: "boot".into(),
            ..HostFacts::default()
        },
        flows,
        cpu: Some(cpu),
        socket: None,
        tcp_samples: Vec::new(),
    }
}

/// Issue 35's window-limited flow: 14.6 Mbit/s for a second whose threads
/// used a few milliseconds, on a host where another process moved 2 GB/s on
/// loopback and a hog held 1.2 cores. The other traffic's kernel work (0.5
/// cores outside any process) is not the test's: the test is its own few
/// milliseconds plus its 0.1% share, and the rest is foreign.
#[test]
fn other_traffics_kernel_work_is_foreign() {
    let moved = 1_825_000;
    // One process (the embedded server): each end's report has its own flow
    // threads (2.5 and 1.5 ms) and the whole process's 6 ms.
    let host = |threads| cpu(1.8, 6.0, threads, 1_300.0, 2 * 2_000_000_000 + 2 * moved);
    let client = side(vec![flow(1, Role::Sender, moved, 1_300)], host(2.5));
    let server = side(vec![flow(1, Role::Receiver, moved, 900)], host(1.5));
    let c = side_cost(&client, &server, true, moved, None).unwrap();
    let s = side_cost(&server, &client, true, moved, None).unwrap();
    let share = c.stack_share.unwrap();
    assert!(share > 0.0 && share < 0.002, "{share}");
    let test = c.test_cores.unwrap() + s.test_cores.unwrap();
    // Both ends' threads (4 ms, one process), the rest of the process (2 ms)
    // and 0.1% of the 0.494 cores of kernel work: under 0.01 cores.
    assert!(test < 0.01, "the test's CPU {test} includes other work");
    assert!(test >= 0.004, "{test}");
    let foreign = c.foreign_cores.unwrap();
    assert!((foreign - 1.794).abs() < 0.01, "foreign {foreign}");
    // Service demand follows the test's CPU, not the host's.
    assert!(c.us_per_kib.unwrap() < 10.0, "{c:?}");
}

/// A quiet host: everything busy is the test's (its threads, and the kernel's
/// work, which only its traffic caused).
#[test]
fn on_a_quiet_host_the_kernels_work_is_the_tests() {
    let moved = 4_000_000_000;
    // The test's bytes are all the interfaces counted (lo: sent and received).
    let host = |threads| cpu(1.6, 1_400.0, threads, 10.0, 2 * moved + 2 * 66 * 100_000);
    let client = side(vec![flow(1, Role::Sender, moved, 100_000)], host(700.0));
    let server = side(vec![flow(1, Role::Receiver, moved, 60_000)], host(650.0));
    let c = side_cost(&client, &server, true, moved, None).unwrap();
    let s = side_cost(&server, &client, true, moved, None).unwrap();
    assert!((c.stack_share.unwrap() - 1.0).abs() < 1e-9);
    let test = c.test_cores.unwrap() + s.test_cores.unwrap();
    // 1.6 busy, 0.01 foreign: the test is the other 1.59.
    assert!((test - 1.59).abs() < 0.01, "{test}");
    assert!(c.foreign_cores.unwrap() < 0.011);
}

/// A report from before the interfaces were read keeps the older model: the
/// host's busy time less the other processes is the test's.
#[test]
fn reports_without_the_interfaces_keep_the_older_model() {
    let moved = 1_000_000;
    let mut host = cpu(1.0, 100.0, 80.0, 300.0, 0);
    host.stack_bytes = None;
    host.partners = None;
    let client = side(vec![flow(1, Role::Sender, moved, 100)], host.clone());
    let server = side(vec![flow(1, Role::Receiver, moved, 100)], host);
    let c = side_cost(&client, &server, true, moved, None).unwrap();
    assert_eq!(c.stack_share, None);
    assert!((c.foreign_cores.unwrap() - 0.3).abs() < 1e-9);
    // own 0.08 + half of (0.7 - 0.08 - 0.08).
    assert!((c.test_cores.unwrap() - 0.35).abs() < 1e-9, "{c:?}");
}

/// The lab's emulator is known to be part of the test by the client's process
/// (which started the lab), not by the server's, in whose `others` it is: on one
/// host it is the test's at both ends, never the server's foreign load.
#[test]
fn a_process_one_end_knows_is_the_tests_is_so_at_both_ends() {
    let moved = 500_000_000;
    let stack = 2 * moved + 2 * 66 * 400_000;
    let mut client_cpu = cpu(0.5, 19.0, 18.0, 55.0, stack);
    client_cpu.partners = Some(ms(430.0));
    let mut server_cpu = cpu(0.5, 51.0, 51.0, 455.0, stack);
    server_cpu.pid = 8;
    let client = side(vec![flow(1, Role::Sender, moved, 400_000)], client_cpu);
    let server = side(vec![flow(1, Role::Receiver, moved, 0)], server_cpu);
    let c = side_cost(&client, &server, true, moved, None).unwrap();
    let s = side_cost(&server, &client, true, moved, None).unwrap();
    assert!(s.foreign_cores.unwrap() < 0.01, "{s:?}");
    assert!(c.foreign_cores.unwrap() < 0.01, "{c:?}");
    let test = c.test_cores.unwrap() + s.test_cores.unwrap();
    assert!((test - 0.5).abs() < 0.01, "{test}");
}
