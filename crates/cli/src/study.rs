//! `netsonde study NAME`: a reference study (`netsonde_run::study`) run with
//! this program as its parts' command, Ctrl-C heard, and its findings said.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context};
use netsonde_run::study::{self, StudyOptions, StudyOutcome};
use netsonde_store::Location;
use netsonde_studies::{Finding, StudyDef};

use netsonde_args::{StudyArgs, UsageError};

/// `netsonde study`; returns the exit code (4 when a part failed).
pub fn run(a: StudyArgs) -> anyhow::Result<u8> {
    if a.list {
        print!("{}", study::list());
        return Ok(0);
    }
    let opts = StudyOptions {
        quick: a.quick,
        db: a.store.db.clone().unwrap_or_else(Location::default_file),
        exe: std::env::current_exe().context("finding this program's path")?,
    };
    let name = a.name.as_deref().unwrap_or_default();
    if name == "all" {
        // Each study into its own folder under --out (default studies/).
        let base = a.out.clone().unwrap_or_else(|| PathBuf::from("studies"));
        let mut worst = 0;
        let mut done = Vec::new();
        for def in netsonde_studies::all() {
            let (code, findings) = one(&opts, def, &base.join(def.name()))?;
            worst = worst.max(code);
            done.push((def, findings));
        }
        let path = base.join("README.md");
        std::fs::write(&path, study::index(&base, a.quick, &done))
            .with_context(|| format!("writing {}", path.display()))?;
        println!("studies: {}", path.display());
        return Ok(worst);
    }
    let def = netsonde_studies::find(name).map_err(|e| UsageError(e.to_string()))?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("study-{}", def.name())));
    Ok(one(&opts, def, &out)?.0)
}

/// Runs one study into `out`; returns the exit code and its findings.
fn one(opts: &StudyOptions, def: StudyDef, out: &Path) -> anyhow::Result<(u8, Vec<Finding>)> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let note = |line: &str| eprintln!("{line}");
    let done: StudyOutcome = study::run_study(def, out, opts, &stop, &note)?;
    for f in &done.findings {
        println!("{:<14} {}", f.verdict.text(), f.claim);
    }
    println!(
        "study {}: {} parts in {:.0} s; report: {}",
        def.id,
        done.parts,
        done.secs,
        done.report.display()
    );
    if done.interrupted {
        bail!("interrupted: the report covers the parts that ran");
    }
    Ok((if done.failed > 0 { 4 } else { 0 }, done.findings))
}
