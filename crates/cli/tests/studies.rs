//! `netsonde study NAME --quick`: every reference study runs end to end and writes
//! a report with the seed's figures beside today's, each finding decided (or said
//! to be unmeasured, with why), and every figure it links on disk as SVG and PNG.
//! Without root the lab parts skip with the reason in the report; with root the
//! test holds the lab tests' lock, since it builds labs too.
//!
//! That each finding follows the data (a run that contradicts one gets "does not
//! hold") is tested on made-up runs in `netsonde-studies`.

use std::time::Duration;

use crate::util::run;

const VERDICTS: [&str; 4] = [
    "**holds**",
    "**holds in part**",
    "**does not hold**",
    "**not measured**",
];

#[test]
fn every_reference_study_runs_quick_and_reports_its_findings() {
    let lab = crate::lab_util::ready("studies");
    let d = std::env::temp_dir().join(format!("netsonde-studies-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let db = d.join("studies.db");
    let list = run(&["study", "--list"], Duration::from_secs(10));
    assert!(list.status.success());
    let list = String::from_utf8_lossy(&list.stdout).to_string();
    for id in ["000", "001", "002", "003", "004", "005"] {
        assert!(list.contains(&format!("{id}-")), "{list}");
        let out = d.join(id);
        let o = run(
            &[
                "study",
                id,
                "--quick",
                "--out",
                out.to_str().unwrap(),
                "--db",
                db.to_str().unwrap(),
            ],
            Duration::from_secs(300),
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "study {id}: {:?}\n{stderr}", o.status);
        // Issue 42: it ends with each part's summary, then the findings and
        // where the report is.
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(stdout.starts_with("== part "), "study {id}: {stdout}");
        assert!(stdout.contains("\nfindings:\n"), "study {id}: {stdout}");
        let last = stdout.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("study {id}: ")) && last.contains("report: "),
            "study {id}: {stdout}"
        );
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        for section in [
            "## Then and now",
            "## The seed's findings, on this host",
            "## Parts",
            "Regenerate: `netsonde study",
        ] {
            assert!(md.contains(section), "study {id}: no '{section}'");
        }
        // 005's seed is a paper outside shared/reference: its citation.
        assert!(
            md.contains("shared/reference/") || md.contains("SIGCOMM 2021"),
            "study {id} cites its seed"
        );
        // Every finding row ends in one of the four verdicts.
        let table = md
            .split("## The seed's findings, on this host")
            .nth(1)
            .unwrap()
            .split("\nIn words")
            .next()
            .unwrap();
        let rows: Vec<&str> = table
            .lines()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| finding"))
            .collect();
        assert!(!rows.is_empty(), "study {id}: no findings");
        for r in &rows {
            assert!(
                VERDICTS
                    .iter()
                    .any(|v| r.trim_end().ends_with(&format!("{v} |"))),
                "study {id}: {r}"
            );
        }
        // Without the lab, its parts say why they did not run; with it, they ran.
        if lab.is_none() && md.contains("(lab)") {
            assert!(md.contains("did not run"), "study {id}");
        }
        // Every linked figure exists, as PNG and SVG.
        for link in md.split("](figures/").skip(1) {
            let f = link.split(')').next().unwrap();
            assert!(
                out.join("figures").join(f).exists(),
                "study {id}: figures/{f} missing"
            );
        }
        eprintln!(
            "study {id}: {} findings, report {}",
            rows.len(),
            out.join("report.md").display()
        );
    }
    // The parts are ordinary stored runs: `runs list` shows them.
    let runs = run(
        &["runs", "list", "--db", db.to_str().unwrap()],
        Duration::from_secs(10),
    );
    assert!(String::from_utf8_lossy(&runs.stdout).contains("study 004"));
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 36.4: a study killed with SIGKILL after raising the socket buffer
/// ceilings leaves them raised no longer than until `lab clean` (or the next
/// study's start) puts them back from its record; its parts die with it.
#[test]
fn a_killed_study_leaves_no_host_setting_changed_nor_a_part_running() {
    let Some(_lab) = crate::lab_util::ready("study-killed") else {
        return;
    };
    use std::io::BufRead;
    let read = || {
        std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .unwrap()
            .trim()
            .to_string()
    };
    let before = read();
    let d = std::env::temp_dir().join(format!("netsonde-study-kill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let mut study = crate::util::cmd()
        .args([
            "study",
            "003",
            "--quick",
            "--out",
            d.join("out").to_str().unwrap(),
        ])
        .args(["--db", d.join("s.db").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(study.stderr.take().unwrap()).lines();
    let raised = lines
        .by_ref()
        .take(200)
        .map_while(Result::ok)
        .any(|l| l.contains("net.core.rmem_max raised"));
    // Its parts, a moment into the first.
    std::thread::sleep(Duration::from_millis(1500));
    let pid = study.id();
    let parts: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    let rest = s[s.rfind(')')? + 1..].to_string();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(pid)
        })
        .collect();
    study.kill().unwrap();
    study.wait().unwrap();
    std::thread::spawn(move || lines.for_each(drop));
    if !raised {
        eprintln!("SKIPPED studies::study-killed: rmem_max was already {before}: nothing raised");
        return;
    }
    assert_ne!(read(), before, "raised while the study ran");
    // Its parts die with it.
    std::thread::sleep(Duration::from_millis(1000));
    for p in &parts {
        let alive =
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z "));
        assert!(!alive, "part {p} of the killed study still runs");
    }
    let out = run(&["lab", "clean"], Duration::from_secs(60));
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("net.core.rmem_max restored to {before}")),
        "{said}"
    );
    assert_eq!(read(), before);
    let _ = std::fs::remove_dir_all(&d);
}
