//! `netsonde study NAME`: runs a reference study's parts (`netsonde_studies`) as
//! this binary's own commands (`run FILE`, `lab run FILE -- run FILE`, `search`),
//! each stored in the results store, then writes the study's report from the
//! stored runs: `report.md` with its figures as SVG and PNG.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use netsonde_model::sweep::Metric;
use netsonde_store::{Location, Store};
use netsonde_studies::{
    Data, Finding, PartDef, PartKind, SearchRow, StoredPeak, StudyDef, Verdict,
};

use crate::args::{StudyArgs, UsageError};

/// `study --list`.
fn list() -> String {
    let mut o = String::new();
    for d in netsonde_studies::all() {
        o.push_str(&format!(
            "{}  {}\n     seed: shared/reference/{}\n",
            d.name(),
            d.title,
            d.seed
        ));
        for p in d.parts {
            o.push_str(&format!(
                "     - {}{}: {}\n",
                p.name,
                if p.lab { " (lab)" } else { "" },
                p.what
            ));
        }
    }
    o
}

/// A sysctl raised for the study's run and put back when dropped: on success, on
/// error and after an interrupted part (the signal only sets a flag here).
struct Raised {
    restore: Vec<(PathBuf, String)>,
}

impl Raised {
    fn raise(keys: &[&str], at_least: u64) -> (Raised, Option<u64>) {
        let mut restore = Vec::new();
        let mut in_force = None;
        for k in keys {
            let path = Path::new("/proc/sys").join(k.replace('.', "/"));
            let Ok(old) = std::fs::read_to_string(&path) else {
                continue;
            };
            let old = old.trim().to_string();
            let mut now = old.parse::<u64>().ok();
            if now.is_some_and(|v| v < at_least) {
                match std::fs::write(&path, at_least.to_string()) {
                    Ok(()) => {
                        eprintln!("study: {k} raised from {old} to {at_least} for this run");
                        restore.push((path, old));
                        now = Some(at_least);
                    }
                    Err(e) => {
                        eprintln!("study: {k} stays {old} ({e}): larger windows will be capped")
                    }
                }
            }
            in_force = match (in_force, now) {
                (Some(a), Some(b)) => Some(std::cmp::min(a, b)),
                (a, b) => a.or(b),
            };
        }
        (Raised { restore }, in_force)
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        for (path, old) in &self.restore {
            match std::fs::write(path, old) {
                Ok(()) => eprintln!("study: {} restored to {old}", path.display()),
                Err(e) => eprintln!("study: could not restore {} to {old}: {e}", path.display()),
            }
        }
    }
}

/// Runs this binary with `args`; its stdout is returned when `capture`, else
/// shown. Returns the exit code (`None`: killed by a signal).
fn child(args: &[String], capture: bool) -> anyhow::Result<(Option<i32>, String)> {
    let exe = std::env::current_exe().context("finding this program's path")?;
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stderr(Stdio::inherit());
    if !capture {
        let status = c.status().context("starting a study part")?;
        return Ok((status.code(), String::new()));
    }
    let out = c.output().context("starting a study part")?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

fn search_rows(json: &str) -> anyhow::Result<Vec<SearchRow>> {
    let doc: serde_json::Value =
        serde_json::from_str(json.trim()).context("reading the search's result")?;
    let rows = doc["searches"]
        .as_array()
        .context("the search's result has no searches")?;
    Ok(rows
        .iter()
        .map(|r| SearchRow {
            frame: r["frame"].as_u64().unwrap_or(0) as u32,
            io: r["io"].as_str().unwrap_or("").to_string(),
            ndr_pps: r["ndr"]["lower"].as_f64(),
            pdr_pps: r["pdr"]["lower"].as_f64(),
            converged: r["converged"].as_bool().unwrap_or(false),
        })
        .collect())
}

/// The best stream goodput in the store's measured runs other than `mine`.
fn stored_peak(store: &Store, mine: &[i64]) -> anyhow::Result<StoredPeak> {
    let mut peak = StoredPeak {
        runs: 0,
        points: 0,
        best: None,
    };
    for r in store.runs()? {
        // The scripted engine's runs are not measurements.
        let scripted = netsonde_run::load(store, r.id)
            .is_ok_and(|(p, _)| p.engine == netsonde_run::Engine::Fake);
        if mine.contains(&r.id) || scripted {
            continue;
        }
        let Ok(s) = netsonde_run::view(store, r.id) else {
            continue;
        };
        peak.runs += 1;
        for p in &s.points {
            if p.spec.test.is_rr() {
                continue;
            }
            if let Some(g) = p.median(Metric::Goodput.name()) {
                peak.points += 1;
                if peak.best.as_ref().is_none_or(|b| g > b.0) {
                    peak.best = Some((g, r.id, r.label.clone()));
                }
            }
        }
    }
    Ok(peak)
}

/// `netsonde study`; returns the exit code (4 when a part failed).
pub fn run(a: StudyArgs) -> anyhow::Result<u8> {
    if a.list {
        print!("{}", list());
        return Ok(0);
    }
    let name = a.name.as_deref().unwrap_or_default();
    if name == "all" {
        // Each study into its own folder under --out (default studies/).
        let base = a.out.clone().unwrap_or_else(|| PathBuf::from("studies"));
        let mut worst = 0;
        let mut index = format!(
            "# The reference studies, reproduced\n\nEach study reruns one of the classic adapter and host-stack evaluations in `shared/reference/` on this host and decides the seed's findings from today's data. Regenerate them all with `netsonde study all --out {}{}` (root, for the lab parts), or one with `netsonde study NUMBER`.\n\n| study | findings that hold / in part / do not / not measured | report |\n|---|---|---|\n",
            base.display(),
            if a.quick { " --quick" } else { "" }
        );
        for def in netsonde_studies::all() {
            let (code, findings) = one(&a, def, base.join(def.name()))?;
            worst = worst.max(code);
            let n = |v: Verdict| findings.iter().filter(|f| f.verdict == v).count();
            index.push_str(&format!(
                "| {} {} | {} / {} / {} / {} | [{}/report.md]({}/report.md) |\n",
                def.id,
                def.title,
                n(Verdict::Holds),
                n(Verdict::Partly),
                n(Verdict::DoesNotHold),
                n(Verdict::NotMeasured),
                def.name(),
                def.name()
            ));
        }
        let path = base.join("README.md");
        std::fs::write(&path, index).with_context(|| format!("writing {}", path.display()))?;
        println!("studies: {}", path.display());
        return Ok(worst);
    }
    let def = netsonde_studies::find(name).map_err(|e| UsageError(e.to_string()))?;
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("study-{}", def.name())));
    Ok(one(&a, def, out)?.0)
}

/// Makes the study's folder, its `parts` and `figures` folders and the store
/// every part shares; returns them, resolved: (out, parts, figures, store).
fn places(a: &StudyArgs, out: PathBuf) -> anyhow::Result<(PathBuf, PathBuf, PathBuf, Location)> {
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let out =
        std::fs::canonicalize(&out).with_context(|| format!("resolving {}", out.display()))?;
    let (parts, figures) = (out.join("parts"), out.join("figures"));
    for d in [&parts, &figures] {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let db = a.store.db.clone().unwrap_or_else(Location::default_file);
    // The store is created here, so every part and the report share it.
    drop(crate::runs::open_store(Some(&db))?);
    let db = match db {
        Location::File(path) => Location::File(
            std::fs::canonicalize(&path)
                .with_context(|| format!("resolving {}", path.display()))?,
        ),
        shared @ Location::Postgres(_) => shared,
    };
    Ok((out, parts, figures, db))
}

/// Whether the lab can run here; why not, when it cannot.
fn lab_status() -> Result<(), String> {
    if !netsonde_lab::probe::privileged() {
        return Err("the lab needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)".into());
    }
    netsonde_lab::probe::require_tools().map_err(|e| e.to_string())
}

/// The socket buffer ceiling a study asks for, raised for its run where the lab
/// can run (else only read); the guard puts it back.
fn buffers(def: &StudyDef, lab_ok: bool) -> (Option<Raised>, Option<u64>) {
    match def.buffers {
        Some(n) if lab_ok => {
            let (r, f) = Raised::raise(&["net.core.rmem_max", "net.core.wmem_max"], n);
            (Some(r), f)
        }
        Some(_) => (
            None,
            std::fs::read_to_string("/proc/sys/net/core/rmem_max")
                .ok()
                .and_then(|v| v.trim().parse().ok()),
        ),
        None => (None, None),
    }
}

/// One study's run in progress: where it writes and what its parts gave.
struct StudyRun<'a> {
    a: &'a StudyArgs,
    def: StudyDef,
    out: PathBuf,
    parts_dir: PathBuf,
    db: Location,
    data: Data,
    commands: BTreeMap<&'static str, String>,
    runs: BTreeMap<&'static str, i64>,
    failed: usize,
}

impl StudyRun<'_> {
    fn dbs(&self) -> String {
        self.db.arg()
    }

    /// A sweep part: its experiment written to a file and run (in the lab when
    /// the part asks), the run it stored kept.
    fn sweep(&mut self, part: &PartDef) -> anyhow::Result<()> {
        let exp = part
            .experiment(self.def.id, self.a.quick)?
            .context("a sweep part has an experiment")?;
        let file = self.parts_dir.join(format!("{}.toml", part.name));
        std::fs::write(&file, toml_text(&exp)?)
            .with_context(|| format!("writing {}", file.display()))?;
        let (f, dbs) = (file.display().to_string(), self.dbs());
        let mut args: Vec<String> = Vec::new();
        if part.lab {
            args.extend(["lab", "run", &f, "--"].map(String::from));
        }
        args.extend(["run", &f, "--db", &dbs, "--no-report"].map(String::from));
        let before = newest_run(&self.db)?;
        let (code, _) = child(&args, false)?;
        self.commands
            .insert(part.name, shown(&args, &self.out, &dbs));
        let id = run_after(&self.db, before, &exp.label.clone().unwrap_or_default())?;
        match (code, id) {
            (Some(0), Some(id)) => {
                self.runs.insert(part.name, id);
            }
            (Some(4), Some(id)) => {
                eprintln!(
                    "study {}: part '{}' ended with points pending: its report uses what it measured",
                    self.def.id, part.name
                );
                self.runs.insert(part.name, id);
            }
            (code, id) => {
                self.failed += 1;
                let why = match code {
                    Some(c) => format!("it exited with code {c}"),
                    None => "it was killed by a signal".into(),
                };
                self.data.skipped.insert(part.name, why);
                if let Some(id) = id {
                    self.runs.insert(part.name, id);
                }
            }
        }
        Ok(())
    }

    /// A search part: `netsonde search --json` into the study's store, its rows
    /// kept.
    fn search(&mut self, part: &PartDef, given: &[&str], quick: &[&str]) -> anyhow::Result<()> {
        let dbs = self.dbs();
        let mut args: Vec<String> = vec!["search".into()];
        args.extend(given.iter().map(|v| v.to_string()));
        if self.a.quick {
            args.extend(quick.iter().map(|v| v.to_string()));
        }
        // Stored with the study's other parts; its table is the study's.
        args.extend(["--json", "--db", &dbs, "--no-report"].map(String::from));
        let (code, stdout) = child(&args, true)?;
        self.commands
            .insert(part.name, shown(&args, &self.out, &dbs));
        match (code, search_rows(&stdout)) {
            (Some(0 | 4), Ok(rows)) => {
                self.data.searches.insert(part.name, rows);
            }
            (code, rows) => {
                self.failed += 1;
                let why = match (code, rows) {
                    (_, Err(e)) => format!("{e:#}"),
                    (Some(c), _) => format!("the search exited with code {c}"),
                    (None, _) => "the search was killed by a signal".into(),
                };
                self.data.skipped.insert(part.name, why);
            }
        }
        Ok(())
    }

    /// The memory-copy part, measured in this process.
    fn memcopy(&mut self, part: &PartDef) {
        let budget = Duration::from_millis(if self.a.quick { 300 } else { 2000 });
        let bps = netsonde_cpu::memory::copy_bandwidth(64 << 20, budget) * 8.0;
        eprintln!(
            "study {}: memory copy {}",
            self.def.id,
            netsonde_model::units::BitRate(bps)
        );
        self.data.memcpy_bps = Some(bps);
        self.commands.insert(
            part.name,
            "in process: copy_from_slice between two 64 MiB buffers, best round".into(),
        );
    }

    /// The parts' runs analysed, the figures drawn and `report.md` written;
    /// returns the exit code (4 when a part failed) and the findings.
    fn report(
        mut self,
        figures_dir: &Path,
        started: Instant,
    ) -> anyhow::Result<(u8, Vec<Finding>)> {
        let store = crate::runs::open_store(Some(&self.db))?;
        for (part, id) in &self.runs {
            self.data
                .sweeps
                .insert(part, netsonde_run::view(&store, *id)?);
        }
        if self.def.parts.iter().any(|p| p.name == "peak") {
            let mine: Vec<i64> = self.runs.values().copied().collect();
            self.data.stored_peak = Some(stored_peak(&store, &mine)?);
        }
        let (def, data) = (&self.def, &self.data);
        let analysis = (def.analyse)(data);
        let plots = netsonde_studies::figures(def, data, &analysis);
        let png = crate::runs::write_figures(figures_dir, &plots)?;
        let figures: Vec<(String, String)> = plots
            .iter()
            .map(|p| (p.id.clone(), p.title.clone()))
            .collect();
        let command = format!(
            "netsonde study {}{}",
            def.id,
            if self.a.quick { " --quick" } else { "" }
        );
        let md = netsonde_studies::markdown(
            def,
            data,
            &analysis,
            &figures,
            png,
            &self.commands,
            &self.runs,
            &command,
        );
        let report = self.out.join("report.md");
        std::fs::write(&report, md).with_context(|| format!("writing {}", report.display()))?;
        for f in &analysis.findings {
            println!("{:<14} {}", f.verdict.text(), f.claim);
        }
        println!(
            "study {}: {} parts in {:.0} s; report: {}",
            def.id,
            def.parts.len(),
            started.elapsed().as_secs_f64(),
            report.display()
        );
        Ok((if self.failed > 0 { 4 } else { 0 }, analysis.findings))
    }
}

/// Runs one study into `out`; returns the exit code and its findings.
fn one(a: &StudyArgs, def: StudyDef, out: PathBuf) -> anyhow::Result<(u8, Vec<Finding>)> {
    let (out, parts_dir, figures_dir, db) = places(a, out)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let lab = lab_status();
    let started = Instant::now();
    let (raised, in_force) = buffers(&def, lab.is_ok());
    let mut run = StudyRun {
        a,
        def,
        out,
        parts_dir,
        db,
        data: Data {
            quick: a.quick,
            rmem_max: in_force,
            ..Data::default()
        },
        commands: BTreeMap::new(),
        runs: BTreeMap::new(),
        failed: 0,
    };
    for part in def.parts {
        if stop.load(Ordering::Relaxed) {
            run.data.skipped.insert(part.name, "interrupted".into());
            continue;
        }
        if let (true, Err(why)) = (part.lab, &lab) {
            eprintln!("study {}: SKIPPED part '{}': {why}", def.id, part.name);
            run.data.skipped.insert(part.name, why.clone());
            continue;
        }
        eprintln!("study {}: part '{}': {}", def.id, part.name, part.what);
        match part.kind {
            PartKind::Sweep { .. } => run.sweep(part)?,
            PartKind::Search { args, quick } => run.search(part, args, quick)?,
            PartKind::MemCopy => run.memcopy(part),
        }
    }
    drop(raised);
    let result = run.report(&figures_dir, started)?;
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted: the report covers the parts that ran");
    }
    Ok(result)
}

/// A part's command as the report shows it: its file relative to the report's
/// folder, the store left out.
fn shown(args: &[String], out: &Path, db: &str) -> String {
    let prefix = format!("{}/", out.display());
    let mut v = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "--db" {
            skip = true;
            continue;
        }
        if a == db {
            continue;
        }
        v.push(a.strip_prefix(&prefix).unwrap_or(a).to_string());
    }
    format!("netsonde {}", v.join(" "))
}

fn toml_text(e: &netsonde_sweep::file::Experiment) -> anyhow::Result<String> {
    toml::to_string(e).context("writing a part's experiment file")
}

fn newest_run(db: &Location) -> anyhow::Result<i64> {
    let store = crate::runs::open_store(Some(db))?;
    Ok(store.runs()?.iter().map(|r| r.id).max().unwrap_or(0))
}

/// The run a part stored: the first after `before` with its label.
fn run_after(db: &Location, before: i64, label: &str) -> anyhow::Result<Option<i64>> {
    let store = crate::runs::open_store(Some(db))?;
    Ok(store
        .runs()?
        .iter()
        .filter(|r| r.id > before && r.label == label)
        .map(|r| r.id)
        .min())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_search_document_becomes_rows() {
        let rows = super::search_rows(
            r#"{"schema_version":1,"searches":[{"frame":4096,"payload":4054,"io":"copy","ndr":{"lower":1000.5,"upper":1010.0,"found":true},"pdr":{"lower":null},"converged":true}]}"#,
        )
        .unwrap();
        assert_eq!(rows[0].frame, 4096);
        assert_eq!(rows[0].ndr_pps, Some(1000.5));
        assert_eq!(rows[0].pdr_pps, None);
        assert!(super::search_rows("not json").is_err());
    }
}
