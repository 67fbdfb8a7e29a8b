//! Issue 42: a sweep, a search and a mesh end with their summary on standard
//! output, the same text `runs show` prints; `--quiet` keeps the two lines of
//! where the report and the run are; `--json` the same summary as one
//! document. Golden copies through the scripted engine (its figures are the
//! same on every host), the paths of the run's folder taken out.

use std::path::Path;
use std::time::Duration;

use crate::sweeps::tmpdir;
use crate::util::{run, ServerProc};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs netsonde; its standard output, once it succeeded, with `dir` shown
/// as `DIR`.
fn stdout_of(args: &[&str], dir: &Path) -> String {
    let out = run(args, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .replace(s(dir), "DIR")
}

/// Off a terminal the summary fits 80 columns.
fn fits_80(text: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

const SWEEP: &[&str] = &[
    "sweep",
    "--engine",
    "fake",
    "--tests",
    "tcp-stream,udp-stream,tcp-rr",
    "--sizes",
    "64,1K",
];

#[test]
fn a_sweep_ends_with_its_summary_which_runs_show_prints_too() {
    let d = tmpdir("summary-sweep");
    let db = d.join("s.db");
    let report = d.join("report");
    let mut args = SWEEP.to_vec();
    args.extend(["--db", s(&db), "--out", s(&report)]);
    let shown = stdout_of(&args, &d);
    fits_80(&shown);
    insta::assert_snapshot!("sweep", shown);
    // `runs show` is the same text, less the report it did not write.
    let again = stdout_of(&["runs", "show", "1", "--db", s(&db)], &d);
    let without_report: String = shown
        .lines()
        .filter(|l| !l.starts_with("report: "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(again, without_report);
    // --quiet: the two lines.
    let mut quiet = args.clone();
    quiet.push("--quiet");
    let q = stdout_of(&quiet, &d);
    assert_eq!(
        q, "report: DIR/report/report.html\nrun 2 stored in DIR/s.db\n",
        "{q}"
    );
    // --json: one document, the same summary; the two lines on stderr.
    let mut json = args.clone();
    json.push("--json");
    let out = run(&json, Duration::from_secs(120));
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["run"], 3);
    assert_eq!(doc["kind"], "sweep");
    assert_eq!(doc["points"].as_array().unwrap().len(), 6);
    assert!(doc["report"].as_str().unwrap().ends_with("report.html"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run 3 stored in"));
    let shown: serde_json::Value = serde_json::from_str(&stdout_of(
        &["runs", "show", "3", "--json", "--db", s(&db)],
        &d,
    ))
    .unwrap();
    assert_eq!(shown["points"], doc["points"]);
    assert_eq!(shown["warnings"], doc["warnings"]);
    // --full: every table of the report, as Markdown.
    let full = stdout_of(&["runs", "show", "1", "--full", "--db", s(&db)], &d);
    assert!(full.contains("# netsonde run 1") && full.contains("## Points"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_search_ends_with_what_each_point_found() {
    let d = tmpdir("summary-search");
    let db = d.join("s.db");
    let shown = stdout_of(
        &[
            "search",
            "--engine",
            "fake",
            "--frames",
            "64,1518",
            "--io",
            "copy,batch",
            "--no-report",
            "--db",
            s(&db),
        ],
        &d,
    );
    fits_80(&shown);
    insta::assert_snapshot!("search", shown);
    assert_eq!(stdout_of(&["runs", "show", "1", "--db", s(&db)], &d), shown);
    let _ = std::fs::remove_dir_all(&d);
}

/// Three scripted agents, all to all; each pair's line, the matrix, once.
#[test]
fn a_mesh_ends_with_each_pair_and_its_matrix() {
    let d = tmpdir("summary-mesh");
    let k = crate::fleet_util::key(&d);
    let agents: Vec<ServerProc> = (0..3)
        .map(|_| ServerProc::agent_with(&k, &["--engine", "fake"]))
        .collect();
    let list = crate::fleet_util::agent_list(&agents.iter().collect::<Vec<_>>());
    let db = d.join("m.db");
    let out = crate::fleet_util::mesh(
        &[
            "--agent",
            &list,
            "--tests",
            "tcp-stream",
            "--sizes",
            "1K,16K",
            "--repeat",
            "1",
        ],
        &db,
        &k,
    );
    let stdout = crate::fleet_util::every_pair_done(&out, &db, 6).replace(s(&d), "DIR");
    fits_80(&stdout);
    insta::assert_snapshot!("mesh", stdout);
    let _ = std::fs::remove_dir_all(&d);
}

/// Two real runs of a stream: compare says, per end, which category of the
/// CPU breakdown moved most (an A/A pair: a small move, said with the whole
/// breakdown's change beside it).
#[test]
fn compare_says_where_the_cpu_moved() {
    let d = crate::sweeps::tmpdir("compare-cpu");
    let db = d.join("c.db");
    let base = [
        "sweep",
        "--tests",
        "tcp-stream",
        "--sizes",
        "64K",
        "--time",
        "0.5",
        "--warmup",
        "0.2",
        "--repeat",
        "2",
        "--no-report",
        "--db",
        crate::sweeps::s(&db),
    ];
    crate::sweeps::ok(&base);
    crate::sweeps::ok(&base);
    let out = run(
        &["compare", "1", "2", "--db", crate::sweeps::s(&db)],
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(at) = text.find("where the CPU moved") else {
        // A host that refuses to sample says so in each report, not here.
        let shown = crate::sweeps::ok(&[
            "runs",
            "export",
            "1",
            "--json",
            "--db",
            crate::sweeps::s(&db),
        ]);
        assert!(
            !shown.contains("\"state\":\"taken\""),
            "taken but not compared: {text}"
        );
        eprintln!("skipped: no CPU breakdown on this host");
        return;
    };
    let lines: Vec<&str> = text[at..].lines().skip(1).take(2).collect();
    assert!(
        lines[0].contains(" client: ") && lines[0].contains(" us/KiB ("),
        "{text}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
