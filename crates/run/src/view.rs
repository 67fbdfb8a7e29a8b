//! Stored rows into the analysed view of a run: the one place a [`RunView`] is built
//! from the store. A done point's statistics are computed again from its stored
//! repetitions, and each repetition's report is diagnosed again, so a report always
//! shows this version's analysis, runs stored by older versions included.

use netsonde_model::host::HostFacts;
use netsonde_model::sweep::PointSummary;
use netsonde_report::view::{PointView, RunMeta, RunView, SearchMeta, SideBreakdown};
use netsonde_store::{RunId, Store};

use netsonde_sweep::search;

use crate::{PipelineError, StoredPlan};

/// Builds the analysed view of a stored run.
pub fn view(store: &Store, id: RunId) -> Result<RunView, PipelineError> {
    let row = store.run(id)?;
    let plan = StoredPlan::parse(&row.plan_json)?;
    let link = row
        .link_json
        .as_deref()
        .and_then(|j| serde_json::from_str::<netsonde_model::link::LinkRecord>(j).ok());
    let line_rate = plan.plan.line_rate.map(|r| r.bps());
    let host = |j: &str| serde_json::from_str::<HostFacts>(j).ok();
    let points = store
        .points(id)?
        .into_iter()
        .map(|p| -> Result<PointView, PipelineError> {
            let reports = reports_of(&p);
            Ok(PointView {
                idx: p.idx,
                axes: serde_json::from_str(&p.axes_json).map_err(PipelineError::Plan)?,
                spec: serde_json::from_str(&p.config_json).map_err(PipelineError::Plan)?,
                status: p.status.to_string(),
                reason: p.reason.clone(),
                // A done point's statistics are computed again from its stored
                // repetitions, so a report always shows this version's intervals
                // (runs stored by older versions included).
                diagnosis: point_diagnosis(&reports, line_rate),
                breakdown: {
                    let r: Vec<_> = reports.iter().collect();
                    ["client", "server"]
                        .iter()
                        .filter_map(|side| SideBreakdown::of(side, &r))
                        .collect()
                },
                // A search's trials, searched again from the stored ones: what
                // this version's search makes of them.
                search: match plan.search {
                    Some(cfg) if !p.reps.is_empty() => {
                        Some(search::replay(cfg, &crate::stored_trials(&p)?))
                    }
                    _ => None,
                },
                summary: match p.summary_json.as_deref() {
                    // A search's trials are not repetitions of one measurement.
                    _ if plan.search.is_some() => None,
                    None => None,
                    Some(_) if !p.reps.is_empty() => {
                        let spec: netsonde_model::spec::TestSpec =
                            serde_json::from_str(&p.config_json).map_err(PipelineError::Plan)?;
                        let reps: Vec<_> = p.reps.iter().map(|r| r.metrics.clone()).collect();
                        Some(netsonde_sweep::exec::summarize(&spec, &reps))
                    }
                    Some(j) => {
                        Some(serde_json::from_str::<PointSummary>(j).map_err(PipelineError::Plan)?)
                    }
                },
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // A run of one test (a client's, a server's iperf3 session) was asked for
    // one repetition: advice to repeat it is not for it.
    let points = if plan.plan.repeat <= 1 {
        points
            .into_iter()
            .map(|mut p| {
                if let Some(s) = p.summary.as_mut() {
                    s.quality.retain(|q| {
                        !matches!(q, netsonde_model::sweep::Quality::TooFewRepetitions { .. })
                    });
                }
                p
            })
            .collect()
    } else {
        points
    };
    Ok(RunView::build(
        RunMeta {
            id,
            label: row.label,
            created_at: row.created_at,
            tool_version: row.tool_version,
            command: row.command,
            status: row.status.to_string(),
            client_host: host(&row.client_host_json),
            server_host: row.server_host_json.as_deref().and_then(host),
            // In the lab the link's own rate is the line rate unless one was given.
            line_rate: plan.plan.line_rate.map(|r| r.bps()).or_else(|| {
                link.as_ref()
                    .and_then(|l| l.rate_bps_over(plan.plan.base.mptcp))
            }),
            repeat: plan.plan.repeat,
            link_rtt_ns: link
                .as_ref()
                .map(|l| (l.spec.up.delay.0 + l.spec.down.delay.0) as f64)
                .filter(|&t| t > 0.0),
            link: link
                .as_ref()
                .map(|l| format!("{} via {} ({})", l.spec, l.mechanism, l.detail)),
            mesh_agents: plan.plan.mesh.as_ref().map_or_else(Vec::new, |m| {
                m.agents
                    .iter()
                    .map(|a| a.name.clone())
                    .filter(|n| m.pairs.iter().any(|(s, d)| s == n || d == n))
                    .collect()
            }),
            search: plan.search.map(|config| SearchMeta {
                config,
                trial: plan.plan.base.duration,
                warmup: plan.plan.base.warmup,
                tcp: plan.plan.base.test == netsonde_model::spec::TestKind::TcpStream,
                link_bps: link.as_ref().and_then(|l| l.rate_bps()),
            }),
        },
        points,
    ))
}

/// A point's diagnosis: each stored repetition's report diagnosed on its own, and
/// the verdict most of them got (the first repetition with it speaks for them).
/// A point's repetitions' reports, those that parse.
fn reports_of(p: &netsonde_store::PointRow) -> Vec<netsonde_model::result::TestReport> {
    p.reps
        .iter()
        .filter_map(|r| serde_json::from_str(&r.report_json).ok())
        .collect()
}

fn point_diagnosis(
    reports: &[netsonde_model::result::TestReport],
    line_rate: Option<f64>,
) -> Option<netsonde_analysis::Diagnosis> {
    let all: Vec<netsonde_analysis::Diagnosis> = reports
        .iter()
        .map(|r| netsonde_analysis::diagnose(&netsonde_analysis::input_from_report(r, line_rate)))
        .collect();
    let count = |d: &netsonde_analysis::Diagnosis| {
        all.iter()
            .filter(|x| x.bottleneck.name() == d.bottleneck.name())
            .count()
    };
    all.iter().max_by_key(|d| count(d)).cloned()
}
