//! Commands over the store: `runs list|show|export|delete`, `report` and `compare`.
//! Stored rows become a [`Study`] in `netsonde_run::study`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use netsonde_model::host::HostFacts;
use netsonde_model::sweep::Metric;
use netsonde_report::study::Study;
use netsonde_store::{RunId, Store};

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
    Ok(netsonde_run::study(store, id)?)
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
    write_figures(dir, &s.plots)?;
    let main = match format {
        Format::Html => write("report.html", &netsonde_report::html::render(&s))?,
        Format::Md => write("report.md", &netsonde_report::markdown::with_figures(&s))?,
    };
    Ok(main)
}

/// Writes each figure as a standalone `ID.svg` and `ID.png` into `dir`. Without a
/// font for the PNGs' text, says so once and writes the SVGs only; returns whether
/// the PNGs were written.
pub fn write_figures(
    dir: &Path,
    plots: &[netsonde_report::study::PlotSpec],
) -> anyhow::Result<bool> {
    let raster = match netsonde_report::raster::Rasterizer::with_system_fonts() {
        Ok(r) => Some(r),
        Err(e) if !plots.is_empty() => {
            eprintln!("report: figures as SVG only: {e}");
            None
        }
        Err(_) => None,
    };
    for p in plots {
        let svg = netsonde_report::plot::svg(p);
        let path = dir.join(format!("{}.svg", p.id));
        std::fs::write(&path, &svg).with_context(|| format!("writing {}", path.display()))?;
        if let Some(r) = &raster {
            let png = r.png(&svg, 1.5)?;
            let path = dir.join(format!("{}.png", p.id));
            std::fs::write(&path, png).with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(raster.is_some())
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
const COMPARED: [Metric; 6] = [
    Metric::Goodput,
    Metric::TransactionsPerSec,
    Metric::LatencyP50,
    Metric::LatencyP99,
    Metric::ClientUsPerKib,
    Metric::ServerUsPerKib,
];

/// The host facts that change figures, as `name: a vs b` for each that differs.
fn host_differences(a: Option<&HostFacts>, b: Option<&HostFacts>) -> Vec<String> {
    let (Some(a), Some(b)) = (a, b) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut diff = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name} {x} vs {y}"));
        }
    };
    diff("kernel", a.kernel.clone(), b.kernel.clone());
    diff("CPU", a.cpu_model.clone(), b.cpu_model.clone());
    diff("cores", a.cores.to_string(), b.cores.to_string());
    diff(
        "MTU",
        a.interface
            .as_ref()
            .map_or("?".into(), |i| i.mtu.to_string()),
        b.interface
            .as_ref()
            .map_or("?".into(), |i| i.mtu.to_string()),
    );
    for (k, va) in &a.sysctls {
        let vb = b.sysctls.get(k).cloned().unwrap_or_else(|| "unset".into());
        diff(k, va.clone(), vb);
    }
    out
}

/// The fields of two point specs that differ, as `field: a vs b`.
fn spec_differences(a: &str, b: &str) -> Vec<String> {
    let (Ok(serde_json::Value::Object(a)), Ok(serde_json::Value::Object(b))) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) else {
        return if a == b {
            Vec::new()
        } else {
            vec!["the spec".into()]
        };
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let show =
                |v: Option<&serde_json::Value>| v.map_or("unset".to_string(), |v| v.to_string());
            format!("{k} {} vs {}", show(a.get(k)), show(b.get(k)))
        })
        .collect()
}

/// `compare A B` of two loss-free rate searches: per frame size and strategy, NDR
/// and PDR, each point's repeated searches (`search --repeat`) set against the
/// other run's as repetitions (`netsonde_analysis::search_delta`), judged together
/// as `compare` judges a sweep's metrics. Returns the text and whether B regressed.
fn compare_searches(
    store: &Store,
    (a, ca): (RunId, netsonde_model::search::SearchConfig),
    (b, cb): (RunId, netsonde_model::search::SearchConfig),
    floor: Option<f64>,
) -> anyhow::Result<(String, bool)> {
    use netsonde_model::search::{frame_of, Goal};
    use netsonde_model::units::PacketRate;
    let mut o = differing_hosts(store, a, b)?;
    let (sa, sb) = (study(store, a)?, study(store, b)?);
    let pdr_too = ca.loss_ratio == cb.loss_ratio;
    if !pdr_too {
        o.push_str(&format!(
            "note: PDR not compared: run {a} allows {:.2}% loss and run {b} {:.2}%\n",
            100.0 * ca.loss_ratio,
            100.0 * cb.loss_ratio
        ));
    }
    type Row = (String, [Vec<f64>; 2], netsonde_analysis::SearchDelta);
    let mut rows: Vec<Row> = Vec::new();
    let mut unjudged: Vec<String> = Vec::new();
    let (mut not_comparable, mut unmatched, mut min_n) = (0, 0, usize::MAX);
    for q in &sb.points {
        let Some(qo) = &q.search else { continue };
        let Some(p) = sa.points.iter().find(|p| p.axes == q.axes) else {
            unmatched += 1;
            continue;
        };
        let Some(po) = &p.search else { continue };
        let frame = frame_of(&q.spec);
        let key = format!("{frame} B {}", q.spec.rx_io);
        let json = |s| serde_json::to_string(s).unwrap_or_default();
        let differs = spec_differences(&json(&p.spec), &json(&q.spec));
        if !differs.is_empty() {
            not_comparable += 1;
            unjudged.push(format!(
                "{key}: not compared (the options differ: {})",
                differs.join("; ")
            ));
            continue;
        }
        // Nothing lost in any search of either: the bounds are what the senders
        // reached unpaced, not a loss-free rate.
        if po.searches().chain(qo.searches()).all(|s| s.sender_bound) {
            unjudged.push(format!(
                "{key}: not judged: nothing was lost in any search, so the rates are the \
                 senders' unpaced ones ({} against {})",
                PacketRate(po.ndr.lower.unwrap_or(0.0)),
                PacketRate(qo.ndr.lower.unwrap_or(0.0))
            ));
            continue;
        }
        for goal in [Goal::Ndr, Goal::Pdr] {
            if goal == Goal::Pdr && !pdr_too {
                continue;
            }
            let (xa, xb) = (po.lower_bounds(goal), qo.lower_bounds(goal));
            if let Some(d) = netsonde_analysis::search_delta(goal, &xa, &xb) {
                min_n = min_n.min(xa.len()).min(xb.len());
                rows.push((key.clone(), [xa, xb], d));
            }
        }
    }
    if rows.is_empty() {
        let why = if not_comparable > 0 {
            format!(" ({not_comparable} differ in their options)")
        } else if !unjudged.is_empty() {
            format!(" ({} lost nothing in any search)", unjudged.len())
        } else {
            String::new()
        };
        bail!(
            "searches {a} and {b} have no frame size and strategy with a loss-free rate found \
             in both with the same options{why}"
        );
    }
    let mut ds: Vec<netsonde_analysis::SearchDelta> =
        rows.iter().map(|(_, _, d)| d.clone()).collect();
    netsonde_analysis::judge_searches(&mut ds, netsonde_analysis::FAMILY_ALPHA, floor);
    o.push_str(&format!(
        "{} comparisons of loss-free rates: each point's repeated searches (search --repeat) \
         are its repetitions; a change is significant when the exact one-sided Mann-Whitney \
         test passes Holm's procedure at a 5% family level and exceeds {:.1}%\n",
        ds.len(),
        100.0 * ds.first().map_or(0.0, |d| d.min_change)
    ));
    let need = netsonde_analysis::reps_for(ds.len(), netsonde_analysis::FAMILY_ALPHA);
    if min_n < need {
        o.push_str(&format!(
            "note: with {min_n} search(es) a point, the smallest p-value is {:.3}; {} comparisons \
             need {need} searches a point in each run for any change to be significant \
             (search --repeat {need}); one search's rate moves between runs (on loopback by 10% \
             and more)\n",
            netsonde_analysis::smallest_p(min_n, min_n),
            ds.len()
        ));
    }
    let shown = |e: &netsonde_model::sweep::Estimate, xs: &[f64]| {
        let r = |v: f64| PacketRate(v).to_string();
        let (lo, hi) = xs
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &v| (l.min(v), h.max(v)));
        if e.n > 1 {
            format!("{} [{} – {}, {}]", r(e.median), r(lo), r(hi), e.n)
        } else {
            format!("{} (1 search)", r(e.median))
        }
    };
    o.push_str(&format!(
        "\n  {:<16} {:<4} {:>40} {:>40} {:>8} {:>8}  verdict\n",
        "point",
        "",
        format!("run {a}: median [range, searches]"),
        format!("run {b}: median [range, searches]"),
        "change",
        "p"
    ));
    let mut regressed = false;
    for ((key, [xa, xb], _), d) in rows.iter().zip(&ds) {
        let (verdict, p) = match d.verdict {
            netsonde_analysis::Verdict::Better => ("better", d.p_better),
            netsonde_analysis::Verdict::Worse => {
                regressed = true;
                ("REGRESSION", d.p_worse)
            }
            netsonde_analysis::Verdict::Same | netsonde_analysis::Verdict::NotJudged => {
                ("same", d.p_worse.min(d.p_better))
            }
        };
        o.push_str(&format!(
            "  {:<16} {:<4} {:>40} {:>40} {:>+7.1}% {:>8}  {verdict}\n",
            key,
            if d.goal == Goal::Ndr { "NDR" } else { "PDR" },
            shown(&d.a, xa),
            shown(&d.b, xb),
            100.0 * d.rel_change,
            if p < 0.001 {
                format!("{p:.1e}")
            } else {
                format!("{p:.3}")
            }
        ));
    }
    for u in &unjudged {
        o.push_str(&format!("{u}\n"));
    }
    if unmatched > 0 {
        o.push_str(&format!(
            "{unmatched} point(s) of run {b} have no counterpart in run {a}\n"
        ));
    }
    Ok((o, regressed))
}

/// Warnings that the two runs' hosts or links differ, one line each.
fn differing_hosts(store: &Store, a: RunId, b: RunId) -> anyhow::Result<String> {
    let (ra, rb) = (store.run(a)?, store.run(b)?);
    let host = |j: Option<&str>| j.and_then(|j| serde_json::from_str::<HostFacts>(j).ok());
    let mut o = String::new();
    for (side, x, y) in [
        (
            "client",
            host(Some(&ra.client_host_json)),
            host(Some(&rb.client_host_json)),
        ),
        (
            "server",
            host(ra.server_host_json.as_deref()),
            host(rb.server_host_json.as_deref()),
        ),
    ] {
        let d = host_differences(x.as_ref(), y.as_ref());
        if !d.is_empty() {
            o.push_str(&format!(
                "warning: the {side} hosts differ ({}): a change may come from that alone\n",
                d.join("; ")
            ));
        }
    }
    if ra.link_json != rb.link_json {
        o.push_str("warning: the runs were measured over different links\n");
    }
    Ok(o)
}

/// `compare A B`: per-point deltas; returns the text and whether B regressed.
///
/// Points are matched by their axes. A matched pair whose full specs differ (an
/// `--io`, a duration, any option) is not judged and says which fields differ;
/// host facts that differ are named at the top. Each metric is tested with the
/// exact one-sided Mann–Whitney test on the repetitions, the whole comparison with
/// Holm's procedure at a 5% family level, and a change must also exceed its
/// metric's practical change, raised to `floor` if given. A percentile on too few
/// transactions is shown, not judged (`netsonde_analysis::compare`).
pub fn compare(
    store: &Store,
    a: RunId,
    b: RunId,
    floor: Option<f64>,
) -> anyhow::Result<(String, bool)> {
    let (sa, _) = netsonde_run::load(store, a)?;
    let (sb, _) = netsonde_run::load(store, b)?;
    match (sa.search, sb.search) {
        (None, None) => {}
        (Some(ca), Some(cb)) => return compare_searches(store, (a, ca), (b, cb), floor),
        (x, _) => bail!(
            "run {} is a loss-free rate search and run {} a sweep: compare a search with a search",
            if x.is_some() { a } else { b },
            if x.is_some() { b } else { a }
        ),
    }
    let mut o = differing_hosts(store, a, b)?;
    let (pa, pb) = (store.points(a)?, store.points(b)?);
    let reps = |p: &netsonde_store::PointRow| -> Vec<netsonde_model::sweep::Metrics> {
        p.reps.iter().map(|r| r.metrics.clone()).collect()
    };
    let index: BTreeMap<&str, &netsonde_store::PointRow> =
        pa.iter().map(|p| (p.axes_json.as_str(), p)).collect();
    let label = |p: &netsonde_store::PointRow| -> String {
        serde_json::from_str::<BTreeMap<String, String>>(&p.axes_json)
            .map(|axes| {
                axes.iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|_| p.axes_json.clone())
    };
    let mut deltas: Vec<(String, netsonde_analysis::Delta)> = Vec::new();
    let mut not_comparable = Vec::new();
    let mut unmatched = 0;
    let mut min_n = usize::MAX;
    for q in &pb {
        let Some(p) = index.get(q.axes_json.as_str()) else {
            unmatched += 1;
            continue;
        };
        let differs = spec_differences(&p.config_json, &q.config_json);
        if !differs.is_empty() {
            not_comparable.push(format!("{}: {}", label(q), differs.join("; ")));
            continue;
        }
        let (ra, rb) = (reps(p), reps(q));
        for m in COMPARED {
            if let Some(d) = netsonde_analysis::delta(m, &ra, &rb) {
                if d.not_judged.is_none() {
                    min_n = min_n.min(d.a.n).min(d.b.n);
                }
                deltas.push((label(q), d));
            }
        }
    }
    if deltas.is_empty() {
        bail!(
            "runs {a} and {b} have no point with the same configuration and measured repetitions \
             to compare{}",
            if not_comparable.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} matched by axes differ in their options)",
                    not_comparable.len()
                )
            }
        );
    }
    let mut ds: Vec<netsonde_analysis::Delta> = deltas.iter().map(|(_, d)| d.clone()).collect();
    netsonde_analysis::judge(&mut ds, netsonde_analysis::FAMILY_ALPHA, floor);
    let family = netsonde_analysis::family_size(&ds);
    o.push_str(&format!(
        "{family} comparisons over {} point(s); a change is significant when the exact one-sided \
         Mann-Whitney test passes Holm's procedure at a 5% family level and exceeds its metric's \
         practical change (column min){}\n",
        deltas
            .iter()
            .map(|(l, _)| l.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        match ds.len() - family {
            0 => String::new(),
            n => format!("; {n} percentile(s) on too few transactions are shown, not judged"),
        }
    ));
    let need = netsonde_analysis::reps_for(family, netsonde_analysis::FAMILY_ALPHA);
    if min_n < need {
        o.push_str(&format!(
            "note: with {min_n} repetition(s) a side, the smallest p-value is {:.3}; {family} \
             comparisons need {need} per run for any change to be significant (--repeat {need})\n",
            netsonde_analysis::smallest_p(min_n, min_n),
        ));
    }
    o.push_str(&format!(
        "\n  {:<20} {:>34} {:>34} {:>8} {:>4} {:>8}  {}\n",
        "metric",
        format!("run {a}: median [interval]"),
        format!("run {b}: median [interval]"),
        "change",
        "min",
        "p",
        "verdict"
    ));
    let mut regressed = false;
    let mut last = "";
    for ((label, _), d) in deltas.iter().zip(&ds) {
        if label != last {
            o.push_str(&format!("{label}\n"));
            last = label;
        }
        let shown = |e: &netsonde_model::sweep::Estimate| {
            let f = |v| d.metric.format(v);
            match (e.ci_low, e.ci_high) {
                (Some(l), Some(h)) => format!("{} [{}, {}]", f(e.median), f(l), f(h)),
                _ => format!("{} (n = {})", f(e.median), e.n),
            }
        };
        let (verdict, p) = match d.verdict {
            netsonde_analysis::Verdict::Better => ("better", d.p_better),
            netsonde_analysis::Verdict::Worse => {
                regressed = true;
                ("REGRESSION", d.p_worse)
            }
            netsonde_analysis::Verdict::Same => ("same", d.p_worse.min(d.p_better)),
            netsonde_analysis::Verdict::NotJudged => ("not judged", d.p_worse.min(d.p_better)),
        };
        let p = if p < 0.001 {
            format!("{p:.1e}")
        } else {
            format!("{p:.3}")
        };
        o.push_str(&format!(
            "  {:<20} {:>34} {:>34} {:>+7.1}% {:>3.0}% {:>8}  {verdict}\n",
            d.metric.name(),
            shown(&d.a),
            shown(&d.b),
            d.rel_change * 100.0,
            d.min_change * 100.0,
            p
        ));
        if let Some(why) = &d.not_judged {
            o.push_str(&format!("    not judged: {why}; {}\n", why.hint()));
        }
    }
    for n in &not_comparable {
        o.push_str(&format!("not compared (the options differ): {n}\n"));
    }
    if unmatched > 0 {
        o.push_str(&format!(
            "{unmatched} point(s) of run {b} have no counterpart in run {a}\n"
        ));
    }
    Ok((o, regressed))
}
