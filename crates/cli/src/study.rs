//! `netsonde study NAME`: a reference study (`netsonde_run::study`) run with
//! this program as its parts' command, Ctrl-C heard, and its findings said.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context};
use netsonde_report::summary::Summary;
use netsonde_run::study::{self, StudyOptions, StudyOutcome};
use netsonde_store::Location;
use netsonde_studies::ending::StudyEnding;
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
            let (code, findings) = one(&a, &opts, def, &base.join(def.name()))?;
            worst = worst.max(code);
            done.push((def, findings));
        }
        let path = base.join("README.md");
        std::fs::write(&path, study::index(&base, a.quick, &done))
            .with_context(|| format!("writing {}", path.display()))?;
        if a.json {
            eprintln!("studies: {}", path.display());
        } else {
            println!("studies: {}", path.display());
        }
        return Ok(worst);
    }
    let def = netsonde_studies::find(name).map_err(|e| UsageError(e.to_string()))?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("study-{}", def.name())));
    Ok(one(&a, &opts, def, &out)?.0)
}

/// Runs one study into `out`; ends with its parts' summaries and findings
/// (as `--quiet` and `--json` say); returns the exit code and its findings.
fn one(
    a: &StudyArgs,
    opts: &StudyOptions,
    def: StudyDef,
    out: &Path,
) -> anyhow::Result<(u8, Vec<Finding>)> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let note = |line: &str| eprintln!("{line}");
    let done: StudyOutcome = study::run_study(def, out, opts, &stop, &note)?;
    let store = crate::runs::open_store_read_only(Some(&opts.db))?;
    let parts = done
        .runs
        .iter()
        .map(|(name, id)| {
            let mut s = Summary::of(&crate::runs::view(&store, *id)?);
            s.store = Some(opts.db.to_string());
            Ok((*name, s))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let end = StudyEnding {
        schema_version: 1,
        study: def.id.to_string(),
        parts,
        findings: &done.findings,
        part_count: done.parts,
        secs: done.secs,
        report: done.report.display().to_string(),
    };
    let width = crate::runs::terminal_width();
    let text = match (a.quiet, a.json) {
        // One line: `study all --json` writes a line per study.
        (_, true) => serde_json::to_string(&end)? + "\n",
        (true, false) => end.findings_text(width),
        (false, false) => end.text(width),
    };
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the summary")?;
    if done.interrupted {
        bail!("interrupted: the report covers the parts that ran");
    }
    Ok((if done.failed > 0 { 4 } else { 0 }, done.findings))
}
