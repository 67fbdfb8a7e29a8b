//! A reference study run on this host: each part (`netsonde_studies`) run as
//! this program's own command (`run FILE`, `lab run FILE -- run FILE`,
//! `search ... --json`) into one store, or measured in process (the
//! memory-copy bandwidth); then the study's report written from the stored
//! runs: `report.md` with its figures as SVG and PNG.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use netsonde_model::sweep::Metric;
use netsonde_store::{Location, Store, StoreError};
use netsonde_studies::{
    Data, Finding, PartDef, PartKind, SearchRow, StoredPeak, StudyDef, Verdict,
};

use crate::error::{open_store, OpenError};
use crate::output::OutputError;
use crate::PipelineError;

/// Why a study could not be run or reported.
#[derive(Debug, thiserror::Error)]
pub enum StudyRunError {
    /// A folder or file could not be made, or a part could not be started.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The study's definition.
    #[error(transparent)]
    Study(#[from] netsonde_studies::StudyError),
    /// The store could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A sweep part without an experiment (a definition's mistake).
    #[error("part '{0}' is a sweep without an experiment")]
    NoExperiment(&'static str),
    /// A stored run.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// A part's experiment could not be written as TOML.
    #[error("writing a part's experiment file")]
    Toml(#[from] toml::ser::Error),
    /// The report's figures.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// Opens the study's store, saying which on failure.
fn open(db: &Location) -> Result<Store, StudyRunError> {
    Ok(open_store(db)?)
}

fn io(what: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> StudyRunError {
    let what = what.to_string();
    move |source| StudyRunError::Io { what, source }
}

/// How studies run here.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    /// `--quick`: fewer points, one repetition, short trials.
    pub quick: bool,
    /// The store every part and the report share.
    pub db: Location,
    /// The program each part runs as (this netsonde).
    pub exe: PathBuf,
}

/// How one study went.
#[derive(Debug)]
pub struct StudyOutcome {
    /// Its parts.
    pub parts: usize,
    /// Parts that failed (their findings are not measured).
    pub failed: usize,
    /// Each finding, decided.
    pub findings: Vec<Finding>,
    /// `report.md`.
    pub report: PathBuf,
    /// Wall time.
    pub secs: f64,
    /// Whether a signal stopped it (the report covers the parts that ran).
    pub interrupted: bool,
    /// Each part's stored run, by the part's name, in the study's order.
    pub runs: Vec<(&'static str, i64)>,
}

/// `study --list`.
pub fn list() -> String {
    let mut o = String::new();
    for d in netsonde_studies::all() {
        o.push_str(&format!(
            "{}  {}\n     seed: {}\n",
            d.name(),
            d.title,
            d.citation()
        ));
        for p in d.parts {
            let lab = if p.lab { " (lab)" } else { "" };
            o.push_str(&format!("     - {}{lab}: {}\n", p.name, p.what));
        }
    }
    o
}

/// The index `study all` writes beside the studies' folders: a row per study,
/// its findings counted by verdict.
pub fn index(base: &Path, quick: bool, done: &[(StudyDef, Vec<Finding>)]) -> String {
    let mut index = format!(
        "# The reference studies, reproduced\n\nEach study reruns one of the classic adapter and host-stack evaluations in `shared/reference/` on this host and decides the seed's findings from today's data. Regenerate them all with `netsonde study all --out {}{}` (root, for the lab parts), or one with `netsonde study NUMBER`.\n\n| study | findings that hold / in part / do not / not measured | report |\n|---|---|---|\n",
        base.display(),
        if quick { " --quick" } else { "" }
    );
    for (def, findings) in done {
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
    index
}

/// The study's socket buffer ceilings raised for its run, put back when
/// dropped (on success, on error and after an interrupted part), with what was
/// done said through `note`. The old values are recorded in the lab's state
/// folder before they change, so a study killed with SIGKILL leaves them to
/// the next study's start or `lab clean` ([`netsonde_lab::host_settings`]).
struct Raised<'a> {
    settings: netsonde_lab::host_settings::Raised,
    note: &'a dyn Fn(&str),
}

impl<'a> Raised<'a> {
    fn raise(keys: &[&str], at_least: u64, note: &'a dyn Fn(&str)) -> (Raised<'a>, Option<u64>) {
        use netsonde_lab::host_settings::{self, Outcome};
        let dir = netsonde_lab::StateDir::default();
        for said in host_settings::restore_orphans(&dir) {
            note(&format!("study: a killed run's host setting: {said}"));
        }
        let mut settings = host_settings::Raised::default();
        let mut in_force: Option<u64> = None;
        for k in keys {
            let now = match host_settings::raise(&dir, &mut settings, k, at_least) {
                Outcome::Raised { old, new } => {
                    note(&format!(
                        "study: {k} raised from {old} to {new} for this run"
                    ));
                    Some(new)
                }
                Outcome::AlreadyAtLeast(v) => Some(v),
                Outcome::Unchanged(why) => {
                    let was = std::fs::read_to_string(host_settings::sysctl_path(k)).ok();
                    note(&format!(
                        "study: {k} stays {} ({why}): larger windows will be capped",
                        was.as_deref().map_or("as it is", str::trim)
                    ));
                    was.and_then(|v| v.trim().parse().ok())
                }
            };
            in_force = match (in_force, now) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        (Raised { settings, note }, in_force)
    }
}

impl Drop for Raised<'_> {
    fn drop(&mut self) {
        for said in self.settings.restore() {
            (self.note)(&format!("study: {said}"));
        }
    }
}

/// Runs `exe` with `args`; its stdout is returned when `capture`, else shown
/// on standard error with its progress (the study's standard output is its
/// summary at the end). Returns the exit code (`None`: killed by a signal).
fn child(
    exe: &Path,
    args: &[String],
    capture: bool,
) -> Result<(Option<i32>, String), StudyRunError> {
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stderr(Stdio::inherit());
    // A study killed with SIGKILL takes its parts with it.
    netsonde_lab::die_with_parent(&mut c);
    if !capture {
        use std::os::fd::AsFd;
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(io("starting a study part"))?;
        let status = c
            .stdout(Stdio::from(stderr))
            .status()
            .map_err(io("starting a study part"))?;
        return Ok((status.code(), String::new()));
    }
    let out = c.output().map_err(io("starting a study part"))?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// A `search --json` document's rows, or why it is not one.
fn search_rows(json: &str) -> Result<(i64, Vec<SearchRow>), String> {
    let doc: serde_json::Value = serde_json::from_str(json.trim())
        .map_err(|e| format!("reading the search's result: {e}"))?;
    let rows = doc["searches"]
        .as_array()
        .ok_or("the search's result has no searches")?;
    let run = doc["run"]
        .as_i64()
        .ok_or("the search's result names no run")?;
    Ok((
        run,
        rows.iter()
            .map(|r| SearchRow {
                frame: r["frame"].as_u64().unwrap_or(0) as u32,
                io: r["io"].as_str().unwrap_or("").to_string(),
                ndr_pps: r["ndr"]["lower"].as_f64(),
                pdr_pps: r["pdr"]["lower"].as_f64(),
                converged: r["converged"].as_bool().unwrap_or(false),
            })
            .collect(),
    ))
}

/// The best stream goodput in the store's measured runs other than `mine`.
fn stored_peak(store: &Store, mine: &[i64]) -> Result<StoredPeak, StudyRunError> {
    let mut peak = StoredPeak {
        runs: 0,
        points: 0,
        best: None,
    };
    for r in store.runs()? {
        // The scripted engine's runs are not measurements.
        let scripted = crate::load(store, r.id).is_ok_and(|(p, _)| p.engine == crate::Engine::Fake);
        if mine.contains(&r.id) || scripted {
            continue;
        }
        let Ok(s) = crate::view(store, r.id) else {
            continue;
        };
        peak.runs += 1;
        for p in s.points.iter().filter(|p| !p.spec.test.is_rr()) {
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

/// Makes the study's folder, its `parts` and `figures` folders and the store
/// every part shares; returns them, resolved: (out, parts, figures, store).
fn places(
    db: &Location,
    out: &Path,
) -> Result<(PathBuf, PathBuf, PathBuf, Location), StudyRunError> {
    std::fs::create_dir_all(out).map_err(io(format!("creating {}", out.display())))?;
    let out = std::fs::canonicalize(out).map_err(io(format!("resolving {}", out.display())))?;
    let (parts, figures) = (out.join("parts"), out.join("figures"));
    for d in [&parts, &figures] {
        std::fs::create_dir_all(d).map_err(io(format!("creating {}", d.display())))?;
    }
    // The store is created here, so every part and the report share it.
    drop(open(db)?);
    let db = match db {
        Location::File(path) => Location::File(
            std::fs::canonicalize(path).map_err(io(format!("resolving {}", path.display())))?,
        ),
        shared @ Location::Postgres(_) => shared.clone(),
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
fn buffers<'a>(
    def: &StudyDef,
    lab_ok: bool,
    note: &'a dyn Fn(&str),
) -> (Option<Raised<'a>>, Option<u64>) {
    match def.buffers {
        Some(n) if lab_ok => {
            let (r, f) = Raised::raise(&["net.core.rmem_max", "net.core.wmem_max"], n, note);
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
    opts: &'a StudyOptions,
    def: StudyDef,
    out: PathBuf,
    parts_dir: PathBuf,
    db: Location,
    data: Data,
    commands: BTreeMap<&'static str, String>,
    runs: BTreeMap<&'static str, i64>,
    /// The search parts' runs (their rows are in `data`).
    search_runs: BTreeMap<&'static str, i64>,
    failed: usize,
    note: &'a dyn Fn(&str),
}

impl StudyRun<'_> {
    /// A sweep part: its experiment written to a file and run (in the lab when
    /// the part asks), the run it stored kept.
    fn sweep(&mut self, part: &PartDef) -> Result<(), StudyRunError> {
        let exp = part
            .experiment(self.def.id, self.opts.quick)?
            .ok_or(StudyRunError::NoExperiment(part.name))?;
        let file = self.parts_dir.join(format!("{}.toml", part.name));
        crate::output::write(&file, toml::to_string(&exp)?)?;
        let (f, dbs) = (file.display().to_string(), self.db.arg());
        let mut args: Vec<String> = Vec::new();
        if part.lab {
            args.extend(["lab", "run", &f, "--"].map(String::from));
        }
        // The study ends with each part's summary: the part says only where
        // its run is.
        args.extend(["run", &f, "--db", &dbs, "--no-report", "--quiet"].map(String::from));
        let before = newest_run(&self.db)?;
        let (code, _) = child(&self.opts.exe, &args, false)?;
        self.commands
            .insert(part.name, shown(&args, &self.out, &dbs));
        let id = run_after(&self.db, before, &exp.label.clone().unwrap_or_default())?;
        match (code, id) {
            (Some(0), Some(id)) => {
                self.runs.insert(part.name, id);
            }
            (Some(4), Some(id)) => {
                (self.note)(&format!(
                    "study {}: part '{}' ended with points pending: its report uses what it measured",
                    self.def.id, part.name
                ));
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
    fn search(
        &mut self,
        part: &PartDef,
        given: &[&str],
        quick: &[&str],
    ) -> Result<(), StudyRunError> {
        let dbs = self.db.arg();
        let mut args: Vec<String> = vec!["search".into()];
        args.extend(given.iter().map(|v| v.to_string()));
        if self.opts.quick {
            args.extend(quick.iter().map(|v| v.to_string()));
        }
        // Stored with the study's other parts; its table is the study's.
        args.extend(["--json", "--db", &dbs, "--no-report"].map(String::from));
        let (code, stdout) = child(&self.opts.exe, &args, true)?;
        self.commands
            .insert(part.name, shown(&args, &self.out, &dbs));
        match (code, search_rows(&stdout)) {
            (Some(0 | 4), Ok((id, rows))) => {
                self.data.searches.insert(part.name, rows);
                self.search_runs.insert(part.name, id);
            }
            (code, rows) => {
                self.failed += 1;
                let why = match (code, rows) {
                    (_, Err(e)) => e,
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
        let budget = Duration::from_millis(if self.opts.quick { 300 } else { 2000 });
        let bps = netsonde_cpu::memory::copy_bandwidth(64 << 20, budget) * 8.0;
        (self.note)(&format!(
            "study {}: memory copy {}",
            self.def.id,
            netsonde_model::units::BitRate(bps)
        ));
        self.data.memcpy_bps = Some(bps);
        self.commands.insert(
            part.name,
            "in process: copy_from_slice between two 64 MiB buffers, best round".into(),
        );
    }

    /// The parts' runs analysed, the figures drawn and `report.md` written;
    /// returns the report's path and the findings.
    fn report(mut self, figures_dir: &Path) -> Result<(PathBuf, Vec<Finding>), StudyRunError> {
        let store = open(&self.db)?;
        for (part, id) in &self.runs {
            self.data.sweeps.insert(part, crate::view(&store, *id)?);
        }
        if self.def.parts.iter().any(|p| p.name == "peak") {
            let mine: Vec<i64> = self.runs.values().copied().collect();
            self.data.stored_peak = Some(stored_peak(&store, &mine)?);
        }
        let (def, data) = (&self.def, &self.data);
        let analysis = (def.analyse)(data);
        let plots = netsonde_studies::figures(def, data, &analysis);
        let written = crate::output::write_figures(figures_dir, &plots)?;
        if let Some(why) = &written.svg_only {
            (self.note)(&format!("report: figures as SVG only: {why}"));
        }
        let figures: Vec<(String, String)> = plots
            .iter()
            .map(|p| (p.id.clone(), p.title.clone()))
            .collect();
        let quick = if self.opts.quick { " --quick" } else { "" };
        let command = format!("netsonde study {}{quick}", def.id);
        let md = netsonde_studies::markdown(
            def,
            data,
            &analysis,
            &figures,
            written.png,
            &self.commands,
            &self.runs,
            &command,
        );
        let report = self.out.join("report.md");
        crate::output::write(&report, md)?;
        Ok((report, analysis.findings))
    }
}

/// Runs the study `def` into `out` until its parts are done or `stop` is
/// raised (the parts not started then are "interrupted"), then writes its
/// report. `note` hears what the run says on the way (for standard error).
pub fn run_study(
    def: StudyDef,
    out: &Path,
    opts: &StudyOptions,
    stop: &AtomicBool,
    note: &dyn Fn(&str),
) -> Result<StudyOutcome, StudyRunError> {
    let (out, parts_dir, figures_dir, db) = places(&opts.db, out)?;
    let lab = lab_status();
    let started = Instant::now();
    let (raised, in_force) = buffers(&def, lab.is_ok(), note);
    let mut run = StudyRun {
        opts,
        def,
        out,
        parts_dir,
        db,
        data: Data {
            quick: opts.quick,
            rmem_max: in_force,
            ..Data::default()
        },
        commands: BTreeMap::new(),
        runs: BTreeMap::new(),
        search_runs: BTreeMap::new(),
        failed: 0,
        note,
    };
    for part in def.parts {
        if stop.load(Ordering::Relaxed) {
            run.data.skipped.insert(part.name, "interrupted".into());
            continue;
        }
        if let (true, Err(why)) = (part.lab, &lab) {
            note(&format!(
                "study {}: SKIPPED part '{}': {why}",
                def.id, part.name
            ));
            run.data.skipped.insert(part.name, why.clone());
            continue;
        }
        note(&format!(
            "study {}: part '{}': {}",
            def.id, part.name, part.what
        ));
        match part.kind {
            PartKind::Sweep { .. } => run.sweep(part)?,
            PartKind::Search { args, quick } => run.search(part, args, quick)?,
            PartKind::MemCopy => run.memcopy(part),
        }
    }
    drop(raised);
    let failed = run.failed;
    let runs = def
        .parts
        .iter()
        .filter_map(|p| {
            let id = run.runs.get(p.name).or(run.search_runs.get(p.name))?;
            Some((p.name, *id))
        })
        .collect();
    let (report, findings) = run.report(&figures_dir)?;
    Ok(StudyOutcome {
        runs,
        parts: def.parts.len(),
        failed,
        findings,
        report,
        secs: started.elapsed().as_secs_f64(),
        interrupted: stop.load(Ordering::Relaxed),
    })
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

fn newest_run(db: &Location) -> Result<i64, StudyRunError> {
    let store = open(db)?;
    Ok(store.runs()?.iter().map(|r| r.id).max().unwrap_or(0))
}

/// The run a part stored: the first after `before` with its label.
fn run_after(db: &Location, before: i64, label: &str) -> Result<Option<i64>, StudyRunError> {
    let store = open(db)?;
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
        let (run, rows) = super::search_rows(
            r#"{"schema_version":1,"run":12,"searches":[{"frame":4096,"payload":4054,"io":"copy","ndr":{"lower":1000.5,"upper":1010.0,"found":true},"pdr":{"lower":null},"converged":true}]}"#,
        )
        .unwrap();
        assert_eq!(run, 12);
        assert_eq!(rows[0].frame, 4096);
        assert_eq!(rows[0].ndr_pps, Some(1000.5));
        assert_eq!(rows[0].pdr_pps, None);
        assert!(super::search_rows("not json").is_err());
    }
}
