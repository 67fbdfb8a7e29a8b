//! The profiler on live threads of this process.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use super::*;

/// Two threads moving bytes over loopback TCP for `secs`: (sender tid,
/// receiver tid, join).
fn loopback_pair(secs: f64) -> (i32, i32, impl FnOnce()) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        tx.send(crate::thread::current_tid()).unwrap();
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; 128 << 10];
        while s.read(&mut buf).unwrap_or(0) > 0 {}
    });
    let (ttx, trx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        ttx.send(crate::thread::current_tid()).unwrap();
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let buf = vec![7u8; 128 << 10];
        go_rx.recv().unwrap();
        let end = Instant::now() + Duration::from_secs_f64(secs);
        while Instant::now() < end {
            s.write_all(&buf).unwrap();
        }
    });
    let (r, w) = (rx.recv().unwrap(), trx.recv().unwrap());
    go_tx.send(()).unwrap();
    (w, r, move || {
        writer.join().unwrap();
        reader.join().unwrap();
    })
}

/// A profiler, or why this host cannot have one (the test is skipped then).
fn start_or_skip(tids: &[i32]) -> Option<Profiler> {
    match Profiler::start(tids, DEFAULT_PERIOD, true) {
        Ok(p) => Some(p),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

#[test]
fn sampled_cpu_agrees_with_the_threads_clocks_and_copies_are_seen() {
    prepare();
    let (w, r, join) = loopback_pair(1.5);
    let Some(mut p) = start_or_skip(&[w, r]) else {
        join();
        return;
    };
    let deadline = Instant::now() + Duration::from_millis(400);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        p.drain();
    }
    let b = p.finish(Category::UserLoop, &|_| None);
    join();
    let clocks = b.clock.expect("both threads ran through the window").0;
    let sampled = b.sampled().0;
    let ratio = sampled as f64 / clocks as f64;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "sampled {sampled} ns against clocks {clocks} ns ({ratio:.3}): {b:?}"
    );
    assert!(b.samples >= 400, "{b:?}");
    assert!(b.share(Category::DataCopy) > 0.1, "{b:?}");
    assert!(
        (b.unclassified as f64) < 0.1 * b.samples as f64,
        "{} of {} unclassified: {:?}",
        b.unclassified,
        b.samples,
        b.top
    );
    assert_eq!(b.event, "cpu-clock");
    // Every core sampled too, or a line saying why not.
    match (&b.elsewhere, &b.elsewhere_why) {
        (Some(e), None) => assert!(e.cores >= 1 && e.samples > 0, "{e:?}"),
        (None, Some(why)) => assert!(why.starts_with("the kernel's network work"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(b.classifier, classify::CLASSIFIER_VERSION);
    assert!(!b.top.is_empty() && b.top.len() <= 10);
}

#[test]
fn no_thread_is_an_error_not_an_empty_breakdown() {
    assert!(matches!(
        Profiler::start(&[], DEFAULT_PERIOD, false),
        Err(ProfileError::NoThreads)
    ));
}

#[test]
fn a_refusal_names_the_setting() {
    let e = refused(std::io::Error::from_raw_os_error(libc::EACCES));
    let text = e.to_string();
    assert!(
        text.starts_with("not permitted: kernel.perf_event_paranoid is "),
        "{text}"
    );
    assert!(!text.contains('\n'));
    let e = refused(std::io::Error::from_raw_os_error(libc::ENOENT));
    assert!(matches!(e, ProfileError::Open(_)));
}
