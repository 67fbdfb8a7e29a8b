//! `--db postgres://...`: many controllers writing one shared PostgreSQL store
//! at once, and every reader (runs, report, compare) reading it, against a real
//! throw-away server.

use std::process::Stdio;
use std::time::Duration;

use crate::pg_util::Postgres;
use crate::util::{cmd, run};

/// Starts `netsonde sweep --engine fake --no-report --repeat 3` with `args`,
/// its output piped.
fn fake_sweep(args: &[&str]) -> std::process::Child {
    cmd()
        .args(["sweep", "--engine", "fake", "--no-report", "--repeat", "3"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = run(args, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Three sweeps started at once write one database; each is stored whole, the
/// report and compare read them back, and a resume is refused while another
/// controller holds its run.
#[test]
fn controllers_share_one_postgres_store() {
    let Some(pg) = Postgres::start("controllers_share_one_postgres_store") else {
        return;
    };
    let url = pg.database("shared");
    let sweep = |label: &str| {
        fake_sweep(&[
            "--db",
            &url,
            "--label",
            label,
            "--tests",
            "tcp-stream,tcp-rr",
            "--sizes",
            "1K,64K",
        ])
    };
    let controllers: Vec<_> = ["a", "b", "c"].iter().map(|l| sweep(l)).collect();
    for c in controllers {
        let out = c.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{err}");
        // The password-free URL is what the run says it is stored in.
        assert!(
            err.contains("stored in postgres://netsonde@127.0.0.1:"),
            "{err}"
        );
    }
    let list = ok(&["runs", "list", "--db", &url]);
    let complete: Vec<&str> = list.lines().filter(|l| l.contains("complete")).collect();
    assert_eq!(complete.len(), 3, "{list}");
    for label in ["a", "b", "c"] {
        assert!(
            complete
                .iter()
                .any(|l| l.trim_end().ends_with(&format!(" {label}"))),
            "{label}: {list}"
        );
    }
    for run in ["1", "2", "3"] {
        let points = ok(&["runs", "export", run, "--json", "--db", &url]);
        let v: serde_json::Value = serde_json::from_str(&points).unwrap();
        assert_eq!(v["points"].as_array().map(Vec::len), Some(4), "{v}");
    }
    let dir = tempdir();
    let out = dir.join("report");
    ok(&["report", "1", "--db", &url, "--out", out.to_str().unwrap()]);
    assert!(std::fs::read_to_string(out.join("report.html"))
        .unwrap()
        .contains("<svg"));
    let cmp = ok(&["compare", "1", "2", "--db", &url]);
    assert!(cmp.contains("tcp-rr"), "{cmp}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A database that is not there, or a URL that is not one: one line, exit 1
/// or 2, no password shown.
#[test]
fn an_unreachable_or_malformed_database_is_refused_in_one_line() {
    let port = crate::util::free_port().to_string();
    let url = format!("postgres://ns:hunter2@127.0.0.1:{port}/x");
    let out = run(&["runs", "list", "--db", &url], Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    // One line of error, beside the warning that the process list shows the
    // password (never the password itself).
    let lines: Vec<&str> = err.trim().lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(lines[0].contains("warning: the password"), "{err}");
    assert!(err.contains("cannot connect to the results store"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
    let out = run(
        &["runs", "list", "--db", "postgres://h:port/x"],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a PostgreSQL URL"), "{err}");
}

/// The database vanishes in the middle of a sweep (the server stopped at once):
/// the sweep ends in one line that names the store, exit 1, with no panic and
/// no hang; the repetitions committed before stay, and once the server is back
/// `--resume` finishes the run.
#[test]
fn a_database_that_vanishes_mid_run_ends_it_in_one_line_and_resume_finishes() {
    let Some(pg) = Postgres::start("a_database_that_vanishes_mid_run") else {
        return;
    };
    let url = pg.database("vanish");
    let sweep = fake_sweep(&[
        "--fake-delay-ms",
        "150",
        "--db",
        &url,
        "--tests",
        "tcp-stream",
        "--sizes",
        "1K,4K,16K,64K",
    ]);
    // A few of its 12 repetitions are in (each takes 150 ms).
    std::thread::sleep(Duration::from_millis(700));
    pg.stop();
    let out = crate::util::wait_bounded(sweep, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(last.contains("postgres://netsonde@127.0.0.1:"), "{err}");
    pg.start_again();
    let resumed = ok(&["sweep", "--resume", "latest", "--db", &url, "--no-report"]);
    let points = ok(&["runs", "export", "1", "--json", "--db", &url]);
    let v: serde_json::Value = serde_json::from_str(&points).unwrap();
    assert_eq!(v["run"]["status"], "complete", "{resumed}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{resumed}");
    for p in points {
        assert_eq!(p["status"], "done", "{p}");
        assert_eq!(p["summary"]["reps"], 3, "{p}");
    }
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("netsonde-shared-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Issue 51: the dashboard over PostgreSQL, the store docs/FLEET.md and
/// deploy/kubernetes use. Its first GET aborted the process ("Cannot start a
/// runtime from within a runtime": the store's blocking client called on the
/// web server's async thread); now every page answers and the process lives.
#[test]
fn the_dashboard_serves_its_pages_from_postgres() {
    let Some(pg) = Postgres::start("the_dashboard_serves_its_pages_from_postgres") else {
        return;
    };
    let url = pg.database("dash");
    // A fresh database holds no store yet: listed as empty, nothing made.
    let listed = ok(&["runs", "list", "--db", &url]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let out = fake_sweep(&[
        "--db",
        &url,
        "--label",
        "d",
        "--tests",
        "tcp-stream",
        "--sizes",
        "1K",
    ])
    .wait_with_output()
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = crate::util::free_port();
    let mut dash = cmd()
        .args([
            "dashboard",
            "--db",
            &url,
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let get = |path: &str| -> Option<(u16, String)> {
        let mut r = ureq::get(&format!("http://127.0.0.1:{port}{path}"))
            .config()
            .http_status_as_error(false)
            .build()
            .call()
            .ok()?;
        Some((r.status().as_u16(), r.body_mut().read_to_string().ok()?))
    };
    let start = std::time::Instant::now();
    let first = loop {
        if let Some(page) = get("/runs") {
            break page;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the dashboard never answered"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(first.0, 200, "{}", first.1);
    assert!(first.1.contains("/runs/1"), "{}", first.1);
    for path in ["/", "/runs/1"] {
        let (status, body) = get(path).expect("an answer");
        assert_eq!(status, 200, "{path}: {body}");
    }
    in_chromium(port);
    assert!(
        dash.try_wait().unwrap().is_none(),
        "the dashboard died serving PostgreSQL"
    );
    let _ = dash.kill();
    let _ = dash.wait();
}

/// The PostgreSQL dashboard's pages as Chromium renders them (WebDriver,
/// Debian's chromium-driver): each loads with its heading, and a run's link
/// opens its report.
fn in_chromium(port: u16) {
    crate::webdriver::with_chromium((1366, 900), |wd| {
        let base = format!("http://127.0.0.1:{port}");
        for (path, heading) in [
            ("/", "pairs"),
            ("/agents", "agents"),
            ("/runs", "runs"),
            ("/compare", "compare"),
        ] {
            wd.go(&format!("{base}{path}")).unwrap();
            assert_eq!(wd.text("h1").unwrap(), heading, "{path}");
        }
        wd.go(&format!("{base}/runs")).unwrap();
        let links = wd.find_all("table.runs a").unwrap();
        assert!(!links.is_empty(), "no run listed");
        wd.click(&links[0]).unwrap();
        let title = wd.text("h1").unwrap();
        assert!(
            title.starts_with("netsonde run 1: "),
            "the run's report: {title}"
        );
    });
}
