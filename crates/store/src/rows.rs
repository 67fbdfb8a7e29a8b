//! What goes into the store and what comes back out: plain rows, with JSON columns
//! kept as text so the store stays independent of the documents' shapes.

use std::fmt;

use netsonde_model::sweep::Metrics;

use crate::StoreError;

/// A run's id: the `runs.id` primary key. Ids are never reused, even after a run is
/// deleted.
pub type RunId = i64;

/// A run about to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun {
    /// A name the user gave the run (may be empty).
    pub label: String,
    /// netsonde version of the client.
    pub tool_version: String,
    /// The command line that started the run.
    pub command: String,
    /// The sweep plan as JSON.
    pub plan_json: String,
    /// The client's `HostFacts` as JSON.
    pub client_host_json: String,
    /// Unix time in seconds.
    pub created_at: i64,
}

/// One point of a run's plan, stored as pending when the run is created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedPoint {
    /// The point's index in the plan (its identity within the run).
    pub idx: u32,
    /// Its position in execution order (plans may shuffle points).
    pub run_order: u32,
    /// The full `TestSpec` of the point as JSON.
    pub config_json: String,
    /// The sweep axes' values at this point as a JSON object, `{axis: value}`.
    pub axes_json: String,
}

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// Started and not finished (or the process died: see [`RunStatus::Interrupted`]).
    Running,
    /// Every point that could run has all its repetitions (the rest were skipped
    /// at planning).
    Complete,
    /// Stopped early (Ctrl-C); can be resumed.
    Interrupted,
    /// Ended with points still pending because measurements failed (their
    /// failures are in the `failures` table); `--resume` finishes them.
    Incomplete,
    /// Aborted by an error.
    Failed,
}

impl RunStatus {
    /// The name stored in `runs.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Incomplete => "incomplete",
            RunStatus::Failed => "failed",
        }
    }

    /// The status a stored name stands for.
    pub fn parse(s: &str) -> Result<RunStatus, StoreError> {
        Ok(match s {
            "running" => RunStatus::Running,
            "complete" => RunStatus::Complete,
            "interrupted" => RunStatus::Interrupted,
            "incomplete" => RunStatus::Incomplete,
            "failed" => RunStatus::Failed,
            _ => {
                return Err(StoreError::UnknownStatus {
                    kind: "run",
                    value: s.to_string(),
                })
            }
        })
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a point stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointStatus {
    /// Not run yet.
    Pending,
    /// Every repetition recorded.
    Done,
    /// Deliberately not run (the reason says why).
    Skipped,
    /// Attempted and failed (the reason says why). Written only by netsonde
    /// before schema version 3; a failure now leaves the point pending.
    Failed,
}

impl PointStatus {
    /// The name stored in `points.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Pending => "pending",
            PointStatus::Done => "done",
            PointStatus::Skipped => "skipped",
            PointStatus::Failed => "failed",
        }
    }

    /// The status a stored name stands for.
    pub fn parse(s: &str) -> Result<PointStatus, StoreError> {
        Ok(match s {
            "pending" => PointStatus::Pending,
            "done" => PointStatus::Done,
            "skipped" => PointStatus::Skipped,
            "failed" => PointStatus::Failed,
            _ => {
                return Err(StoreError::UnknownStatus {
                    kind: "point",
                    value: s.to_string(),
                })
            }
        })
    }
}

impl fmt::Display for PointStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of failure ended an attempt at a repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailureKind {
    /// The server was running another test (after the retries the policy allows).
    Busy,
    /// The server refused this point's configuration (a limit, a bad spec).
    Refused,
    /// Anything else: unreachable, a connection that broke, a flow that failed.
    Failed,
}

impl FailureKind {
    /// The name stored in `failures.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Busy => "busy",
            FailureKind::Refused => "refused",
            FailureKind::Failed => "failed",
        }
    }

    /// The kind a stored name stands for.
    pub fn parse(s: &str) -> Result<FailureKind, StoreError> {
        Ok(match s {
            "busy" => FailureKind::Busy,
            "refused" => FailureKind::Refused,
            "failed" => FailureKind::Failed,
            _ => {
                return Err(StoreError::UnknownStatus {
                    kind: "failure",
                    value: s.to_string(),
                })
            }
        })
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One failed attempt at a repetition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureRow {
    /// The point.
    pub idx: u32,
    /// The repetition that was being measured.
    pub rep: u32,
    /// Unix seconds.
    pub at: i64,
    /// What kind of failure.
    pub kind: FailureKind,
    /// Why, in one line.
    pub reason: String,
}

/// A stored run with its progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// Its id.
    pub id: RunId,
    /// Unix seconds.
    pub created_at: i64,
    /// netsonde version of the client.
    pub tool_version: String,
    /// The user's label.
    pub label: String,
    /// The command line.
    pub command: String,
    /// The sweep plan as JSON.
    pub plan_json: String,
    /// The client's host facts as JSON.
    pub client_host_json: String,
    /// The server's host facts as JSON, once known.
    pub server_host_json: Option<String>,
    /// Where it stands.
    pub status: RunStatus,
    /// Unix seconds, once finished.
    pub finished_at: Option<i64>,
    /// The emulated link (spec and mechanism) as JSON, for lab runs.
    pub link_json: Option<String>,
    /// Points planned.
    pub points_total: u32,
    /// Points with status done (skipped and failed ones are not counted).
    pub points_done: u32,
}

/// One recorded repetition of a point.
#[derive(Debug, Clone, PartialEq)]
pub struct RepRow {
    /// Repetition number, from 0.
    pub rep: u32,
    /// The full `TestReport` as JSON (`docs/JSON.md`).
    pub report_json: String,
    /// The repetition's figures.
    pub metrics: Metrics,
}

/// A planned point with whatever was recorded for it.
#[derive(Debug, Clone, PartialEq)]
pub struct PointRow {
    /// Index in the plan.
    pub idx: u32,
    /// Position in execution order.
    pub run_order: u32,
    /// The full `TestSpec` as JSON.
    pub config_json: String,
    /// `{axis: value}` as JSON.
    pub axes_json: String,
    /// Where it stands.
    pub status: PointStatus,
    /// Why it was skipped or failed; for a pending point, its last failure.
    pub reason: Option<String>,
    /// Estimates over the repetitions as JSON, once done.
    pub summary_json: Option<String>,
    /// Recorded repetitions, by number.
    pub reps: Vec<RepRow>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_names() {
        for s in [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Incomplete,
            RunStatus::Failed,
        ] {
            assert_eq!(RunStatus::parse(s.as_str()).unwrap(), s);
            assert_eq!(s.to_string(), s.as_str());
        }
        for s in [
            PointStatus::Pending,
            PointStatus::Done,
            PointStatus::Skipped,
            PointStatus::Failed,
        ] {
            assert_eq!(PointStatus::parse(s.as_str()).unwrap(), s);
        }
    }

    #[test]
    fn unknown_status_names_are_errors() {
        assert!(matches!(
            RunStatus::parse("Complete"),
            Err(StoreError::UnknownStatus { kind: "run", .. })
        ));
        assert!(matches!(
            PointStatus::parse(""),
            Err(StoreError::UnknownStatus { kind: "point", .. })
        ));
    }
}
