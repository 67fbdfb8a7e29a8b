//! Commands over the store: `runs list|show|export|delete`, `report` and `compare`,
//! and the one place that turns stored rows into a [`Study`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use netsonde_model::host::HostFacts;
use netsonde_model::sweep::PointSummary;
use netsonde_report::study::{PointView, RunMeta, Study};
use netsonde_store::{RunId, Store};
use netsonde_sweep::Plan;
use serde::{Deserialize, Serialize};

/// What `plan_json` holds: the plan and where it ran, so `--resume` can go on.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StoredPlan {
    /// The plan.
    pub plan: Plan,
    /// Server host (`None`: embedded).
    pub host: Option<String>,
    /// Server port.
    pub port: u16,
    /// `real` or `fake`.
    pub engine: String,
}

/// Opens the store at `--db` or the default location.
pub fn open_store(db: Option<&Path>) -> anyhow::Result<Store> {
    let path = db
        .map(Path::to_path_buf)
        .unwrap_or_else(Store::default_path);
    Store::open(&path).with_context(|| format!("opening the results store {}", path.display()))
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
pub fn study(store: &Store, id: RunId) -> anyhow::Result<Study> {
    let row = store.run(id)?;
    let plan: StoredPlan = serde_json::from_str(&row.plan_json).context("run's plan")?;
    let host = |j: &str| serde_json::from_str::<HostFacts>(j).ok();
    let points = store
        .points(id)?
        .into_iter()
        .map(|p| -> anyhow::Result<PointView> {
            Ok(PointView {
                idx: p.idx,
                axes: serde_json::from_str(&p.axes_json).context("point axes")?,
                spec: serde_json::from_str(&p.config_json).context("point config")?,
                status: p.status.to_string(),
                reason: p.reason,
                summary: p
                    .summary_json
                    .as_deref()
                    .map(serde_json::from_str::<PointSummary>)
                    .transpose()
                    .context("point summary")?,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(Study::build(
        RunMeta {
            id,
            label: row.label,
            created_at: row.created_at,
            tool_version: row.tool_version,
            command: row.command,
            status: row.status.to_string(),
            client_host: host(&row.client_host_json),
            server_host: row.server_host_json.as_deref().and_then(host),
            line_rate: plan.plan.line_rate.map(|r| r.bps()),
            repeat: plan.plan.repeat,
            link: row
                .link_json
                .as_deref()
                .and_then(|j| serde_json::from_str::<netsonde_model::link::LinkRecord>(j).ok())
                .map(|l| format!("{} via {} ({})", l.spec, l.mechanism, l.detail)),
        },
        points,
    ))
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
            r.tool_version,
            r.label
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

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One self-contained HTML file, plus the SVG plots beside it.
    Html,
    /// Markdown tables.
    Md,
}

/// Writes the report of a run into `dir`; returns the main file's path.
pub fn write_report(
    store: &Store,
    id: RunId,
    dir: &Path,
    format: Format,
) -> anyhow::Result<PathBuf> {
    let s = study(store, id)?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let write = |name: &str, body: &str| -> anyhow::Result<PathBuf> {
        let p = dir.join(name);
        std::fs::write(&p, body).with_context(|| format!("writing {}", p.display()))?;
        Ok(p)
    };
    let main = match format {
        Format::Html => {
            for p in &s.plots {
                write(&format!("{}.svg", p.id), &netsonde_report::plot::svg(p))?;
            }
            write("report.html", &netsonde_report::html::render(&s))?
        }
        Format::Md => write("report.md", &netsonde_report::markdown::render(&s))?,
    };
    Ok(main)
}

/// The default report folder of a run.
pub fn default_report_dir(id: RunId) -> PathBuf {
    PathBuf::from(format!("netsonde-report-{id}"))
}

/// `runs show`: the Markdown report on stdout.
pub fn show(store: &Store, id: RunId) -> anyhow::Result<String> {
    Ok(netsonde_report::markdown::render(&study(store, id)?))
}

/// `runs export --csv | --json`.
pub fn export(store: &Store, id: RunId, csv: bool) -> anyhow::Result<String> {
    let s = study(store, id)?;
    Ok(if csv {
        netsonde_report::csv::render(&s)
    } else {
        serde_json::to_string_pretty(&s)? + "\n"
    })
}

/// Metrics `compare` judges.
const COMPARED: [&str; 6] = [
    "goodput",
    "transactions_per_sec",
    "latency_p50",
    "latency_p99",
    "client_us_per_kib",
    "server_us_per_kib",
];

/// `compare A B`: per-point deltas; returns the text and whether B regressed.
pub fn compare(store: &Store, a: RunId, b: RunId, min_rel: f64) -> anyhow::Result<(String, bool)> {
    let (sa, sb) = (study(store, a)?, study(store, b)?);
    let index: BTreeMap<_, _> = sa.points.iter().map(|p| (p.axes.clone(), p)).collect();
    let mut o = format!(
        "{:<40} {:<22} {:>14} {:>14} {:>9}  {}\n",
        "configuration",
        "metric",
        format!("run {a}"),
        format!("run {b}"),
        "change",
        "verdict"
    );
    let mut regressed = false;
    let mut matched = 0;
    for pb in &sb.points {
        let Some(pa) = index.get(&pb.axes) else {
            continue;
        };
        let (Some(xa), Some(xb)) = (&pa.summary, &pb.summary) else {
            continue;
        };
        matched += 1;
        for m in COMPARED {
            let (Some(ea), Some(eb)) = (xa.estimates.get(m), xb.estimates.get(m)) else {
                continue;
            };
            let d = netsonde_analysis::compare(m, ea, eb, min_rel);
            let verdict = match d.verdict {
                netsonde_analysis::Verdict::Better => "better",
                netsonde_analysis::Verdict::Worse => {
                    regressed = true;
                    "REGRESSION"
                }
                netsonde_analysis::Verdict::Same => "same (within noise)",
            };
            o.push_str(&format!(
                "{:<40} {:<22} {:>14.4} {:>14.4} {:>+8.1}%  {verdict}\n",
                sb.label(pb),
                m,
                ea.median,
                eb.median,
                d.rel_change * 100.0
            ));
        }
    }
    if matched == 0 {
        bail!("runs {a} and {b} have no completed point with the same configuration");
    }
    Ok((o, regressed))
}
