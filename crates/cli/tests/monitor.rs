//! Issue 38: a fleet watched over time. `netsonde monitor` runs a mesh of
//! scripted agents round after round; one agent is made slower between rounds
//! (restarted with `--fake-scale 0.5`: its jobs measure half the goodput), and
//! its pairs turn degraded against their own normal in the metrics, on the
//! dashboard and in a real browser, while the others stay ok. A dead agent
//! fails only its pairs; a SIGKILLed monitor loses no stored round; the
//! Prometheus rules fire for the degraded pair only.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::fleet_util::{agent_list, key, scratch};
use crate::util::{free_port, run, ServerProc};

/// One round: one stream test per pair, short.
const ROUND: &[&str] = &[
    "--tests",
    "tcp-stream",
    "--sizes",
    "64K",
    "--repeat",
    "1",
    "-t",
    "0.2",
    "--warmup",
    "0",
    "--window",
    "5",
    // Rounds here run past their short slots on purpose.
    "--skip-overrun",
];

/// The test's label in every series and page: its own axes but the pair.
const TEST: &str = "tcp-stream 64KiB";

fn monitor_args<'a>(list: &'a str, db: &'a str, k: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["monitor", "--agent", list, "--auth-key", k, "--db", db];
    a.extend_from_slice(ROUND);
    a.extend_from_slice(more);
    a
}

fn spawn(args: &[&str]) -> Child {
    crate::util::cmd()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `GET url`'s body, or `None` while nothing answers.
fn get(url: &str) -> Option<String> {
    ureq::get(url).call().ok()?.body_mut().read_to_string().ok()
}

/// Waits (at most `limit`) until `f` gives something.
fn until<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    None
}

/// The value of the state series of a pair in an OpenMetrics text.
fn state(metrics: &str, src: &str, dst: &str, s: &str) -> Option<f64> {
    let head = format!(
        "netsonde_pair_state{{src=\"{src}\",dst=\"{dst}\",test=\"{TEST}\",state=\"{s}\"}} "
    );
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(&head))
        .and_then(|v| v.trim().parse().ok())
}

#[test]
fn a_monitor_finds_the_pair_that_got_worse_and_keeps_the_others_ok() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("monitor");
    let k = key(&dir);
    let a = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let b = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let c = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let list = agent_list(&[&a, &b, &c]);
    let db = dir.join("m.db");
    let db = db.to_str().unwrap();
    // Five rounds to learn each pair's normal; the sixth is judged.
    let out = run(
        &monitor_args(&list, db, &k, &["--every", "0.3s", "--rounds", "6"]),
        Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rounds: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("round stored as run"))
        .collect();
    assert_eq!(rounds.len(), 6, "{err}");
    assert!(rounds[4].contains("6 learning"), "{err}");
    assert!(rounds[5].contains("6 ok"), "{err}");
    // Agent b gets slower: its jobs measure half what they did. Its pairs are
    // degraded in the second round after (2 of the last 3 judged rounds).
    let b_port = b.port;
    drop(b);
    let _b = ServerProc::start_as(
        "agent",
        b_port,
        &["--auth-key", &k, "--engine", "fake", "--fake-scale", "0.5"],
    );
    let m_port = free_port();
    let m_addr = format!("127.0.0.1:{m_port}");
    let mut mon = spawn(&monitor_args(
        &list,
        db,
        &k,
        &[
            "--every",
            "4s",
            "--jitter",
            "0",
            "--rounds",
            "3",
            "--metrics",
            &m_addr,
        ],
    ));
    let url = format!("http://{m_addr}/metrics");
    let metrics = until(Duration::from_secs(60), || {
        get(&url).filter(|m| state(m, "b", "a", "degraded") == Some(1.0))
    })
    .unwrap_or_else(|| panic!("b -> a never degraded: {:?}", get(&url)));
    for (s, d, want) in [
        ("b", "a", "degraded"),
        ("b", "c", "degraded"),
        ("a", "b", "ok"),
        ("a", "c", "ok"),
        ("c", "a", "ok"),
        ("c", "b", "ok"),
    ] {
        assert_eq!(
            state(&metrics, s, d, want),
            Some(1.0),
            "{s} -> {d}: {metrics}"
        );
    }
    assert!(metrics.contains(&format!("netsonde_pair_baseline{{src=\"b\",dst=\"a\",test=\"{TEST}\",metric=\"goodput_bytes_per_second\",bound=\"median\"}}")), "{metrics}");
    // The drop's size, for the alert's severity: half its normal.
    let worse = metrics
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!(
                "netsonde_pair_worse_ratio{{src=\"b\",dst=\"a\",test=\"{TEST}\"}} "
            ))
        })
        .and_then(|v| v.trim().parse::<f64>().ok());
    assert!(
        worse.is_some_and(|w| (0.4..0.6).contains(&w)),
        "{worse:?}: {metrics}"
    );
    assert!(
        metrics.contains("netsonde_agent_up{agent=\"b\"} 1"),
        "{metrics}"
    );
    // Every other series of a pair names its test as the state does.
    assert!(
        metrics.contains(&format!(
            "netsonde_pair_goodput_bytes_per_second{{src=\"b\",dst=\"a\",test=\"{TEST}\"}}"
        )),
        "{metrics}"
    );
    check_metrics(&url);
    let _ = mon.kill();
    let mon_err = {
        let _ = mon.wait();
        let mut s = String::new();
        use std::io::Read;
        let _ = mon.stderr.take().unwrap().read_to_string(&mut s);
        s
    };
    assert!(
        mon_err.contains("6 stored round(s); going on from them"),
        "{mon_err}"
    );

    // The dashboard over the same store, read-only.
    let d_port = free_port();
    let mut dash = crate::util::cmd()
        .args([
            "dashboard",
            "--db",
            db,
            "--listen",
            &format!("127.0.0.1:{d_port}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{d_port}");
    let grid = until(Duration::from_secs(20), || get(&format!("{base}/"))).expect("dashboard");
    for (s, d, want) in [
        ("b", "a", "degraded"),
        ("b", "c", "degraded"),
        ("a", "b", "ok"),
        ("c", "a", "ok"),
    ] {
        let cell = format!("data-src=\"{s}\" data-dst=\"{d}\" data-state=\"{want}\"");
        assert!(grid.contains(&cell), "{s} -> {d} not {want}: {grid}");
    }
    let pair = get(&format!(
        "{base}/pair?monitor=monitor&src=b&dst=a&test=tcp-stream%2064KiB"
    ))
    .unwrap();
    assert!(
        pair.contains("degraded rounds") && pair.contains("<svg"),
        "{pair}"
    );
    assert!(pair.contains("time (UTC)"), "{pair}");
    let agents = get(&format!("{base}/agents")).unwrap();
    assert!(
        agents.contains("data-agent=\"b\" data-state=\"up\""),
        "{agents}"
    );
    // A bad request is 400, said without echoing it, with the headers every
    // answer has.
    let bad = ureq::get(&format!("{base}/compare?a=%3Cscript%3E&b=1"))
        .config()
        .http_status_as_error(false)
        .build()
        .call()
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(bad.headers()["x-content-type-options"], "nosniff");
    assert!(bad.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
    let body = bad.into_body().read_to_string().unwrap();
    assert!(!body.contains("script"), "{body}");
    let table = get(&format!("{base}/compare?a=1&b=2")).unwrap();
    assert!(table.contains("<table class=\"comparison\">"), "{table}");
    assert!(get(&format!("{base}/runs")).unwrap().contains("/runs/5"));
    assert!(get(&format!("{base}/runs/5"))
        .unwrap()
        .contains("<h2>Summary</h2>"));
    in_a_browser(&base);
    let _ = dash.kill();
    let _ = dash.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The metrics as `curl` gets them (no OpenMetrics in Accept) pass `promtool
/// check metrics`, when promtool is installed.
fn check_metrics(url: &str) {
    use std::io::Write;
    let text = get(url).unwrap();
    let Ok(mut p) = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIPPED promtool check metrics: no promtool (.ci/run installs prometheus)");
        return;
    };
    p.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = p.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The dashboard in Chromium over WebDriver (Debian's chromium-driver): the
/// grid loads, the degraded cell is found and opened, and the pair's page
/// plots its rounds. With NETSONDE_SCREENSHOTS=DIR, each page's screenshot is
/// written there (docs/img keeps them).
fn in_a_browser(base: &str) {
    crate::webdriver::with_chromium((1366, 900), |wd| {
        wd.go(&format!("{base}/")).unwrap();
        let degraded = wd.find_all("td.cell.degraded").unwrap();
        assert_eq!(degraded.len(), 2, "two degraded cells in the grid");
        let shots = std::env::var_os("NETSONDE_SCREENSHOTS").map(std::path::PathBuf::from);
        if let Some(d) = &shots {
            wd.screenshot(&d.join("dashboard-grid.png")).unwrap();
        }
        let link = wd.find_in(&degraded[0], "a").unwrap();
        wd.click(&link).unwrap();
        let title = wd.text("h1").unwrap();
        assert!(title.starts_with("b → "), "{title}");
        // The plotted points: every round has a marker on the goodput plot.
        let marks = wd
            .find_all("div.plot[data-metric=\"goodput\"] svg circle")
            .unwrap()
            .len();
        assert!(marks >= 5, "{marks} points plotted");
        let rows = wd
            .find_all("table.rounds tr[data-state=\"degraded\"]")
            .unwrap();
        assert!(!rows.is_empty(), "no degraded round listed");
        if let Some(d) = &shots {
            wd.screenshot(&d.join("dashboard-pair.png")).unwrap();
        }
    });
}

/// A dead, a stopped (SIGSTOP) and a garbage-answering agent fail their own
/// pairs (both ways), round after round, and the healthy pairs are measured
/// every round; SIGKILL then restart loses no stored round.
#[test]
fn bad_agents_fail_their_pairs_only_and_a_killed_monitor_loses_no_round() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("monitor-dead");
    let k = key(&dir);
    // Real agents: a pair towards a bad one fails when its client cannot
    // reach it (a scripted agent would not try).
    let a = ServerProc::agent(&k);
    let b = ServerProc::agent(&k);
    let stopped = ServerProc::agent(&k);
    let garbage_port = crate::fleet_util::garbage_agent();
    let _cont = crate::fleet_util::Stopped::stop(stopped.child.id());
    let list = format!(
        "{},c=127.0.0.1:{},stopped={},garbage=127.0.0.1:{garbage_port}",
        agent_list(&[&a, &b]),
        free_port(),
        stopped.addr()
    );
    let db_path = dir.join("d.db");
    let db = db_path.to_str().unwrap();
    let mut mon = spawn(&monitor_args(
        &list,
        db,
        &k,
        &["--every", "1s", "--rounds", "50"],
    ));
    let stored = |n: usize| {
        let store = netsonde_store::Store::open(&db_path).ok()?;
        let runs = store.runs().ok()?;
        (runs
            .iter()
            .filter(|r| r.status.to_string() == "incomplete")
            .count()
            >= n)
            .then_some(runs.len())
    };
    let before = until(Duration::from_secs(180), || stored(2)).expect("two rounds stored");
    let _ = mon.kill(); // SIGKILL
    let _ = mon.wait();
    let store = netsonde_store::Store::open(&db_path).unwrap();
    let kept = store.runs().unwrap().len();
    assert!(kept >= before, "{kept} < {before}");
    // Each finished round: a <-> b measured, every pair with a bad agent failed.
    let last_done = store
        .runs()
        .unwrap()
        .into_iter()
        .find(|r| r.status.to_string() == "incomplete")
        .unwrap();
    let points = store.points(last_done.id).unwrap();
    assert_eq!(points.len(), 20);
    for p in &points {
        let axes: std::collections::BTreeMap<String, String> =
            serde_json::from_str(&p.axes_json).unwrap();
        let healthy = ["a", "b"].contains(&axes["src"].as_str())
            && ["a", "b"].contains(&axes["dst"].as_str());
        assert_eq!(
            p.status.to_string() == "done",
            healthy,
            "{axes:?}: {:?}",
            p.reason
        );
    }
    drop(store);
    let out = run(
        &monitor_args(&list, db, &k, &["--every", "0.3s", "--rounds", "1"]),
        Duration::from_secs(120),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("{kept} stored round(s)")), "{err}");
    assert!(err.contains("2 ok") || err.contains("2 learning"), "{err}");
    // Of 20 pairs, a <-> b are measured and the 18 with a bad agent fail.
    assert!(err.contains("18 failed"), "{err}");
    let after = netsonde_store::Store::open(&db_path)
        .unwrap()
        .runs()
        .unwrap()
        .len();
    assert_eq!(after, kept + 1, "no stored round lost");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `promtool check rules` and `promtool test rules` over the shipped rules:
/// the degraded pair's alert fires, the others' do not.
#[test]
fn the_alert_rules_fire_for_the_degraded_pair_only() {
    let ok = std::process::Command::new("promtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("SKIPPED the_alert_rules_fire_for_the_degraded_pair_only: no promtool (.ci/run installs prometheus)");
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/prometheus");
    for args in [
        ["check", "rules", "netsonde-rules.yml"],
        ["test", "rules", "netsonde-rules.test.yml"],
    ] {
        let out = std::process::Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "promtool {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A monitor whose round cannot fit its interval is refused before it
/// contacts any agent, with the estimate, unless told to skip the slots.
#[test]
fn an_interval_a_round_cannot_keep_is_refused() {
    let dir = scratch("monitor-overrun");
    let k = key(&dir);
    let args = [
        "monitor",
        "--agent",
        "a=127.0.0.1:9,b=127.0.0.1:9",
        "--auth-key",
        &k,
        "--tests",
        "tcp-stream",
        "--sizes",
        "64K",
        "-t",
        "10",
        "--every",
        "5s",
    ];
    let out = run(&args, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("a round is estimated at"), "{err}");
    // A phase is a moment within the interval.
    let mut phased = args.to_vec();
    phased.extend(["--skip-overrun", "--phase", "5s"]);
    let out = run(&phased, Duration::from_secs(30));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--phase must be shorter than --every"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs on the store at `url` (a PostgreSQL URL or a SQLite path), each with
/// its status.
fn stored_runs(db: &str) -> Vec<String> {
    let at: netsonde_store::Location = db.parse().unwrap();
    netsonde_store::Store::open_at(&at)
        .and_then(|s| s.runs())
        .map(|r| r.into_iter().map(|r| r.status.to_string()).collect())
        .unwrap_or_default()
}

/// Issue 51: PostgreSQL stopped between and during rounds stops nothing: the
/// monitor goes on measuring, says the store is out of reach (in its log and
/// metrics), holds the rounds, and writes every one once the store is back.
#[test]
fn a_monitor_measures_through_a_store_outage_and_loses_no_round() {
    let Some(pg) = crate::pg_util::Postgres::start("a_monitor_measures_through_a_store_outage")
    else {
        return;
    };
    let _turn = crate::lab_util::serial();
    let url = pg.database("outage");
    let dir = scratch("monitor-outage");
    let k = key(&dir);
    let a = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let b = ServerProc::agent_with(&k, &["--engine", "fake"]);
    let list = agent_list(&[&a, &b]);
    let m_addr = format!("127.0.0.1:{}", free_port());
    let mon = spawn(&monitor_args(
        &list,
        &url,
        &k,
        &["--every", "1s", "--rounds", "8", "--metrics", &m_addr],
    ));
    until(Duration::from_secs(60), || {
        (!stored_runs(&url).is_empty()).then_some(())
    })
    .expect("a first round stored");
    pg.stop();
    let metrics = format!("http://{m_addr}/metrics");
    let held = until(Duration::from_secs(60), || {
        get(&metrics).filter(|m| {
            m.contains("netsonde_monitor_store_up 0")
                && !m.contains("netsonde_monitor_held_rounds 0")
        })
    });
    assert!(
        held.is_some(),
        "the outage never showed: {:?}",
        get(&metrics)
    );
    // Still measuring while the store is down: more rounds are held.
    std::thread::sleep(Duration::from_secs(3));
    pg.start_again();
    let out = crate::util::wait_bounded(mon, Duration::from_secs(120));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("held in memory"), "{err}");
    assert!(err.contains("the store answers again"), "{err}");
    assert!(!err.contains("could not be written"), "{err}");
    let runs = stored_runs(&url);
    assert_eq!(runs.len(), 8, "every round stored: {runs:?}\n{err}");
    assert!(runs.iter().all(|s| s == "complete"), "{runs:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 51: SIGTERM mid-round stores the round as interrupted, and the pairs
/// it did not reach are no pair's failure: none is painted failed.
#[test]
fn a_stopped_round_paints_no_pair_failed() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("monitor-stop");
    let k = key(&dir);
    // Real agents: a scripted one answers at once, and the stop must land
    // while a round is measuring.
    let agents: Vec<ServerProc> = (0..3).map(|_| ServerProc::agent(&k)).collect();
    let list = agent_list(&agents.iter().collect::<Vec<_>>());
    let db_path = dir.join("s.db");
    let db = db_path.to_str().unwrap();
    let out = run(
        &monitor_args(&list, db, &k, &["--every", "0.3s", "--rounds", "1"]),
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // One pair's test takes about a second: SIGTERM lands mid-round.
    let mut args = monitor_args(&list, db, &k, &["--every", "0.3s", "--rounds", "1"]);
    for a in args.iter_mut() {
        if *a == "0.2" {
            *a = "1";
        }
    }
    let mon = spawn(&args);
    std::thread::sleep(Duration::from_millis(2500));
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &mon.id().to_string()])
        .status();
    let out = crate::util::wait_bounded(mon, Duration::from_secs(60));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("0 failed"), "{err}");
    let runs = netsonde_store::Store::open(&db_path)
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs[0].status.to_string(), "interrupted", "{err}");
    assert!(
        runs[0].points_done < runs[0].points_total,
        "the stop came too late: {err}"
    );
    let store = netsonde_store::Store::open(&db_path).unwrap();
    let latest = netsonde_run::monitor::latest(&store, "monitor", 5).unwrap();
    assert_eq!(latest.pairs.len(), 6);
    assert!(
        latest
            .pairs
            .iter()
            .all(|p| p.state != netsonde_model::watch::PairState::Failed),
        "{:?}",
        latest.pairs
    );
    assert!(latest.agents.iter().all(|a| a.up), "{:?}", latest.agents);
    let _ = std::fs::remove_dir_all(&dir);
}
