//! Why a sweep (or search, or mesh) could not be run or finished.

use netsonde_store::{Location, RunId, Store, StoreError};
use netsonde_sweep::exec::ExecError;

use crate::PipelineError;

/// Why a sweep could not start or go on. [`SweepError::Usage`] is what was
/// asked (the binary exits 2 on it); the rest are failures (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// What was asked cannot run as asked, or not here.
    #[error("{0}")]
    Usage(String),
    /// Creating, reopening or finishing the stored run failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The embedded server could not start.
    #[error(transparent)]
    Server(#[from] netsonde_driver::server::ServerError),
    /// The run's stored link does not parse.
    #[error("the run's stored link")]
    StoredLink(#[source] serde_json::Error),
    /// The store stopped answering in the middle of the run.
    #[error(
        "run {run} stopped; what {at} holds of it is kept; once the store answers, finish it \
         with: netsonde {again} --resume {run}"
    )]
    Stopped {
        /// The run.
        run: RunId,
        /// Its store.
        at: Location,
        /// The command that resumes it.
        again: &'static str,
        /// What stopped it.
        #[source]
        source: ExecError,
    },
}

/// A store that could not be opened, and which.
#[derive(Debug, thiserror::Error)]
#[error("opening the results store {at}")]
pub struct OpenError {
    /// The store.
    pub at: Location,
    /// Why.
    #[source]
    pub source: StoreError,
}

/// Opens the store at `at`, saying which on failure.
pub fn open_store(at: &Location) -> Result<Store, OpenError> {
    Store::open_at(at).map_err(|source| OpenError {
        at: at.clone(),
        source,
    })
}

/// Opens the store at `at` to read only ([`Store::open_read_only`]), or says
/// where it failed.
pub fn open_store_read_only(at: &Location) -> Result<Store, OpenError> {
    Store::open_read_only(at).map_err(|source| OpenError {
        at: at.clone(),
        source,
    })
}
