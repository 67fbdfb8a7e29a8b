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
    for id in ["000", "001", "002", "003", "004"] {
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
        let md = std::fs::read_to_string(out.join("report.md")).unwrap();
        for section in [
            "## Then and now",
            "## The seed's findings, on this host",
            "## Parts",
            "Regenerate: `netsonde study",
        ] {
            assert!(md.contains(section), "study {id}: no '{section}'");
        }
        assert!(
            md.contains("shared/reference/"),
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
