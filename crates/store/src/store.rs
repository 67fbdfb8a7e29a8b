//! [`Store`]: typed reads and writes over one connection, to a SQLite file or a
//! PostgreSQL database; the SQL is written once, in SQLite's spelling.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use netsonde_model::result::IntervalRecord;
use netsonde_model::spec::FlowDir;
use netsonde_model::sweep::Metrics;
use netsonde_model::units::{BitRate, Bytes, Nanos};

use crate::db::{Conn, Tx};
use crate::location::Location;
use crate::value::{values, Row, Value};
use crate::{pg, schema};
use crate::{
    FailureKind, FailureRow, NewRun, PlannedPoint, PointRow, PointStatus, RepRow, RunId, RunRow,
    RunStatus, StoreError,
};

/// A results database at the current schema version: a SQLite file (the
/// default), or a PostgreSQL database that many controllers share.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: RefCell<Conn>,
    /// Where it is; `None` in memory.
    location: Option<Location>,
}

/// Holds a run for the process executing it, released when dropped or when the
/// process dies however it dies. In a SQLite store it is an exclusive `flock` on
/// the run's lock file, `<db>.locks/run-<id>` (the kernel drops it with the last
/// descriptor; the files are left in place: removing one while another process
/// waits on it would let two holders lock two different files of the same
/// name). In PostgreSQL it is a session advisory lock on a connection of its
/// own, which the server drops when the connection closes.
#[derive(Debug)]
pub struct RunLock {
    _held: Held,
}

enum Held {
    Nothing,
    File(std::fs::File),
    /// Held for its session: closing it releases the lock.
    Postgres {
        _session: Box<postgres::Client>,
    },
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Held::Nothing => f.write_str("Nothing"),
            Held::File(file) => f.debug_tuple("File").field(file).finish(),
            Held::Postgres { .. } => f.write_str("Postgres"),
        }
    }
}

/// One repetition as [`Store::record_point`] takes it: the report as JSON, its
/// figures, and its interval samples.
pub type RepInput = (String, Metrics, Vec<IntervalRecord>);

const RUN_COLUMNS: &str = "r.id, r.created_at, r.tool_version, r.label, r.command, r.plan_json, \
     r.client_host_json, r.server_host_json, r.status, r.finished_at, r.link_json, \
     (SELECT count(*) FROM points p WHERE p.run_id = r.id), \
     (SELECT count(*) FROM points p WHERE p.run_id = r.id AND p.status = 'done')";

impl Store {
    /// The schema version this build reads and writes.
    pub const SCHEMA_VERSION: u32 = 3;

    /// Where results go unless told otherwise: `netsonde/netsonde.db` under the
    /// user's data directory (`$XDG_DATA_HOME`, else `~/.local/share`, on Linux), or
    /// `./netsonde.db` when there is none.
    pub fn default_path() -> PathBuf {
        match dirs::data_dir() {
            Some(d) => d.join("netsonde").join("netsonde.db"),
            None => PathBuf::from("netsonde.db"),
        }
    }

    /// Opens (creating it and its parent directories if needed) the SQLite
    /// database at `path` and migrates it to [`Store::SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let mut conn = rusqlite::Connection::open(path).map_err(|e| open_failed(path, e))?;
        schema::configure(&mut conn).map_err(|e| open_failed(path, e))?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            conn: RefCell::new(Conn::Sqlite(conn)),
            location: Some(Location::File(path.to_path_buf())),
        })
    }

    /// Opens the store at `location`: a SQLite file as [`Store::open`] does, or a
    /// PostgreSQL database, connected to and migrated to
    /// [`Store::SCHEMA_VERSION`] (the tables are made in the connection's
    /// `search_path`).
    pub fn open_at(location: &Location) -> Result<Store, StoreError> {
        match location {
            Location::File(path) => Store::open(path),
            Location::Postgres(url) => {
                let mut client = pg::connect(url)?;
                pg::migrate(&mut client)?;
                Ok(Store {
                    conn: RefCell::new(Conn::Postgres(Box::new(client))),
                    location: Some(location.clone()),
                })
            }
        }
    }

    /// Takes the run for this process, or says which process has it
    /// ([`StoreError::RunLocked`]). An in-memory store has no other process to
    /// exclude.
    pub fn lock_run(&self, run: RunId) -> Result<RunLock, StoreError> {
        self.conn.borrow_mut().read(|tx| require_run(tx, run))?;
        let held = match &self.location {
            None => Held::Nothing,
            Some(Location::File(db)) => Held::File(lock_file(db, run)?),
            Some(Location::Postgres(url)) => Held::Postgres {
                _session: Box::new(pg::lock_run(url, run)?),
            },
        };
        Ok(RunLock { _held: held })
    }

    /// A private, empty database that vanishes when dropped.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::from_connection(rusqlite::Connection::open_in_memory()?)
    }

    /// Configures and migrates an already open connection (for tests that load a
    /// fixture into a connection first).
    #[doc(hidden)]
    pub fn from_connection(mut conn: rusqlite::Connection) -> Result<Store, StoreError> {
        schema::configure(&mut conn)?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            conn: RefCell::new(Conn::Sqlite(conn)),
            location: None,
        })
    }

    /// The database's schema version (`PRAGMA user_version` in SQLite, the
    /// `netsonde_schema` table in PostgreSQL).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let v = match &mut *self.conn.borrow_mut() {
            Conn::Sqlite(c) => schema::user_version(c)?,
            Conn::Postgres(c) => pg::schema_version(c)?,
        };
        u32::try_from(v).map_err(|_| StoreError::NewerSchema {
            found: v,
            supported: Store::SCHEMA_VERSION,
        })
    }

    /// Stores a new run, status running, with every point of its plan pending, in
    /// one transaction.
    pub fn create_run(
        &mut self,
        run: &NewRun,
        points: &[PlannedPoint],
    ) -> Result<RunId, StoreError> {
        check_json("plan_json", &run.plan_json)?;
        check_json("client_host_json", &run.client_host_json)?;
        for p in points {
            check_json("config_json", &p.config_json)?;
            check_json("axes_json", &p.axes_json)?;
        }
        self.conn.get_mut().write(|tx| {
            let id = tx
                .query_one(
                    "INSERT INTO runs (created_at, tool_version, label, command, plan_json, \
                     client_host_json, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING id",
                    &values![
                        run.created_at,
                        run.tool_version.as_str(),
                        run.label.as_str(),
                        run.command.as_str(),
                        run.plan_json.as_str(),
                        run.client_host_json.as_str(),
                        RunStatus::Running.as_str(),
                    ],
                )?
                .int(0)?;
            tx.execute_each(
                "INSERT INTO points (run_id, idx, run_order, config_json, axes_json, status) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                points.iter().map(|p| {
                    Ok(values![
                        id,
                        p.idx,
                        p.run_order,
                        p.config_json.as_str(),
                        p.axes_json.as_str(),
                        PointStatus::Pending.as_str(),
                    ]
                    .to_vec())
                }),
            )?;
            Ok(id)
        })
    }

    /// Stores the server's host facts (JSON) once it has answered.
    pub fn set_server_host(&mut self, run: RunId, json: &str) -> Result<(), StoreError> {
        check_json("server_host_json", json)?;
        self.update_run(
            run,
            "UPDATE runs SET server_host_json = ?2 WHERE id = ?1",
            &values![run, json],
        )
    }

    /// Stores the emulated link (spec and mechanism, JSON) a lab run uses.
    pub fn set_link(&mut self, run: RunId, json: &str) -> Result<(), StoreError> {
        check_json("link_json", json)?;
        self.update_run(
            run,
            "UPDATE runs SET link_json = ?2 WHERE id = ?1",
            &values![run, json],
        )
    }

    /// Runs an `UPDATE` of one run's row; no row is [`StoreError::NoSuchRun`].
    fn update_run(&mut self, run: RunId, sql: &str, params: &[Value]) -> Result<(), StoreError> {
        match self.conn.get_mut().write(|tx| tx.execute(sql, params))? {
            0 => Err(StoreError::NoSuchRun(run)),
            _ => Ok(()),
        }
    }

    /// Records one completed point: all its repetitions (report, metrics, interval
    /// samples) and its summary, status done, in one transaction, so a crash loses
    /// at most the point in flight. Anything recorded for the point before is
    /// replaced.
    pub fn record_point(
        &mut self,
        run: RunId,
        idx: u32,
        reps: &[RepInput],
        summary_json: &str,
    ) -> Result<(), StoreError> {
        check_json("summary_json", summary_json)?;
        self.conn.get_mut().write(|tx| {
            require_point(tx, run, idx)?;
            tx.execute(
                "DELETE FROM reps WHERE run_id = ?1 AND idx = ?2",
                &values![run, idx],
            )?;
            for (rep, input) in (0u32..).zip(reps) {
                insert_rep(tx, run, idx, rep, input)?;
            }
            mark_done(tx, run, idx, summary_json)
        })
    }

    /// Records one repetition of a point that stays pending, in its own
    /// transaction: with interleaved rounds a point's repetitions end at different
    /// times, and a crash loses only the repetition in flight. A repetition recorded
    /// before under the same number is replaced.
    pub fn record_rep(
        &mut self,
        run: RunId,
        idx: u32,
        rep: u32,
        input: &RepInput,
    ) -> Result<(), StoreError> {
        self.conn.get_mut().write(|tx| {
            require_point(tx, run, idx)?;
            tx.execute(
                "DELETE FROM reps WHERE run_id = ?1 AND idx = ?2 AND rep = ?3",
                &values![run, idx, rep],
            )?;
            insert_rep(tx, run, idx, rep, input)
        })
    }

    /// Marks a point whose repetitions are all recorded as done, with its summary.
    pub fn complete_point(
        &mut self,
        run: RunId,
        idx: u32,
        summary_json: &str,
    ) -> Result<(), StoreError> {
        check_json("summary_json", summary_json)?;
        self.conn.get_mut().write(|tx| {
            require_point(tx, run, idx)?;
            mark_done(tx, run, idx, summary_json)
        })
    }

    /// Marks a point that holds no measurement skipped or failed, with the reason.
    /// Any other status is refused with [`StoreError::NotASkipStatus`], and a point
    /// with repetitions with [`StoreError::HasReps`]: a status change never deletes
    /// a measurement.
    pub fn skip_point(
        &mut self,
        run: RunId,
        idx: u32,
        status: PointStatus,
        reason: &str,
    ) -> Result<(), StoreError> {
        if !matches!(status, PointStatus::Skipped | PointStatus::Failed) {
            return Err(StoreError::NotASkipStatus(status));
        }
        self.conn.get_mut().write(|tx| {
            require_point(tx, run, idx)?;
            let reps: u32 = tx
                .query_one(
                    "SELECT count(*) FROM reps WHERE run_id = ?1 AND idx = ?2",
                    &values![run, idx],
                )?
                .uint(0)?;
            if reps > 0 {
                return Err(StoreError::HasReps { run, idx, reps });
            }
            tx.execute(
                "UPDATE points SET status = ?3, reason = ?4, summary_json = NULL \
                 WHERE run_id = ?1 AND idx = ?2",
                &values![run, idx, status.as_str(), reason],
            )?;
            Ok(())
        })
    }

    /// Records a failed attempt at repetition `rep` of a pending point, in its own
    /// transaction, and makes its reason the point's. Nothing measured is touched:
    /// the point stays pending with the repetitions it has.
    pub fn record_failure(
        &mut self,
        run: RunId,
        idx: u32,
        rep: u32,
        at: i64,
        kind: FailureKind,
        reason: &str,
    ) -> Result<(), StoreError> {
        self.conn.get_mut().write(|tx| {
            require_point(tx, run, idx)?;
            tx.execute(
                "INSERT INTO failures (run_id, idx, rep, at, kind, reason) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                &values![run, idx, rep, at, kind.as_str(), reason],
            )?;
            tx.execute(
                "UPDATE points SET reason = ?3 WHERE run_id = ?1 AND idx = ?2 AND status = ?4",
                &values![
                    run,
                    idx,
                    format!("{kind}: {reason}"),
                    PointStatus::Pending.as_str()
                ],
            )?;
            Ok(())
        })
    }

    /// Every failed attempt of a run, oldest first.
    pub fn failures(&self, run: RunId) -> Result<Vec<FailureRow>, StoreError> {
        self.conn.borrow_mut().read(|tx| {
            require_run(tx, run)?;
            let rows = tx.query(
                "SELECT idx, rep, at, kind, reason FROM failures WHERE run_id = ?1 ORDER BY id",
                &values![run],
            )?;
            rows.into_iter()
                .map(|mut row| {
                    Ok(FailureRow {
                        idx: row.uint(0)?,
                        rep: row.uint(1)?,
                        at: row.int(2)?,
                        kind: FailureKind::parse(&row.text(3)?)?,
                        reason: row.text(4)?,
                    })
                })
                .collect()
        })
    }

    /// Sets a run's final status and time.
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        finished_at: i64,
    ) -> Result<(), StoreError> {
        self.update_run(
            run,
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
            &values![run, status.as_str(), finished_at],
        )
    }

    /// Marks a run running again, with no finish time, before resuming it.
    pub fn reopen_run(&mut self, run: RunId) -> Result<(), StoreError> {
        self.update_run(
            run,
            "UPDATE runs SET status = ?2, finished_at = NULL WHERE id = ?1",
            &values![run, RunStatus::Running.as_str()],
        )
    }

    /// Every run, newest (highest id) first.
    pub fn runs(&self) -> Result<Vec<RunRow>, StoreError> {
        self.conn.borrow_mut().read(|tx| {
            tx.query(
                &format!("SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.id DESC"),
                &[],
            )?
            .into_iter()
            .map(run_row)
            .collect()
        })
    }

    /// One run.
    pub fn run(&self, id: RunId) -> Result<RunRow, StoreError> {
        let row = self.conn.borrow_mut().read(|tx| {
            tx.query_opt(
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"),
                &values![id],
            )
        })?;
        run_row(row.ok_or(StoreError::NoSuchRun(id))?)
    }

    /// The newest run's id, if there is any run.
    pub fn latest_run(&self) -> Result<Option<RunId>, StoreError> {
        self.conn
            .borrow_mut()
            .read(|tx| tx.query_one("SELECT max(id) FROM runs", &[])?.opt_int(0))
    }

    /// A run's points in plan order, each with its recorded repetitions.
    pub fn points(&self, id: RunId) -> Result<Vec<PointRow>, StoreError> {
        self.conn.borrow_mut().read(|tx| {
            require_run(tx, id)?;
            let mut reps = reps_of(tx, id)?;
            let rows = tx.query(
                "SELECT idx, run_order, config_json, axes_json, status, reason, summary_json \
                 FROM points WHERE run_id = ?1 ORDER BY idx",
                &values![id],
            )?;
            rows.into_iter()
                .map(|mut row| {
                    let idx = row.uint(0)?;
                    Ok(PointRow {
                        idx,
                        run_order: row.uint(1)?,
                        config_json: row.text(2)?,
                        axes_json: row.text(3)?,
                        status: PointStatus::parse(&row.text(4)?)?,
                        reason: row.opt_text(5)?,
                        summary_json: row.opt_text(6)?,
                        reps: reps.remove(&idx).unwrap_or_default(),
                    })
                })
                .collect()
        })
    }

    /// The indices of a run's pending points, in execution order.
    pub fn pending_points(&self, id: RunId) -> Result<Vec<u32>, StoreError> {
        self.conn.borrow_mut().read(|tx| {
            require_run(tx, id)?;
            tx.query(
                "SELECT idx FROM points WHERE run_id = ?1 AND status = ?2 \
                 ORDER BY run_order, idx",
                &values![id, PointStatus::Pending.as_str()],
            )?
            .into_iter()
            .map(|row| row.uint(0))
            .collect()
        })
    }

    /// One repetition's interval samples, in order.
    pub fn samples(
        &self,
        id: RunId,
        idx: u32,
        rep: u32,
    ) -> Result<Vec<IntervalRecord>, StoreError> {
        self.conn.borrow_mut().read(|tx| {
            let exists = tx.query_opt(
                "SELECT 1 FROM reps WHERE run_id = ?1 AND idx = ?2 AND rep = ?3",
                &values![id, idx, rep],
            )?;
            if exists.is_none() {
                require_point(tx, id, idx)?;
                return Err(StoreError::NoSuchRep { run: id, idx, rep });
            }
            let rows = tx.query(
                "SELECT start_ns, end_ns, dir, bytes, rate_bps, messages, transactions \
                 FROM samples WHERE run_id = ?1 AND idx = ?2 AND rep = ?3 ORDER BY seq",
                &values![id, idx, rep],
            )?;
            rows.into_iter()
                .map(|mut row| {
                    Ok(IntervalRecord {
                        start: Nanos(row.uint(0)?),
                        end: Nanos(row.uint(1)?),
                        dir: parse_dir(&row.text(2)?)?,
                        bytes: Bytes(row.uint(3)?),
                        rate: BitRate(row.real(4)?),
                        messages: row.uint(5)?,
                        transactions: row.uint(6)?,
                        udp: None,
                        subflows: None,
                    })
                })
                .collect()
        })
    }

    /// Deletes a run and, by cascade, its points, repetitions, samples and
    /// failures. A run another process is executing is refused
    /// ([`StoreError::RunLocked`]).
    pub fn delete_run(&mut self, id: RunId) -> Result<(), StoreError> {
        let _lock = self.lock_run(id)?;
        self.update_run(id, "DELETE FROM runs WHERE id = ?1", &values![id])
    }

    /// SQLite's `PRAGMA integrity_check`: `ok`, or the problems found, one per
    /// line. PostgreSQL keeps its own pages whole; there it checks that every
    /// table the schema names answers, and says `ok`.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let sql = match *self.conn.borrow() {
            Conn::Sqlite(_) => "PRAGMA integrity_check",
            Conn::Postgres(_) => {
                "SELECT 'ok' FROM (SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM \
                 points) + (SELECT count(*) FROM reps) + (SELECT count(*) FROM samples) + \
                 (SELECT count(*) FROM failures) AS n) t"
            }
        };
        let lines = self.conn.borrow_mut().read(|tx| {
            tx.query(sql, &[])?
                .into_iter()
                .map(|mut row| row.text(0))
                .collect::<Result<Vec<_>, _>>()
        })?;
        Ok(lines.join("\n"))
    }

    /// The bytes a SQLite store's pages take (in memory, what a held round
    /// costs); `None` for PostgreSQL.
    pub fn sqlite_bytes(&self) -> Result<Option<u64>, StoreError> {
        if matches!(*self.conn.borrow(), Conn::Postgres(_)) {
            return Ok(None);
        }
        let n = self.conn.borrow_mut().read(|tx| {
            Ok(tx.query_one("PRAGMA page_count", &[])?.int(0)?
                * tx.query_one("PRAGMA page_size", &[])?.int(0)?)
        })?;
        Ok(Some(n.max(0) as u64))
    }
}

/// Why the SQLite file at `path` could not be opened: SQLite says only
/// "unable to open database file", so a file that exists and cannot be
/// written (a read-only mount, its mode) is said so.
fn open_failed(path: &Path, e: rusqlite::Error) -> StoreError {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Err(source)
            if path.exists()
                && matches!(
                    source.kind(),
                    std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied
                ) =>
        {
            StoreError::NotWritable {
                path: path.to_path_buf(),
                source,
            }
        }
        _ => StoreError::Open {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

/// The run's lock file, locked.
fn lock_file(db: &Path, run: RunId) -> Result<std::fs::File, StoreError> {
    let mut dir = db.as_os_str().to_owned();
    dir.push(".locks");
    let dir = PathBuf::from(dir);
    let path = dir.join(format!("run-{run}"));
    let io_err = |source| StoreError::Lock {
        run,
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(io_err)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(io_err)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::RunLocked {
            run,
            lock: format!("lock {}", path.display()),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(io_err(e)),
    }
}

/// Every repetition of a run, by point.
fn reps_of(tx: &mut Tx<'_>, id: RunId) -> Result<BTreeMap<u32, Vec<RepRow>>, StoreError> {
    let mut reps: BTreeMap<u32, Vec<RepRow>> = BTreeMap::new();
    let rows = tx.query(
        "SELECT idx, rep, report_json, metrics_json FROM reps \
         WHERE run_id = ?1 ORDER BY idx, rep",
        &values![id],
    )?;
    for mut row in rows {
        let (idx, rep): (u32, u32) = (row.uint(0)?, row.uint(1)?);
        let metrics = serde_json::from_str(&row.text(3)?).map_err(|e| {
            StoreError::Json(format!("metrics of run {id} point {idx} rep {rep}: {e}"))
        })?;
        reps.entry(idx).or_default().push(RepRow {
            rep,
            report_json: row.text(2)?,
            metrics,
        });
    }
    Ok(reps)
}

fn run_row(mut row: Row) -> Result<RunRow, StoreError> {
    Ok(RunRow {
        id: row.int(0)?,
        created_at: row.int(1)?,
        tool_version: row.text(2)?,
        label: row.text(3)?,
        command: row.text(4)?,
        plan_json: row.text(5)?,
        client_host_json: row.text(6)?,
        server_host_json: row.opt_text(7)?,
        status: RunStatus::parse(&row.text(8)?)?,
        finished_at: row.opt_int(9)?,
        link_json: row.opt_text(10)?,
        points_total: row.uint(11)?,
        points_done: row.uint(12)?,
    })
}

fn require_run(tx: &mut Tx<'_>, id: RunId) -> Result<(), StoreError> {
    match tx.query_opt("SELECT 1 FROM runs WHERE id = ?1", &values![id])? {
        Some(_) => Ok(()),
        None => Err(StoreError::NoSuchRun(id)),
    }
}

fn require_point(tx: &mut Tx<'_>, run: RunId, idx: u32) -> Result<(), StoreError> {
    let found = tx.query_opt(
        "SELECT 1 FROM points WHERE run_id = ?1 AND idx = ?2",
        &values![run, idx],
    )?;
    match found {
        Some(_) => Ok(()),
        None => {
            require_run(tx, run)?;
            Err(StoreError::NoSuchPoint { run, idx })
        }
    }
}

/// Refuses text that is not one JSON document, so readers never meet a broken one.
fn check_json(column: &str, text: &str) -> Result<(), StoreError> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)
        .map(|_| ())
        .map_err(|e| StoreError::Json(format!("{column}: {e}")))
}

fn int(what: &'static str, value: u64) -> Result<i64, StoreError> {
    i64::try_from(value).map_err(|_| StoreError::TooLarge { what, value })
}

/// The direction's serde name (`up`, `down`), as in the JSON documents.
fn dir_name(dir: FlowDir) -> &'static str {
    match dir {
        FlowDir::Up => "up",
        FlowDir::Down => "down",
    }
}

fn parse_dir(s: &str) -> Result<FlowDir, StoreError> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|e| StoreError::Json(format!("samples.dir {s:?}: {e}")))
}

fn mark_done(tx: &mut Tx<'_>, run: RunId, idx: u32, summary_json: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE points SET status = ?3, reason = NULL, summary_json = ?4 \
         WHERE run_id = ?1 AND idx = ?2",
        &values![run, idx, PointStatus::Done.as_str(), summary_json],
    )?;
    Ok(())
}

fn insert_rep(
    tx: &mut Tx<'_>,
    run: RunId,
    idx: u32,
    rep: u32,
    (report_json, metrics, samples): &RepInput,
) -> Result<(), StoreError> {
    check_json("report_json", report_json)?;
    let metrics_json = serde_json::to_string(metrics).map_err(|e| {
        StoreError::Json(format!("metrics of run {run} point {idx} rep {rep}: {e}"))
    })?;
    tx.execute(
        "INSERT INTO reps (run_id, idx, rep, report_json, metrics_json) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
        &values![run, idx, rep, report_json.as_str(), metrics_json],
    )?;
    tx.execute_each(
        "INSERT INTO samples (run_id, idx, rep, seq, start_ns, end_ns, dir, bytes, \
         rate_bps, messages, transactions) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        (0u32..).zip(samples).map(|(seq, s)| {
            Ok(values![
                run,
                idx,
                rep,
                seq,
                int("start_ns", s.start.0)?,
                int("end_ns", s.end.0)?,
                dir_name(s.dir),
                int("bytes", s.bytes.0)?,
                s.rate.bps(),
                int("messages", s.messages)?,
                int("transactions", s.transactions)?,
            ]
            .to_vec())
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_names_match_the_json_documents() {
        for dir in [FlowDir::Up, FlowDir::Down] {
            let json = serde_json::to_value(dir).unwrap();
            assert_eq!(json.as_str(), Some(dir_name(dir)));
            assert_eq!(parse_dir(dir_name(dir)).unwrap(), dir);
        }
        assert!(matches!(parse_dir("sideways"), Err(StoreError::Json(_))));
    }

    #[test]
    fn counts_beyond_i64_are_refused_not_wrapped() {
        assert_eq!(int("bytes", i64::MAX as u64).unwrap(), i64::MAX);
        assert!(matches!(
            int("bytes", i64::MAX as u64 + 1),
            Err(StoreError::TooLarge { what: "bytes", .. })
        ));
    }

    #[test]
    fn json_columns_must_hold_one_document() {
        assert!(check_json("x", r#"{"a":[1,2]}"#).is_ok());
        assert!(check_json("x", "").is_err());
        assert!(check_json("x", "{} {}").is_err());
    }
}

#[path = "read_only.rs"]
mod read_only;
