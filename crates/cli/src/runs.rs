//! Commands over the store: `runs list|show|export|delete`, `report` and `compare`.
//! Stored rows become a [`RunView`] in `netsonde_run::view`.

use std::path::{Path, PathBuf};

use anyhow::Context;
use netsonde_model::result::TestReport;
use netsonde_report::view::RunView;
use netsonde_store::{Location, RunId, Store};

/// Opens the store at `--db` or the default location.
pub fn open_store(db: Option<&Location>) -> anyhow::Result<Store> {
    let at = db.cloned().unwrap_or_else(Location::default_file);
    Ok(netsonde_run::open_store(&at)?)
}

/// Opens the store at `--db` or the default location to read only: `runs
/// list|show|export`, `report` and `compare` write nothing, so a store on a
/// read-only mount serves them.
pub fn open_store_read_only(db: Option<&Location>) -> anyhow::Result<Store> {
    let at = db.cloned().unwrap_or_else(Location::default_file);
    Ok(netsonde_run::open_store_read_only(&at)?)
}

/// Resolves `latest` or a number.
pub fn run_id(store: &Store, arg: Option<&str>) -> anyhow::Result<RunId> {
    match arg {
        None | Some("latest") => store.latest_run()?.context("the store holds no runs yet"),
        Some(s) => {
            let id: RunId = s
                .parse()
                .with_context(|| format!("'{s}' is not a run number"))?;
            store.run(id)?;
            Ok(id)
        }
    }
}

/// Builds the analysed view of a stored run.
pub fn view(store: &Store, id: RunId) -> anyhow::Result<RunView> {
    Ok(netsonde_run::view(store, id)?)
}

/// `runs list`.
pub fn list(store: &Store) -> anyhow::Result<String> {
    let mut o = format!(
        "{:>5}  {:<19}  {:<11}  {:>9}  {:<10}  {}\n",
        "run", "created (UTC)", "status", "points", "version", "label"
    );
    for r in store.runs()? {
        o.push_str(&format!(
            "{:>5}  {:<19}  {:<11}  {:>4}/{:<4}  {:<10}  {}\n",
            r.id,
            utc(r.created_at),
            r.status.to_string(),
            r.points_done,
            r.points_total,
            netsonde_report::printable(&r.tool_version),
            netsonde_report::printable(&r.label)
        ));
    }
    Ok(o)
}

/// Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC).
pub fn utc(secs: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
    time::OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| secs.to_string())
}

pub use netsonde_args::Format;

/// Writes the report of a run into `dir`; returns the main file's path.
pub fn write_report(
    store: &Store,
    id: RunId,
    dir: &Path,
    format: Format,
) -> anyhow::Result<PathBuf> {
    let s = view(store, id)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, body: &str| -> anyhow::Result<PathBuf> {
        let p = dir.join(name);
        std::fs::write(&p, body).with_context(|| format!("writing {}", p.display()))?;
        Ok(p)
    };
    let figures = netsonde_run::output::write_figures(dir, &s.plots)?;
    if let Some(why) = figures.svg_only {
        eprintln!("report: figures as SVG only: {why}");
    }
    let main = match format {
        Format::Html => {
            // A page per point over time, where the sweep sampled them.
            let sampled = s.points.iter().any(|p| p.spec.samples);
            let points = if sampled {
                store.points(id)?
            } else {
                Vec::new()
            };
            for p in points {
                let Some(rep) = p.reps.first() else { continue };
                let Ok(r) = serde_json::from_str::<TestReport>(&rep.report_json) else {
                    continue;
                };
                if r.spec.samples {
                    let text = netsonde_report::text::render(&r);
                    write(
                        &netsonde_report::html::point_page(p.idx),
                        &netsonde_report::timeseries::html(&r, &text),
                    )?;
                }
            }
            write("report.html", &netsonde_report::html::render(&s))?
        }
        Format::Md => write("report.md", &netsonde_report::markdown::with_figures(&s))?,
    };
    Ok(main)
}

/// The default report folder of a run.
pub fn default_report_dir(id: RunId) -> PathBuf {
    PathBuf::from(format!("netsonde-report-{id}"))
}

/// `runs show`: the summary a run ended with (fitted to the terminal, or as
/// JSON), or with `full` every table of its report as Markdown.
pub fn show(
    store: &Store,
    id: RunId,
    full: bool,
    json: bool,
    db: Option<&Location>,
) -> anyhow::Result<String> {
    let mut view = view(store, id)?;
    // Written by whoever wrote the store: shown, never obeyed, by the terminal.
    view.run.label = netsonde_report::printable(&view.run.label).into_owned();
    view.run.command = netsonde_report::printable(&view.run.command).into_owned();
    if full {
        return Ok(netsonde_report::markdown::render(&view));
    }
    let mut summary = netsonde_report::summary::Summary::of(&view);
    summary.store = Some(
        db.cloned()
            .unwrap_or_else(Location::default_file)
            .to_string(),
    );
    Ok(if json {
        serde_json::to_string_pretty(&summary)? + "\n"
    } else {
        netsonde_report::summary::text(&summary, terminal_width())
    })
}

/// `runs export --csv | --json`.
pub fn export(store: &Store, id: RunId, csv: bool) -> anyhow::Result<String> {
    let s = view(store, id)?;
    Ok(if csv {
        netsonde_report::csv::render(&s)
    } else {
        serde_json::to_string_pretty(&s)? + "\n"
    })
}

/// `compare A B`: the typed comparison (`netsonde_run::compare`) written out
/// (`netsonde_report::compare`); returns the text and whether B regressed.
pub fn compare(
    store: &Store,
    a: RunId,
    b: RunId,
    floor: Option<f64>,
) -> anyhow::Result<(String, bool)> {
    let c = netsonde_run::compare::compare(store, a, b, floor)?;
    Ok((netsonde_report::compare::text(&c), c.regressed()))
}

/// The terminal's width when standard output is one, else
/// [`netsonde_report::summary::WIDTH`].
pub fn terminal_width() -> usize {
    let out = std::io::stdout();
    rustix::termios::tcgetwinsize(&out)
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&c| c > 0)
        .unwrap_or(netsonde_report::summary::WIDTH)
}
