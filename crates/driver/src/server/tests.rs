//! Admission, the busy slot, the budget, tokens and the iperf3 registry, on a
//! server's state alone: no listener, no client.

use std::time::Duration;

use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_model::units::{Bytes, Nanos};
use netsonde_proto::ErrorCode;

use super::config::AFTER_TEST;
use super::session::admit;
use super::*;
use crate::policy::Limits;

fn shared(limits: Limits) -> Arc<Shared> {
    let mut cfg = ServerConfig::new("127.0.0.1:0".parse().unwrap());
    cfg.limits = limits;
    Arc::new(Shared::new(cfg))
}

fn spec() -> TestSpec {
    let mut s = TestSpec::new(TestKind::TcpStream);
    s.duration = Nanos::from_secs(1);
    s
}

#[test]
fn a_spec_that_does_not_validate_is_refused_as_bad() {
    let sh = shared(Limits::default());
    let mut s = spec();
    s.parallel = 0;
    let (code, why, retry) = admit(&s, &sh).map(|_| ()).unwrap_err();
    assert_eq!(code, ErrorCode::BadSpec, "{why}");
    assert_eq!(retry, None);
}

#[test]
fn a_core_the_server_lacks_is_named() {
    let sh = shared(Limits::default());
    let mut s = spec();
    s.server_affinity = vec![4096];
    let (code, why, _) = admit(&s, &sh).map(|_| ()).unwrap_err();
    assert_eq!(code, ErrorCode::BadSpec);
    assert!(
        why.contains("the server may not run on core 4096 (its CPU mask allows "),
        "{why}"
    );
}

/// Cores are named by number at both ends: a server whose mask is its last
/// core alone takes that core and refuses the first, naming its mask (it
/// took core 0 and refused core 1 as "it has 1" when it counted its cores).
#[test]
fn a_core_is_checked_against_the_servers_mask_not_its_count() {
    let mine = netsonde_cpu::host::allowed_cores();
    let (Some(&first), Some(&last)) = (mine.first(), mine.last()) else {
        eprintln!("skipped: the CPU mask could not be read");
        return;
    };
    if first == last {
        eprintln!("skipped: this process may run on one core only");
        return;
    }
    std::thread::spawn(move || {
        let mut set = rustix::thread::CpuSet::new();
        set.set(last as usize);
        rustix::thread::sched_setaffinity(None, &set).unwrap();
        let sh = shared(Limits::default());
        let mut s = spec();
        s.server_affinity = vec![last as usize];
        assert!(admit(&s, &sh).is_ok(), "core {last}, the mask's own");
        s.server_affinity = vec![first as usize];
        let (_, why, _) = admit(&s, &sh).map(|_| ()).unwrap_err();
        assert!(
            why.contains(&format!(
                "may not run on core {first} (its CPU mask allows {last})"
            )),
            "{why}"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn the_limits_refuse_what_exceeds_them() {
    let sh = shared(Limits {
        max_parallel: 2,
        ..Limits::default()
    });
    let mut s = spec();
    s.parallel = 3;
    let (code, why, _) = admit(&s, &sh).map(|_| ()).unwrap_err();
    assert_eq!(code, ErrorCode::BadSpec);
    assert!(why.contains('2'), "{why}");
}

/// One test at a time: a second is told busy with the time left (at least
/// 100 ms to wait), and admitted once the first's guard is gone.
#[test]
fn the_busy_slot_is_held_until_the_test_ends() {
    let sh = shared(Limits::default());
    let first = admit(&spec(), &sh).unwrap();
    let (code, why, retry) = admit(&spec(), &sh).map(|_| ()).unwrap_err();
    assert_eq!(code, ErrorCode::Busy);
    assert!(why.contains("busy"), "{why}");
    assert!(retry.is_some_and(|ms| ms >= 100), "{retry:?}");
    drop(first);
    assert!(admit(&spec(), &sh).is_ok());
}

/// `max_tests` of 2 admits two at once, not three.
#[test]
fn max_tests_admits_that_many_at_once() {
    let sh = shared(Limits {
        max_tests: 2,
        ..Limits::default()
    });
    let a = admit(&spec(), &sh).unwrap();
    let b = admit(&spec(), &sh).unwrap();
    assert_eq!(
        admit(&spec(), &sh).map(|_| ()).unwrap_err().0,
        ErrorCode::Busy
    );
    drop((a, b));
}

/// A test whose buffers exceed one session's memory budget is refused, and the
/// refusal leaves the slot free for the next.
#[test]
fn the_memory_budget_refuses_and_frees_the_slot() {
    let sh = shared(Limits {
        max_session_memory: Bytes(64 << 10),
        max_memory: Bytes(64 << 10),
        ..Limits::default()
    });
    let mut big = spec();
    big.size = Bytes(1 << 20);
    big.parallel = 4;
    let (code, why, _) = admit(&big, &sh).map(|_| ()).unwrap_err();
    assert_eq!(code, ErrorCode::BadSpec, "{why}");
    assert!(sh.running.lock().unwrap().is_empty());
}

#[test]
fn tokens_are_fresh() {
    let a = crate::random_token().unwrap();
    let b = crate::random_token().unwrap();
    assert_ne!(a.0, b.0);
}

/// A test is expected to end at its measured end plus the time results take.
#[test]
fn a_started_test_is_expected_at_its_end() {
    let sh = shared(Limits::default());
    let (busy, _held) = admit(&spec(), &sh).unwrap();
    let at = Instant::now();
    busy.started(at, &spec());
    let end = sh.running.lock().unwrap()[0].1;
    let expected = at + spec().span().as_duration() + AFTER_TEST;
    assert!(
        end >= expected - Duration::from_millis(1) && end <= expected + Duration::from_millis(1)
    );
}

/// Once its flows end, a test is expected within the results' allowance: a
/// client told "busy" then (a cancelled mesh job's destination finishing its
/// results) waits that long, not to the test's planned end.
#[test]
fn a_test_whose_flows_ended_is_expected_within_its_results() {
    let sh = shared(Limits::default());
    let (busy, _held) = admit(&spec(), &sh).unwrap();
    busy.started(Instant::now(), &spec());
    busy.ending();
    let mut long = spec();
    long.duration = Nanos::from_secs(60);
    let (_, why, retry) = admit(&long, &sh).map(|_| ()).unwrap_err();
    let retry = retry.unwrap();
    assert!(retry <= AFTER_TEST.as_millis() as u64, "{why}: {retry} ms");
    assert!(why.contains("expected to end in 0."), "{why}");
}

/// The listening socket's second descriptor (for the wait an iperf3 session's
/// streams are read in) is closed with the listener: a stopped server's port
/// refuses connections, even while its state outlives it (`--metrics` holds it).
#[test]
fn a_stopped_server_closes_its_port() {
    let server = Server::bind(ServerConfig::new("127.0.0.1:0".parse().unwrap())).unwrap();
    assert!(server.shared.listening_socket().is_some());
    let _metrics = server.health();
    let handle = server.spawn();
    let addr = handle.addr;
    assert!(std::net::TcpStream::connect(addr).is_ok());
    drop(handle);
    let e = std::net::TcpStream::connect(addr).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
}
