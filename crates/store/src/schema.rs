//! The schema's history and how a connection is brought up to date.
//!
//! Migration `n` (1-based) is `MIGRATIONS[n - 1]`. Opening a store applies the missing
//! ones in order, each in its own `BEGIN IMMEDIATE` transaction together with the
//! `PRAGMA user_version = n` that records it, so a crash leaves the file at some
//! whole version. The version is re-read inside each transaction, so two processes
//! opening a new file at once do not both apply the same migration.

use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::{Store, StoreError};

/// Every migration, oldest first. Released entries are never edited.
pub const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_initial.sql"),
    include_str!("migrations/0002_link_and_status_index.sql"),
    include_str!("migrations/0003_attempts.sql"),
];

const _: () = assert!(MIGRATIONS.len() == Store::SCHEMA_VERSION as usize);

/// How long a statement waits for another process's lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Per-connection settings: write-ahead log, a sync on every commit, enforced
/// foreign keys (so deletes cascade), and waiting out other writers.
pub(crate) fn configure(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Returns the mode in force: "memory" for in-memory databases, and the old mode
    // where WAL is unavailable. Either is still durable with synchronous=FULL.
    let _mode: String =
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // Take the write lock at BEGIN, so a transaction never fails half-way because
    // another writer got there first.
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    Ok(())
}

/// `PRAGMA user_version`.
pub(crate) fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// A database opened to read only is this build's schema: a newer one is not
/// understood, an older one not migrated (nothing is written).
pub(crate) fn check_version(conn: &Connection) -> Result<(), StoreError> {
    version_is_current(user_version(conn)?)
}

/// Whether a schema version found in a store is this build's, or why not.
pub(crate) fn version_is_current(found: i64) -> Result<(), StoreError> {
    let supported = Store::SCHEMA_VERSION;
    match u32::try_from(found) {
        Ok(v) if v == supported => Ok(()),
        Ok(v) if v < supported => Err(StoreError::OlderSchema { found, supported }),
        _ => Err(StoreError::NewerSchema { found, supported }),
    }
}

/// Applies the migrations the database lacks.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let supported = Store::SCHEMA_VERSION;
    loop {
        let tx = conn.transaction()?;
        let found = user_version(&tx)?;
        let version = match u32::try_from(found) {
            Ok(v) if v <= supported => v,
            _ => return Err(StoreError::NewerSchema { found, supported }),
        };
        if version == supported {
            return Ok(());
        }
        tx.execute_batch(MIGRATIONS[version as usize])?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tables(conn: &Connection) -> Vec<String> {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    #[test]
    fn migrates_from_every_older_version() {
        for start in 0..Store::SCHEMA_VERSION {
            let mut conn = Connection::open_in_memory().unwrap();
            for (i, m) in MIGRATIONS.iter().enumerate().take(start as usize) {
                conn.execute_batch(m).unwrap();
                conn.pragma_update(None, "user_version", i64::try_from(i + 1).unwrap())
                    .unwrap();
            }
            configure(&mut conn).unwrap();
            migrate(&mut conn).unwrap();
            assert_eq!(
                user_version(&conn).unwrap(),
                i64::from(Store::SCHEMA_VERSION)
            );
            assert_eq!(
                tables(&conn),
                [
                    "failures",
                    "points",
                    "reps",
                    "runs",
                    "samples",
                    "sqlite_sequence"
                ]
            );
            // Migrating again is a no-op.
            migrate(&mut conn).unwrap();
        }
    }

    #[test]
    fn a_failing_migration_leaves_the_previous_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        // Make migration 2 fail half-way: its ALTER TABLE succeeds, its CREATE INDEX
        // collides with this one.
        conn.execute_batch("CREATE INDEX points_by_status ON points (idx)")
            .unwrap();
        configure(&mut conn).unwrap();
        assert!(matches!(migrate(&mut conn), Err(StoreError::Sql(_))));
        assert_eq!(user_version(&conn).unwrap(), 1);
        let has_link: bool = conn
            .query_row(
                "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'link_json'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(
            !has_link,
            "the ALTER TABLE of the failed migration was kept"
        );
    }

    #[test]
    fn negative_versions_are_not_ours() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", -1).unwrap();
        assert!(matches!(
            migrate(&mut conn),
            Err(StoreError::NewerSchema { found: -1, .. })
        ));
    }
}
