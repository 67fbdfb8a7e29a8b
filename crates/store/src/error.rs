//! The store's one error type.

use std::path::PathBuf;

use crate::{PointStatus, RunId};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file could not be opened or configured (not a SQLite file,
    /// unreadable, locked past the busy timeout).
    #[error("cannot open results store {}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// The database file exists but this process may not write it (a
    /// read-only mount, its mode): the command writes the store.
    #[error(
        "results store {} cannot be written ({source}): this command writes the store; \
         `runs list|show|export`, `report`, `compare` and `dashboard` only read it",
        path.display()
    )]
    NotWritable {
        /// The database file.
        path: PathBuf,
        /// Why it cannot be written.
        #[source]
        source: std::io::Error,
    },
    /// The directory meant to hold the database could not be created.
    #[error("cannot create directory {} for the results store", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A statement failed.
    #[error("results store query failed")]
    Sql(#[from] rusqlite::Error),
    /// The PostgreSQL database could not be reached or refused the connection.
    #[error("cannot connect to the results store {target}")]
    Connect {
        /// The database, its URL without the password.
        target: String,
        /// What the driver said.
        #[source]
        source: postgres::Error,
    },
    /// The PostgreSQL database did not answer in time.
    #[error("the results store {target}: {what}")]
    Timeout {
        /// The database, its URL without the password.
        target: String,
        /// What did not finish, and within how long.
        what: String,
    },
    /// The TLS to the PostgreSQL database could not be set up as its URL asks
    /// (an option or a certificate file at fault).
    #[error("TLS to the results store {target}: {reason}")]
    Tls {
        /// The database, its URL without the password.
        target: String,
        /// Which option or file, and what is wrong with it.
        reason: String,
    },
    /// A PostgreSQL statement failed.
    #[error("results store query failed (PostgreSQL)")]
    Postgres(#[from] postgres::Error),
    /// A column held a value of another type than the schema's.
    #[error("results store column: {0}")]
    Column(String),
    /// No run has this id.
    #[error("no run {0} in the results store")]
    NoSuchRun(RunId),
    /// The run has no point with this index.
    #[error("run {run} has no point {idx}")]
    NoSuchPoint {
        /// The run.
        run: RunId,
        /// The point's index.
        idx: u32,
    },
    /// The point has no repetition with this number.
    #[error("run {run} point {idx} has no repetition {rep}")]
    NoSuchRep {
        /// The run.
        run: RunId,
        /// The point's index.
        idx: u32,
        /// The repetition.
        rep: u32,
    },
    /// The database was written by a newer netsonde whose schema this one does not
    /// know; it is left untouched.
    #[error(
        "results store has schema version {found}, this netsonde supports up to {supported}: \
         upgrade netsonde"
    )]
    NewerSchema {
        /// `PRAGMA user_version` of the file.
        found: i64,
        /// [`crate::Store::SCHEMA_VERSION`].
        supported: u32,
    },
    /// A store opened to read only was written by an older netsonde: reading it
    /// needs its schema migrated, which only a command that writes does.
    #[error(
        "results store has schema version {found}, this netsonde reads version {supported}: \
         open it once with a command that writes (netsonde runs delete, a sweep) where it is \
         writable, to migrate it"
    )]
    OlderSchema {
        /// The schema version found.
        found: i64,
        /// [`crate::Store::SCHEMA_VERSION`].
        supported: u32,
    },
    /// A JSON column could not be written or read back; the message says which.
    #[error("bad JSON in the results store: {0}")]
    Json(String),
    /// A count does not fit SQLite's signed 64-bit integers.
    #[error("{what} = {value} is too large to store")]
    TooLarge {
        /// Which value.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// A status column held a name this version does not know.
    #[error("unknown {kind} status {value:?}")]
    UnknownStatus {
        /// `run` or `point`.
        kind: &'static str,
        /// The text found.
        value: String,
    },
    /// [`crate::Store::skip_point`] was asked to skip a point that holds measured
    /// repetitions; a measurement is never deleted by a status change.
    #[error("run {run} point {idx} holds {reps} measured repetition(s): it cannot be skipped")]
    HasReps {
        /// The run.
        run: RunId,
        /// The point's index.
        idx: u32,
        /// How many repetitions it holds.
        reps: u32,
    },
    /// Another process is executing this run.
    #[error(
        "run {run} is being executed by another netsonde process ({lock}): wait for it to end"
    )]
    RunLocked {
        /// The run.
        run: RunId,
        /// The lock held: a file's path, or PostgreSQL's advisory lock.
        lock: String,
    },
    /// The run's lock file could not be made or locked.
    #[error("cannot lock run {run} ({})", path.display())]
    Lock {
        /// The run.
        run: RunId,
        /// The lock file.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// [`crate::Store::skip_point`] was given a status other than skipped or failed.
    #[error("a point can be marked skipped or failed, not {0}")]
    NotASkipStatus(PointStatus),
}
