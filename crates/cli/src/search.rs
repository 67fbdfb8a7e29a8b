//! `netsonde search`: a run whose points (frame size x strategy) are each
//! searched for their loss-free rate ([`netsonde_sweep::search`]) through the
//! sweep's pipeline, so every trial is stored and a search resumes; then prints
//! what it found from the store.

use std::io::Write;

use anyhow::Context;
use netsonde_model::spec::TestKind;
use netsonde_model::units::Bytes;
use netsonde_sweep::search::SearchConfig;
use netsonde_sweep::search_plan::SearchPlan;
use netsonde_sweep::Plan;

use netsonde_args::{SearchArgs, SearchTest, UsageError};

/// The plan of a search from its flags.
fn plan(a: &SearchArgs) -> anyhow::Result<Plan> {
    let window = match a.window.trim() {
        "default" => None,
        w => Some(
            w.parse::<Bytes>()
                .map_err(|e| UsageError(format!("--window: {e}")))?,
        ),
    };
    let asked = SearchPlan {
        tcp: a.test == SearchTest::Tcp,
        frames: a.frames.clone(),
        io: a.io.clone(),
        tx_io: a.tx_io,
        trial: a.trial,
        warmup: a.warmup,
        window,
        back_to_back: a.back_to_back,
    };
    Ok(asked.plan().map_err(UsageError)?)
}

pub(crate) fn run(a: SearchArgs) -> anyhow::Result<bool> {
    if a.common.peer != netsonde_args::PeerArg::Netsonde {
        return Err(UsageError(
            "search needs a netsonde server: it counts the datagrams sent in each trial's \
             measured time and the hosts' drop counters, which iperf3 does not report"
                .into(),
        )
        .into());
    }
    let plan = match a.resume {
        Some(_) => None,
        None => Some(plan(&a)?),
    };
    let cfg = SearchConfig {
        loss_ratio: a.pdr_loss,
        precision: a.precision.max(1e-4),
        final_trials: a.final_trials,
        max_trials: a.max_trials.max(1),
        back_to_back: a.back_to_back,
        latency: a.latency,
        searches: a.repeat,
        ..SearchConfig::default()
    };
    let db = a.common.store.db.clone();
    let json = a.json;
    let mut req = crate::sweep_request(
        plan,
        crate::default_host(a.host),
        a.port,
        a.label,
        a.resume,
        a.common,
    )?;
    req.stdout_is_data = json;
    req.run.search = Some(cfg);
    let (run, end) = crate::sweep::sweep(req)?;
    let store = crate::runs::open_store(db.as_ref())?;
    let (stored, _) = netsonde_run::load(&store, run)?;
    let Some(cfg) = stored.search else {
        return Err(UsageError(format!(
            "run {run} is a sweep, not a search: resume it with `netsonde sweep --resume {run}`"
        ))
        .into());
    };
    let study = crate::runs::view(&store, run)?;
    let link_bps = store
        .run(run)?
        .link_json
        .and_then(|j| serde_json::from_str::<netsonde_model::link::LinkRecord>(&j).ok())
        .and_then(|l| l.rate_bps());
    let rows = netsonde_report::search::rows(&study, link_bps);
    let trial = stored.plan.base.duration;
    let warmup = stored.plan.base.warmup;
    let mut out = std::io::stdout().lock();
    let converged =
        end == netsonde_run::sweep::SweepEnd::Complete && rows.iter().all(|r| r.outcome.converged);
    if json {
        let doc = netsonde_report::search::json(run, &cfg, trial, warmup, &rows);
        writeln!(out, "{doc}").context("writing the result")?;
        return Ok(converged);
    }
    let tcp = stored.plan.base.test == TestKind::TcpStream;
    let text = netsonde_report::search::text(&cfg, trial, warmup, tcp, link_bps, &rows);
    out.write_all(text.as_bytes())
        .context("writing the result")?;
    Ok(converged)
}
