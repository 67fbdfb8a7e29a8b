//! `netsonde search`: a run whose points (frame size x strategy) are each
//! searched for their loss-free rate ([`netsonde_sweep::search`]) through the
//! sweep's pipeline, so every trial is stored and a search resumes; it ends
//! with the sweep's summary, whose table for a search is what each point found.

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
    let mut req = crate::sweep_request(
        plan,
        crate::default_host(a.host),
        a.port,
        a.label,
        a.resume,
        a.common,
    )?;
    req.run.search = Some(cfg);
    let (summary, end) = crate::sweep::sweep(req)?;
    let Some(part) = &summary.search else {
        return Err(UsageError(format!(
            "run {} is a sweep, not a search: resume it with `netsonde sweep --resume {}`",
            summary.run, summary.run
        ))
        .into());
    };
    // Converged: every point's search found its rates.
    Ok(end == netsonde_run::sweep::SweepEnd::Complete
        && part.searches.iter().all(|r| r.outcome.converged))
}
