//! A mesh's runner: each point (a test of the plan for one ordered pair) goes
//! to its source agent as a job against its destination; a round's jobs go at
//! once, to start together. Each pair's last result is kept for `--metrics`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use netsonde_driver::agent;
use netsonde_driver::client::ClientError;
use netsonde_lab::cluster::{is_cluster_addr, ClusterSpec, ENV_CLUSTER};
use netsonde_model::health::PairResult;
use netsonde_model::result::{SyncedStart, TestReport};
use netsonde_model::spec::TestSpec;
use netsonde_proto::auth::Key;
use netsonde_proto::message::{Job, JobReport};
use netsonde_store::RunId;
use netsonde_sweep::exec::{RetryPolicy, RunError, Runner};
use netsonde_sweep::mesh::{Agent, Mesh};
use netsonde_sweep::rounds::BatchRunner;
use netsonde_sweep::Point;

use crate::error::SweepError;

/// Sends each point to its source agent as a job.
pub struct AgentRunner {
    mesh: Mesh,
    /// Inside `netsonde lab mesh`: the cluster, whose links each pair's report
    /// records (agents h1...hN).
    cluster: Option<ClusterSpec>,
    key: Key,
    /// The pair of the point being run and its test as a monitor names it
    /// (set by `prepare`).
    pair: Option<(Agent, Agent)>,
    test: String,
    /// Agents marked down this run, and why: their later pairs fail at once
    /// (skipped, not counted towards giving up) instead of waiting for the same
    /// timeout again, and the pairs of healthy agents are all measured.
    silent: BTreeMap<String, String>,
    /// Jobs in a row whose target did not answer a source on its control
    /// channel (the source answered, the job says `unreachable`), by target:
    /// [`TARGET_STRIKES`] mark it down. A test that ran and failed (cut short
    /// by a busy host, a flow that broke) is no strike.
    strikes: BTreeMap<String, (u32, String)>,
    /// `mesh --metrics`: each pair's last result, served while the mesh runs.
    results: Option<Arc<LastResults>>,
}

impl std::fmt::Debug for AgentRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRunner")
            .field("agents", &self.mesh.agents.len())
            .field("pair", &self.pair)
            .field("silent", &self.silent)
            .finish_non_exhaustive()
    }
}

impl AgentRunner {
    /// A runner that sends jobs to `mesh`'s agents with `key`, keeping each
    /// pair's last result in `results` when given.
    pub fn new(mesh: Mesh, key: Key, results: Option<Arc<LastResults>>) -> AgentRunner {
        AgentRunner {
            mesh,
            cluster: std::env::var(ENV_CLUSTER)
                .ok()
                .and_then(|j| serde_json::from_str(&j).ok()),
            key,
            pair: None,
            test: String::new(),
            silent: BTreeMap::new(),
            strikes: BTreeMap::new(),
            results,
        }
    }
}

/// A job's source agent and what it answered.
type Answer = (Agent, Result<JobReport, ClientError>);

/// How far ahead a round's start is set: time for every agent to get its job.
const ROUND_LEAD_MS: u64 = 1000;

impl AgentRunner {
    /// The pair of `point`, or why it has none.
    fn pair_of(&self, point: &Point) -> Result<(Agent, Agent), RunError> {
        let agent = |axis: &str| {
            let name = point.axes.get(axis).ok_or_else(|| {
                RunError::refused(format!("point {} has no {axis} axis", point.idx))
            })?;
            self.mesh.agent(name).cloned().ok_or_else(|| {
                RunError::refused(format!("point {}: no agent named '{name}'", point.idx))
            })
        };
        Ok((agent("src")?, agent("dst")?))
    }

    /// A pair with an agent marked down is skipped at once, with why.
    fn check_answering(&self, src: &Agent, dst: &Agent) -> Result<(), RunError> {
        for a in [src, dst] {
            if let Some(why) = self.silent.get(&a.name) {
                return Err(RunError::skipped(format!(
                    "agent {} is marked down in this run: {why}",
                    a.name
                )));
            }
        }
        Ok(())
    }

    /// What a job's answer makes of the measurement, judged per agent: a
    /// source that did not answer as an agent does (no connection, no hello,
    /// silence past a deadline, bytes that are not the protocol, a report no
    /// link could produce) is marked down at once; a target that did not
    /// answer sources on its control channel [`TARGET_STRIKES`] times in a
    /// row, with no success between, is marked down too. A success clears
    /// both agents' strikes; a test that ran and failed touches neither.
    fn outcome(
        &mut self,
        src: &Agent,
        dst: &Agent,
        r: Result<JobReport, ClientError>,
    ) -> Result<JobReport, RunError> {
        let e = match r {
            Ok(done) => {
                self.strikes.remove(&src.name);
                self.strikes.remove(&dst.name);
                return Ok(done);
            }
            Err(e) => e,
        };
        if source_at_fault(&e) {
            let why = format!("agent {}: {e}", src.name);
            self.silent.insert(src.name.clone(), e.to_string());
            return Err(RunError::failed(why));
        }
        let unreachable = matches!(
            &e,
            ClientError::Session {
                source: netsonde_proto::ProtoError::Remote {
                    code: netsonde_proto::message::ErrorCode::Unreachable,
                    ..
                },
                ..
            }
        );
        let run_error = crate::client_error::run_error(e);
        if let (true, RunError::Failed(cause)) = (unreachable, &run_error) {
            let strikes = self
                .strikes
                .entry(dst.name.clone())
                .or_insert((0, String::new()));
            strikes.0 += 1;
            strikes.1 = format!("{} could not reach it: {cause}", src.name);
            if strikes.0 >= TARGET_STRIKES {
                let why = format!(
                    "{} jobs in a row could not reach it, the last: {}",
                    strikes.0, strikes.1
                );
                self.silent.insert(dst.name.clone(), why);
            }
        }
        Err(run_error)
    }
}

/// Jobs in a row that could not test a target, from any source, before it is
/// marked down.
pub const TARGET_STRIKES: u32 = 2;

/// Whether a job's error is its source agent's own: it did not answer as an
/// agent does. An error the agent reported (the job ran and failed) is not.
fn source_at_fault(e: &ClientError) -> bool {
    match e {
        ClientError::Connect { .. }
        | ClientError::Silent { .. }
        | ClientError::Iperf3Server { .. }
        | ClientError::Unbelievable { .. } => true,
        ClientError::Session { source, .. } => {
            !matches!(source, netsonde_proto::ProtoError::Remote { .. })
        }
        _ => false,
    }
}

impl AgentRunner {
    /// A report from `src` to `dst` finished as a single test is, with the
    /// cluster lab's link between them when there is one; kept as the pair's
    /// last result for `--metrics`, its test named as the monitor names it.
    fn finish(&self, mut report: TestReport, src: &Agent, dst: &Agent, test: &str) -> TestReport {
        let host = |a: &Agent| {
            a.name
                .strip_prefix('h')
                .and_then(|n| n.parse::<usize>().ok())
        };
        if let (Some(c), Some(a), Some(b)) = (&self.cluster, host(src), host(dst)) {
            // As the link was when this pair ran (a lab pair may be slowed later).
            report.link = c.link_at(a, b, unix_now());
        }
        netsonde_analysis::finish(&mut report, None);
        if let Some(results) = &self.results {
            let now = unix_now();
            let mut r =
                netsonde_report::openmetrics::pair_result(&src.name, &dst.name, &report, now);
            r.test = test.to_string();
            results.record(r);
        }
        report
    }
}

/// A run measured in a cluster lab (its agents at 10.78.0.x) resumes only inside
/// one, and one measured elsewhere not inside one: outside, those addresses are
/// whatever this host's routes reach.
pub fn check_resume_place(run: RunId, mesh: &Mesh) -> Result<(), SweepError> {
    let in_lab = std::env::var_os(ENV_CLUSTER).is_some();
    let lab_run = mesh.agents.iter().any(|a| is_cluster_addr(&a.host));
    match (lab_run, in_lab) {
        (true, false) => Err(SweepError::Usage(format!(
            "run {run} was measured in a cluster lab: resume it inside one, `netsonde lab mesh \
             --hosts {} <the same flags> -- mesh --resume {run}`",
            mesh.agents.len()
        ))),
        (false, true) => Err(SweepError::Usage(format!(
            "run {run} was not measured in a cluster lab: resume it outside the lab"
        ))),
        _ => Ok(()),
    }
}

/// Two points may run at once when their pairs share no agent.
pub fn apart(a: &Point, b: &Point) -> bool {
    let hosts = |p: &Point| [p.axes.get("src").cloned(), p.axes.get("dst").cloned()];
    let (x, y) = (hosts(a), hosts(b));
    !x.iter()
        .flatten()
        .any(|h| y.iter().flatten().any(|o| o == h))
}

impl BatchRunner for AgentRunner {
    /// Sends every job of the round at once, each to start at one moment a
    /// second ahead; records when each started and the round's skew.
    fn run_batch(&mut self, batch: &[(&Point, &TestSpec)]) -> Vec<Result<TestReport, RunError>> {
        let at = agent::unix_ms() + ROUND_LEAD_MS;
        let pairs: Vec<Result<(Agent, Agent), RunError>> =
            batch.iter().map(|(p, _)| self.pair_of(p)).collect();
        let jobs: Vec<Result<(Agent, Job), RunError>> = batch
            .iter()
            .zip(&pairs)
            .map(|((_, spec), pair)| {
                let (src, dst) = pair.clone()?;
                self.check_answering(&src, &dst)?;
                let job = Job {
                    target_host: dst.host.clone(),
                    target_port: dst.port,
                    spec: (*spec).clone(),
                    start_at_unix_ms: Some(at),
                };
                Ok((src, job))
            })
            .collect();
        let answers: Vec<Result<Answer, RunError>> = std::thread::scope(|scope| {
            let running: Vec<_> = jobs
                .into_iter()
                .map(|j| {
                    j.map(|(src, job)| {
                        let key = &self.key;
                        scope.spawn(move || {
                            let r = agent::request(
                                &src.host,
                                src.port,
                                Some(key),
                                job,
                                Default::default(),
                            );
                            (src, r)
                        })
                    })
                })
                .collect();
            running
                .into_iter()
                .map(|h| {
                    h.and_then(|h| {
                        h.join()
                            .map_err(|_| RunError::failed("the job's thread panicked"))
                    })
                })
                .collect()
        });
        let done: Vec<Result<JobReport, RunError>> = answers
            .into_iter()
            .zip(&pairs)
            .map(|(a, pair)| {
                a.and_then(|(src, r)| match pair {
                    Ok((_, dst)) => self.outcome(&src, dst, r),
                    Err(e) => Err(e.clone()),
                })
            })
            .collect();
        let starts: Vec<u64> = done
            .iter()
            .filter_map(|d| d.as_ref().ok().map(|j| j.started_unix_ms))
            .collect();
        let skew = match (starts.iter().min(), starts.iter().max()) {
            (Some(lo), Some(hi)) => hi - lo,
            _ => 0,
        };
        done.into_iter()
            .zip(&pairs)
            .zip(batch)
            .map(|((d, pair), (point, _))| {
                let d = d?;
                let mut report = d.report;
                if let Ok((src, dst)) = pair {
                    let test = netsonde_report::view::pair_test_label(&point.axes);
                    report = self.finish(report, src, dst, &test);
                }
                report.synced = Some(SyncedStart {
                    start_at_unix_ms: at,
                    started_unix_ms: d.started_unix_ms,
                    round_skew_ms: skew,
                    round_size: batch.len() as u32,
                });
                Ok(report)
            })
            .collect()
    }
}

impl Runner for AgentRunner {
    fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
        self.pair = Some(self.pair_of(point)?);
        self.test = netsonde_report::view::pair_test_label(&point.axes);
        Ok(())
    }

    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        let (src, dst) = self
            .pair
            .clone()
            .ok_or_else(|| RunError::refused("a mesh point runs only after its pair is set"))?;
        self.check_answering(&src, &dst)?;
        let job = Job {
            target_host: dst.host.clone(),
            target_port: dst.port,
            spec: spec.clone(),
            start_at_unix_ms: None,
        };
        let r = agent::request(
            &src.host,
            src.port,
            Some(&self.key),
            job,
            Default::default(),
        );
        let report = self.outcome(&src, &dst, r)?.report;
        Ok(self.finish(report, &src, &dst, &self.test))
    }
}

/// A mesh goes on past failed pairs: an agent that is down fails its own pairs
/// (each stored with why, pending for `--resume`), not the whole run.
pub fn retry_policy(mesh: &Mesh) -> RetryPolicy {
    RetryPolicy {
        max_consecutive_failures: (mesh.pairs.len() as u32).max(3),
        ..RetryPolicy::default()
    }
}

/// The last result of each (source, destination, test).
#[derive(Debug, Default)]
pub struct LastResults(Mutex<BTreeMap<(String, String, String), PairResult>>);

impl LastResults {
    /// Keeps `r`, replacing the pair's and test's previous one.
    pub fn record(&self, r: PairResult) {
        let key = (r.src.clone(), r.dst.clone(), r.test.clone());
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, r);
    }

    /// Every result kept.
    pub fn all(&self) -> Vec<PairResult> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }
}

/// Unix seconds now.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// What an agent serving `--metrics` does with each job's report: finishes it
/// (verdict, warnings) and keeps it as the last result of the pair from `me`.
pub fn keep_job_results(results: Arc<LastResults>, me: String) -> agent::OnReport {
    Arc::new(move |report: &TestReport, target: &str| {
        let mut r = report.clone();
        netsonde_analysis::finish(&mut r, None);
        // HOST:PORT, so agents sharing an address stay apart.
        let now = unix_now();
        results.record(netsonde_report::openmetrics::pair_result(
            &me, target, &r, now,
        ));
    })
}
