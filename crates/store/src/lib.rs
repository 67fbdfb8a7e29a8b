//! netsonde's results store: one SQLite file (or one PostgreSQL database that many
//! controllers share, [`Location::Postgres`]) holding every run, so reports can be
//! re-rendered, compared and resumed long after the measurement. It owns the schema,
//! its migrations ([`MIGRATIONS`], and [`PG_MIGRATIONS`] in PostgreSQL's types) and
//! typed access ([`Store`]); the JSON documents
//! it holds are opaque text here, shaped by `netsonde-model` and described in
//! `docs/JSON.md`. `docs/STORE.md` is the full reference.
//!
//! # Schema (version 3)
//!
//! - `runs`: one row per `netsonde` invocation that measures. `id`, `created_at` and
//!   `finished_at` (unix seconds), `tool_version`, `label`, `command` (the command
//!   line), `plan_json` (the sweep plan), `client_host_json` and `server_host_json`
//!   (`HostFacts`), `status` (`running`, `complete`, `interrupted`, `incomplete`,
//!   `failed`) and,
//!   since version 2, `link_json` (the emulated link of a lab run).
//! - `points`: the planned points of a run, keyed by `(run_id, idx)`, with
//!   `run_order` (execution order), `config_json` (the full `TestSpec`), `axes_json`
//!   (`{axis: value}`), `status` (`pending`, `done`, `skipped`, `failed`), `reason`
//!   and `summary_json` (estimates over the repetitions).
//! - `reps`: each repetition of a point, keyed by `(run_id, idx, rep)`:
//!   `report_json` (the full `TestReport`, host facts included) and `metrics_json`
//!   (`Metrics`, `{name: number}`).
//! - `samples`: the raw interval samples of a repetition, keyed by
//!   `(run_id, idx, rep, seq)`: `start_ns`, `end_ns`, `dir` (`up`/`down`), `bytes`,
//!   `rate_bps`, `messages`, `transactions`.
//! - `failures` (version 3): every failed attempt at a repetition: `idx`, `rep`,
//!   `at`, `kind` (`busy`, `refused`, `failed`) and `reason`. A failure never deletes
//!   a stored repetition; the point stays pending.
//!
//! Foreign keys cascade: deleting a run deletes its points, repetitions and
//! samples.
//!
//! # Versions and durability
//!
//! The schema version is `PRAGMA user_version`. Migrations are numbered and
//! forward-only; each runs in its own transaction (see [`schema`]). A file from a
//! newer netsonde is refused with [`StoreError::NewerSchema`] and left untouched.
//! Connections use the write-ahead log, `synchronous=FULL` and a 5 s busy timeout.
//! [`Store::record_point`] writes a whole point in one transaction, so a crash
//! loses at most the point in flight, and a resumed run finds it still pending.
//! [`Store::lock_run`] holds a run for the process executing it, so two resumes of
//! one run cannot both measure.
#![forbid(unsafe_code)]

mod db;
mod error;
mod import;
mod location;
mod pg;
mod pg_tls;
mod rows;
pub mod schema;
pub mod secrets;
mod store;
mod value;

pub use error::StoreError;
pub use location::{Location, PgUrl};
pub use pg::PG_MIGRATIONS;
pub use rows::{
    FailureKind, FailureRow, NewRun, PlannedPoint, PointRow, PointStatus, RepRow, RunId, RunRow,
    RunStatus,
};
pub use schema::MIGRATIONS;
pub use store::RunLock;
pub use store::{RepInput, Store};
