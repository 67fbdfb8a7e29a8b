//! Regression tests of bad input (issue 12, continued from `regression.rs`):
//! nonsense server limits, key files that are not regular files, negative
//! numbers, a receiver the server cannot set up, and a receive window above
//! the handshake's buffer.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::run;

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("netsonde-regin-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Defect 7: nonsense server limits were accepted.
#[test]
fn nonsense_server_limits_are_refused() {
    for args in [
        ["--phase-timeout", "0"],
        ["--max-duration", "0"],
        ["--max-parallel", "0"],
        ["--max-tests", "0"],
        ["--max-session-memory", "0"],
    ] {
        let mut all = vec!["server", "--port", "0"];
        all.extend_from_slice(&args);
        let out = run(&all, Duration::from_secs(5));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(args[0]) && err.contains("above 0"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

/// Defect 9: a FIFO key file hung the server forever; a character device was read
/// without a bound.
#[test]
fn key_files_that_are_not_regular_files_are_refused_at_once() {
    let d = tmpdir("keys");
    let fifo = d.join("fifo.key");
    let st = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(st.success());
    for (key, needle) in [
        (s(&fifo), "is a FIFO"),
        ("/dev/zero", "is a character device"),
        (s(&d), "is a directory"),
    ] {
        let out = run(
            &["server", "--port", "0", "--auth-key", key],
            Duration::from_secs(5),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{key}: {err}");
        assert!(err.contains(needle), "{key}: {err}");
    }
    let big = d.join("big.key");
    std::fs::write(&big, vec![b'a'; 1 << 20]).unwrap();
    std::fs::set_permissions(&big, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let out = run(
        &["client", "--auth-key", s(&big), "-t", "0.1"],
        Duration::from_secs(5),
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than the 4096"));
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 10: a negative number gave clap's multi-line "unexpected argument '-1'".
#[test]
fn negative_numbers_get_one_clear_line() {
    for args in [
        &["server", "--max-parallel", "-1"][..],
        &["client", "-l", "-5"],
        &["client", "-P", "-2"],
        &["sweep", "--repeat", "-3"],
    ] {
        let out = run(args, Duration::from_secs(5));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("invalid value '-"), "{args:?}: {err}");
    }
}

/// A UDP receiver the server could not set up (here `--rx-io xdp` behind a GSO
/// sender on loopback, refused before anything is loaded, so without root too)
/// reached the client as "UDP handshake failed: no answer from the server"
/// after the 10 s connect deadline, its hellos spinning on ICMP refusals the
/// whole time. The server now says why as soon as it knows, and the client
/// gives up on a port that refuses for a second.
#[test]
fn a_receiver_the_server_cannot_set_up_is_reported_with_its_reason_at_once() {
    let t0 = Instant::now();
    let out = run(
        &[
            "client",
            "-u",
            "-t",
            "1",
            "-l",
            "18",
            "--tx-io",
            "batch",
            "--rx-io",
            "xdp",
            "--no-store",
        ],
        Duration::from_secs(30),
    );
    let took = t0.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--io xdp is not supported here") && err.contains("GSO sender"),
        "{err}"
    );
    assert!(
        took < Duration::from_secs(8),
        "took {took:?}: waited for the deadline"
    );
}

/// `-w 32K --rcv-window 4M` never let the receiver advertise more than 64 KiB:
/// the receiving end's buffer was raised only after the handshake, whose window
/// scale had been chosen for -w's 64 KiB, and on a busy host a lagging receiver
/// made that cap the limit in place of the sender's buffer the test set up.
/// Now the receiving end's buffer is in place before the handshake (a
/// listener's, or a receiving client's socket), both ways.
#[test]
fn a_receive_window_above_the_handshakes_buffer_is_advertised() {
    let Some(_lab) = crate::lab_util::ready("rcv_window_scale") else {
        return;
    };
    for (reverse, sender) in [(false, "client"), (true, "server")] {
        let mut client = vec!["-w", "32K", "--rcv-window", "4M", "-t", "1"];
        if reverse {
            client.push("-R");
        }
        let doc = crate::lab_util::lab_json(&["--delay", "10ms"], &client);
        // The sender's TCP_INFO: the window its receiver last advertised.
        let snd_wnd = doc[sender]["flows"][0]["tcp_info"]["snd_wnd"]
            .as_u64()
            .unwrap_or(0);
        assert!(
            snd_wnd > 1 << 20,
            "reverse {reverse}: the receiver advertised {snd_wnd} B with a 4 MiB buffer"
        );
    }
}
