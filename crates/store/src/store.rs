//! [`Store`]: typed reads and writes over one SQLite connection.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use netsonde_model::result::IntervalRecord;
use netsonde_model::spec::FlowDir;
use netsonde_model::sweep::Metrics;
use netsonde_model::units::{BitRate, Bytes, Nanos};
use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::schema;
use crate::{
    FailureKind, FailureRow, NewRun, PlannedPoint, PointRow, PointStatus, RepRow, RunId, RunRow,
    RunStatus, StoreError,
};

/// A results database: one SQLite connection at the current schema version.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// The database file; `None` in memory.
    path: Option<PathBuf>,
}

/// Holds a run for the process executing it: an exclusive `flock` on the run's lock
/// file, `<db>.locks/run-<id>`, released when dropped or when the process dies
/// however it dies (the kernel drops the lock with the last descriptor). The files
/// are left in place: removing one while another process waits on it would let two
/// holders lock two different files of the same name.
#[derive(Debug)]
pub struct RunLock {
    _file: Option<std::fs::File>,
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

    /// Opens (creating it and its parent directories if needed) the database at
    /// `path` and migrates it to [`Store::SCHEMA_VERSION`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        let mut conn = Connection::open(path).map_err(open_err)?;
        schema::configure(&mut conn).map_err(open_err)?;
        schema::migrate(&mut conn)?;
        Ok(Store {
            conn,
            path: Some(path.to_path_buf()),
        })
    }

    /// Takes the run for this process, or says which process has it
    /// ([`StoreError::RunLocked`]). An in-memory store has no other process to
    /// exclude.
    pub fn lock_run(&self, run: RunId) -> Result<RunLock, StoreError> {
        require_run(&self.conn, run)?;
        let Some(db) = &self.path else {
            return Ok(RunLock { _file: None });
        };
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
            Ok(()) => Ok(RunLock { _file: Some(file) }),
            Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::RunLocked { run, path }),
            Err(std::fs::TryLockError::Error(e)) => Err(io_err(e)),
        }
    }

    /// A private, empty database that vanishes when dropped.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Store::from_connection(Connection::open_in_memory()?)
    }

    /// Configures and migrates an already open connection (for tests that load a
    /// fixture into a connection first).
    #[doc(hidden)]
    pub fn from_connection(mut conn: Connection) -> Result<Store, StoreError> {
        schema::configure(&mut conn)?;
        schema::migrate(&mut conn)?;
        Ok(Store { conn, path: None })
    }

    /// The database's `PRAGMA user_version`.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let v = schema::user_version(&self.conn)?;
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
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (created_at, tool_version, label, command, plan_json, \
             client_host_json, status) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                run.created_at,
                run.tool_version,
                run.label,
                run.command,
                run.plan_json,
                run.client_host_json,
                RunStatus::Running.as_str(),
            ],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT INTO points (run_id, idx, run_order, config_json, axes_json, status) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for p in points {
                insert.execute(params![
                    id,
                    p.idx,
                    p.run_order,
                    p.config_json,
                    p.axes_json,
                    PointStatus::Pending.as_str(),
                ])?;
            }
        }
        tx.commit()?;
        Ok(id)
    }

    /// Stores the server's host facts (JSON) once it has answered.
    pub fn set_server_host(&mut self, run: RunId, json: &str) -> Result<(), StoreError> {
        check_json("server_host_json", json)?;
        let n = self.conn.execute(
            "UPDATE runs SET server_host_json = ?2 WHERE id = ?1",
            params![run, json],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }

    /// Stores the emulated link (spec and mechanism, JSON) a lab run uses.
    pub fn set_link(&mut self, run: RunId, json: &str) -> Result<(), StoreError> {
        check_json("link_json", json)?;
        let n = self.conn.execute(
            "UPDATE runs SET link_json = ?2 WHERE id = ?1",
            params![run, json],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
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
        let tx = self.conn.transaction()?;
        require_point(&tx, run, idx)?;
        tx.execute(
            "DELETE FROM reps WHERE run_id = ?1 AND idx = ?2",
            params![run, idx],
        )?;
        for (rep, input) in (0u32..).zip(reps) {
            insert_rep(&tx, run, idx, rep, input)?;
        }
        mark_done(&tx, run, idx, summary_json)?;
        tx.commit()?;
        Ok(())
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
        let tx = self.conn.transaction()?;
        require_point(&tx, run, idx)?;
        tx.execute(
            "DELETE FROM reps WHERE run_id = ?1 AND idx = ?2 AND rep = ?3",
            params![run, idx, rep],
        )?;
        insert_rep(&tx, run, idx, rep, input)?;
        tx.commit()?;
        Ok(())
    }

    /// Marks a point whose repetitions are all recorded as done, with its summary.
    pub fn complete_point(
        &mut self,
        run: RunId,
        idx: u32,
        summary_json: &str,
    ) -> Result<(), StoreError> {
        check_json("summary_json", summary_json)?;
        let tx = self.conn.transaction()?;
        require_point(&tx, run, idx)?;
        mark_done(&tx, run, idx, summary_json)?;
        tx.commit()?;
        Ok(())
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
        let tx = self.conn.transaction()?;
        require_point(&tx, run, idx)?;
        let reps: u32 = tx.query_row(
            "SELECT count(*) FROM reps WHERE run_id = ?1 AND idx = ?2",
            params![run, idx],
            |row| row.get(0),
        )?;
        if reps > 0 {
            return Err(StoreError::HasReps { run, idx, reps });
        }
        tx.execute(
            "UPDATE points SET status = ?3, reason = ?4, summary_json = NULL \
             WHERE run_id = ?1 AND idx = ?2",
            params![run, idx, status.as_str(), reason],
        )?;
        tx.commit()?;
        Ok(())
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
        let tx = self.conn.transaction()?;
        require_point(&tx, run, idx)?;
        tx.execute(
            "INSERT INTO failures (run_id, idx, rep, at, kind, reason) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![run, idx, rep, at, kind.as_str(), reason],
        )?;
        tx.execute(
            "UPDATE points SET reason = ?3 WHERE run_id = ?1 AND idx = ?2 AND status = ?4",
            params![
                run,
                idx,
                format!("{kind}: {reason}"),
                PointStatus::Pending.as_str()
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Every failed attempt of a run, oldest first.
    pub fn failures(&self, run: RunId) -> Result<Vec<FailureRow>, StoreError> {
        require_run(&self.conn, run)?;
        let mut stmt = self.conn.prepare(
            "SELECT idx, rep, at, kind, reason FROM failures WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run], |row| {
            Ok((
                row.get::<_, u32>(0)?,
                row.get::<_, u32>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (idx, rep, at, kind, reason) = row?;
            out.push(FailureRow {
                idx,
                rep,
                at,
                kind: FailureKind::parse(&kind)?,
                reason,
            });
        }
        Ok(out)
    }

    /// Sets a run's final status and time.
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        finished_at: i64,
    ) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
            params![run, status.as_str(), finished_at],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }

    /// Marks a run running again, with no finish time, before resuming it.
    pub fn reopen_run(&mut self, run: RunId) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at = NULL WHERE id = ?1",
            params![run, RunStatus::Running.as_str()],
        )?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(run));
        }
        Ok(())
    }

    /// Every run, newest (highest id) first.
    pub fn runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.id DESC"
        ))?;
        let rows = stmt.query_map([], run_row)?;
        let mut out = Vec::new();
        for row in rows {
            out.push(finish_run_row(row?)?);
        }
        Ok(out)
    }

    /// One run.
    pub fn run(&self, id: RunId) -> Result<RunRow, StoreError> {
        let row = self
            .conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1"),
                [id],
                run_row,
            )
            .optional()?
            .ok_or(StoreError::NoSuchRun(id))?;
        finish_run_row(row)
    }

    /// The newest run's id, if there is any run.
    pub fn latest_run(&self) -> Result<Option<RunId>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT max(id) FROM runs", [], |row| row.get(0))?)
    }

    /// A run's points in plan order, each with its recorded repetitions.
    pub fn points(&self, id: RunId) -> Result<Vec<PointRow>, StoreError> {
        require_run(&self.conn, id)?;
        let mut reps: BTreeMap<u32, Vec<RepRow>> = BTreeMap::new();
        {
            let mut stmt = self.conn.prepare(
                "SELECT idx, rep, report_json, metrics_json FROM reps \
                 WHERE run_id = ?1 ORDER BY idx, rep",
            )?;
            let rows = stmt.query_map([id], |row| {
                Ok((
                    row.get::<_, u32>(0)?,
                    row.get::<_, u32>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            })?;
            for row in rows {
                let (idx, rep, report_json, metrics_json) = row?;
                let metrics = serde_json::from_str(&metrics_json).map_err(|e| {
                    StoreError::Json(format!("metrics of run {id} point {idx} rep {rep}: {e}"))
                })?;
                reps.entry(idx).or_default().push(RepRow {
                    rep,
                    report_json,
                    metrics,
                });
            }
        }
        let mut stmt = self.conn.prepare(
            "SELECT idx, run_order, config_json, axes_json, status, reason, summary_json \
             FROM points WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = stmt.query_map([id], |row| {
            Ok((
                row.get::<_, u32>(0)?,
                row.get::<_, u32>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, Option<String>>(5)?,
                row.get::<_, Option<String>>(6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (idx, run_order, config_json, axes_json, status, reason, summary_json) = row?;
            out.push(PointRow {
                idx,
                run_order,
                config_json,
                axes_json,
                status: PointStatus::parse(&status)?,
                reason,
                summary_json,
                reps: reps.remove(&idx).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// The indices of a run's pending points, in execution order.
    pub fn pending_points(&self, id: RunId) -> Result<Vec<u32>, StoreError> {
        require_run(&self.conn, id)?;
        let mut stmt = self.conn.prepare(
            "SELECT idx FROM points WHERE run_id = ?1 AND status = ?2 ORDER BY run_order, idx",
        )?;
        let rows = stmt.query_map(params![id, PointStatus::Pending.as_str()], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One repetition's interval samples, in order.
    pub fn samples(
        &self,
        id: RunId,
        idx: u32,
        rep: u32,
    ) -> Result<Vec<IntervalRecord>, StoreError> {
        let exists: Option<i64> = self
            .conn
            .query_row(
                "SELECT 1 FROM reps WHERE run_id = ?1 AND idx = ?2 AND rep = ?3",
                params![id, idx, rep],
                |row| row.get(0),
            )
            .optional()?;
        if exists.is_none() {
            require_point(&self.conn, id, idx)?;
            return Err(StoreError::NoSuchRep { run: id, idx, rep });
        }
        let mut stmt = self.conn.prepare(
            "SELECT start_ns, end_ns, dir, bytes, rate_bps, messages, transactions FROM samples \
             WHERE run_id = ?1 AND idx = ?2 AND rep = ?3 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![id, idx, rep], |row| {
            Ok((
                uint(row, 0)?,
                uint(row, 1)?,
                row.get::<_, String>(2)?,
                uint(row, 3)?,
                row.get::<_, f64>(4)?,
                uint(row, 5)?,
                uint(row, 6)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (start, end, dir, bytes, rate, messages, transactions) = row?;
            out.push(IntervalRecord {
                start: Nanos(start),
                end: Nanos(end),
                dir: parse_dir(&dir)?,
                bytes: Bytes(bytes),
                rate: BitRate(rate),
                messages,
                transactions,
            });
        }
        Ok(out)
    }

    /// Deletes a run and, by cascade, its points, repetitions, samples and
    /// failures. A run another process is executing is refused
    /// ([`StoreError::RunLocked`]).
    pub fn delete_run(&mut self, id: RunId) -> Result<(), StoreError> {
        let _lock = self.lock_run(id)?;
        let n = self.conn.execute("DELETE FROM runs WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(StoreError::NoSuchRun(id));
        }
        Ok(())
    }

    /// `PRAGMA integrity_check`: `ok`, or the problems found, one per line.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let lines = stmt
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(lines.join("\n"))
    }
}

/// A `runs` row with its status still as text.
type RawRun = (RunRow, String);

fn run_row(row: &Row<'_>) -> rusqlite::Result<RawRun> {
    Ok((
        RunRow {
            id: row.get(0)?,
            created_at: row.get(1)?,
            tool_version: row.get(2)?,
            label: row.get(3)?,
            command: row.get(4)?,
            plan_json: row.get(5)?,
            client_host_json: row.get(6)?,
            server_host_json: row.get(7)?,
            status: RunStatus::Running,
            finished_at: row.get(9)?,
            link_json: row.get(10)?,
            points_total: row.get(11)?,
            points_done: row.get(12)?,
        },
        row.get(8)?,
    ))
}

fn finish_run_row((mut run, status): RawRun) -> Result<RunRow, StoreError> {
    run.status = RunStatus::parse(&status)?;
    Ok(run)
}

fn require_run(conn: &Connection, id: RunId) -> Result<(), StoreError> {
    let found: Option<i64> = conn
        .query_row("SELECT 1 FROM runs WHERE id = ?1", [id], |row| row.get(0))
        .optional()?;
    match found {
        Some(_) => Ok(()),
        None => Err(StoreError::NoSuchRun(id)),
    }
}

fn require_point(conn: &Connection, run: RunId, idx: u32) -> Result<(), StoreError> {
    let found: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM points WHERE run_id = ?1 AND idx = ?2",
            params![run, idx],
            |row| row.get(0),
        )
        .optional()?;
    match found {
        Some(_) => Ok(()),
        None => {
            require_run(conn, run)?;
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

/// Reads a column written by [`int`].
fn uint(row: &Row<'_>, i: usize) -> rusqlite::Result<u64> {
    let v: i64 = row.get(i)?;
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(i, v))
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

fn mark_done(
    tx: &rusqlite::Transaction<'_>,
    run: RunId,
    idx: u32,
    summary_json: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE points SET status = ?3, reason = NULL, summary_json = ?4 \
         WHERE run_id = ?1 AND idx = ?2",
        params![run, idx, PointStatus::Done.as_str(), summary_json],
    )?;
    Ok(())
}

fn insert_rep(
    tx: &rusqlite::Transaction<'_>,
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
        "INSERT INTO reps (run_id, idx, rep, report_json, metrics_json) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![run, idx, rep, report_json, metrics_json],
    )?;
    let mut insert_sample = tx.prepare_cached(
        "INSERT INTO samples (run_id, idx, rep, seq, start_ns, end_ns, dir, bytes, \
         rate_bps, messages, transactions) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for (seq, s) in (0u32..).zip(samples) {
        insert_sample.execute(params![
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
        ])?;
    }
    Ok(())
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
