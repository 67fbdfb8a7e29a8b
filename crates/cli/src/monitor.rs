//! `netsonde monitor`: the mesh of the flags as `netsonde_run::monitor` runs
//! it round after round, its line per round on standard error, SIGINT and
//! SIGTERM heard, and `--metrics` serving every pair's state and baseline.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use netsonde_args::{MonitorArgs, UsageError};
use netsonde_run::monitor::{MonitorRequest, Watch};
use netsonde_sweep::cadence::Cadence;

use crate::runs;

/// Runs the monitor until its rounds are done or a signal stops it.
pub fn run(a: MonitorArgs) -> anyhow::Result<()> {
    let MonitorArgs {
        every,
        jitter,
        window,
        phase,
        skip_overrun,
        rounds,
        mesh,
    } = a;
    if mesh.sweep.resume.is_some() {
        return Err(UsageError(
            "a monitor goes on from its stored rounds by itself: start it again with the \
             same --label, without --resume"
                .into(),
        )
        .into());
    }
    if mesh.sweep.common.peer != netsonde_args::PeerArg::Netsonde {
        return Err(UsageError(
            "a monitor runs between netsonde agents: --peer does not apply".into(),
        )
        .into());
    }
    if every.0 == 0 {
        return Err(UsageError("--every must be above 0".into()).into());
    }
    if phase.is_some_and(|p| p.0 >= every.0) {
        return Err(UsageError("--phase must be shorter than --every".into()).into());
    }
    let port = mesh
        .sweep
        .port
        .unwrap_or(netsonde_driver::client::DEFAULT_PORT);
    let plan = crate::mesh::plan(&mesh, port)?;
    netsonde_run::monitor::check_interval(
        &plan,
        mesh.concurrency as usize,
        Duration::from_nanos(every.0),
        skip_overrun,
    )
    .map_err(crate::sweep::cli_error)?;
    let label = mesh.sweep.label.clone().unwrap_or_else(|| "monitor".into());
    let mut common = mesh.sweep.common;
    // Rounds write no report: the dashboard renders any run on demand.
    common.no_report = true;
    let mut sweep = crate::sweep_request(Some(plan), None, port, label, None, common)?.run;
    sweep.concurrency = mesh.concurrency as usize;
    let metrics = mesh.metrics;
    let watch = Arc::new(Watch::default());
    if let Some(addr) = metrics {
        let results = Arc::new(netsonde_run::agents::LastResults::default());
        let (shown, w) = (results.clone(), watch.clone());
        let render = Arc::new(move || {
            netsonde_report::openmetrics::render_monitor(&w.snapshot(), &shown.all())
        });
        let bound = netsonde_serve::serve_metrics(addr, render)?;
        eprintln!("netsonde monitor: metrics on http://{bound}/metrics");
        sweep.mesh_results = Some(results);
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    let mut store = runs::open_store(Some(&sweep.db))?;
    let req = MonitorRequest {
        cadence: Cadence {
            every: Duration::from_nanos(every.0),
            jitter: jitter.min(Cadence::MAX_JITTER),
        },
        window: window as usize,
        rounds,
        phase: phase.map(|p| Duration::from_nanos(p.0)),
        sweep,
    };
    let say = |line: &str| eprintln!("netsonde monitor '{}': {line}", req.sweep.label);
    let ran = netsonde_run::monitor::run(&mut store, &req, &watch, &stop, &say)
        .map_err(crate::sweep::cli_error)?;
    say(&format!(
        "stopped after {ran} round(s); every round is stored in {}",
        req.sweep.db
    ));
    Ok(())
}
