//! `netsonde sweep`, `run FILE.toml`, `search` and `mesh` at the terminal: the
//! run (`netsonde_run::sweep`) with a progress bar and signal handlers, then its
//! report written and its summary shown (`netsonde_report::summary`), as
//! `runs show` shows it.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use std::io::Write;

use anyhow::Context;
use netsonde_report::summary::Summary;
use netsonde_run::sweep::{SweepEnd, SweepRequest};
use netsonde_run::SweepError;
use netsonde_sweep::exec::Progress;
use netsonde_sweep::Point;

use crate::runs;

/// A sweep as the binary runs it.
#[derive(Debug)]
pub struct Request {
    /// The run.
    pub run: SweepRequest,
    /// `--resume`: `latest` or a run number.
    pub resume: Option<String>,
    /// Report folder.
    pub out: Option<PathBuf>,
    /// Write no report.
    pub no_report: bool,
    /// How the run ends on standard output.
    pub ending: Ending,
}

/// What a run ends with on standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Its summary fitted to the terminal (`netsonde_report::summary`), then
    /// where the report and the run are.
    Summary,
    /// Only where the report and the run are (`--quiet`).
    Quiet,
    /// The summary as one JSON document (`--json`); the rest on standard error.
    Json,
}

impl Ending {
    /// From `--quiet` and `--json`.
    pub fn of(quiet: bool, json: bool) -> Ending {
        match (quiet, json) {
            (_, true) => Ending::Json,
            (true, false) => Ending::Quiet,
            (false, false) => Ending::Summary,
        }
    }
}

/// The progress bar; with `every`, a line per measurement above it (a search's
/// trials, each deciding the next).
struct Bar {
    bar: indicatif::ProgressBar,
    every: bool,
}

/// A point's axes as a short label: `udp-stream out size 18 io batch`, a
/// mesh's pair first (`a→b tcp-stream ...`).
fn point_label(point: &Point) -> String {
    let a = &point.axes;
    let get = |k: &str| a.get(k).map(String::as_str).unwrap_or("");
    let mut l = match (a.get("src"), a.get("dst")) {
        (Some(s), Some(d)) => format!("{s}→{d} "),
        _ => String::new(),
    };
    l.push_str(&format!(
        "{} {} size {}",
        get("test"),
        get("direction"),
        get("size")
    ));
    if let Some(io) = a.get("io") {
        l.push_str(&format!(" io {io}"));
    }
    l
}

impl Progress for Bar {
    fn begin(&mut self, point: &Point, rep: u32) {
        self.bar
            .set_message(format!("{} rep {}", point_label(point), rep + 1));
    }
    fn end(&mut self, point: &Point, rep: u32, outcome: &str) {
        if self.every {
            self.say(format!(
                "point {} ({}) trial {:>2}: {outcome}",
                point.idx,
                point_label(point),
                rep + 1
            ));
        } else if outcome.starts_with("failed") {
            self.say(format!("point {} rep {}: {outcome}", point.idx, rep + 1));
        }
        self.bar.inc(1);
    }
    fn retry(&mut self, point: &Point, rep: u32, wait: Duration, why: &str) {
        let when = if wait.is_zero() {
            String::new()
        } else {
            format!(" in {:.1} s", wait.as_secs_f64())
        };
        self.say(format!(
            "point {} rep {}: {why}; trying again{when}",
            point.idx,
            rep + 1,
        ));
    }
}

impl Bar {
    /// A line above the bar, or on stderr when there is no terminal to draw on,
    /// wrapped to the terminal's width.
    fn say(&self, line: String) {
        let line = netsonde_report::prose_fitted(&line, runs::terminal_width());
        let line = line.trim_end();
        if self.bar.is_hidden() {
            eprintln!("{line}");
        } else {
            self.bar.println(line);
        }
    }
}

/// A sweep's error as the binary reports it: what was asked is a usage error.
pub(crate) fn cli_error(e: SweepError) -> anyhow::Error {
    match e {
        SweepError::Usage(m) => netsonde_args::UsageError(m).into(),
        e => e.into(),
    }
}

/// Runs a sweep (new or resumed) and ends with its summary (as
/// `req.ending` says). An interruption is an error, after keeping every
/// completed repetition, writing the report and the summary.
pub fn sweep(mut req: Request) -> anyhow::Result<(Summary, SweepEnd)> {
    let mut store = runs::open_store(Some(&req.run.db))?;
    if let Some(r) = &req.resume {
        req.run.resume = Some(runs::run_id(&store, Some(r))?);
    }
    let prepared = netsonde_run::sweep::prepare(&mut store, &req.run).map_err(cli_error)?;
    eprint!(
        "{}",
        netsonde_report::prose_fitted(&prepared.describe(), runs::terminal_width())
    );
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    let bar = indicatif::ProgressBar::new(prepared.planned() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            // The point's label takes what the terminal has left, cut
            // there, so the line never wraps.
            "{bar:20} {pos}/{len} [{elapsed_precise} eta {eta}] {wide_msg}",
        )
        .expect("static template"),
    );
    let mut progress = Bar {
        bar: bar.clone(),
        every: prepared.stored().search.is_some(),
    };
    let done = prepared.measure(&mut store, &req.run, &mut progress, &stop);
    bar.finish_and_clear();
    let done = done.map_err(cli_error)?;
    eprint!(
        "{}",
        netsonde_report::prose_fitted(&done.summary, runs::terminal_width())
    );
    let mut summary = Summary::of(&runs::view(&store, done.run)?);
    if !req.no_report {
        let dir = req
            .out
            .clone()
            .unwrap_or_else(|| runs::default_report_dir(done.run));
        let path = runs::write_report(&store, done.run, &dir, runs::Format::Html)?;
        summary.report = Some(path.display().to_string());
    }
    summary.store = Some(req.run.db.to_string());
    end_with(&summary, req.ending)?;
    match (done.end, done.unfinished) {
        (SweepEnd::Interrupted, Some(why)) => anyhow::bail!("{why}"),
        (_, Some(why)) => eprintln!("netsonde: {why}"),
        (_, None) => {}
    }
    Ok((summary, done.end))
}

/// Writes a run's ending on standard output: its summary, its two lines, or
/// its JSON document (whose two lines go to standard error).
pub fn end_with(summary: &Summary, ending: Ending) -> anyhow::Result<()> {
    let out = match ending {
        Ending::Summary => netsonde_report::summary::text(summary, runs::terminal_width()),
        Ending::Quiet => summary.footer(),
        Ending::Json => {
            eprint!("{}", summary.footer());
            serde_json::to_string_pretty(summary)? + "\n"
        }
    };
    std::io::stdout()
        .write_all(out.as_bytes())
        .context("writing the summary")
}
