//! Opening files of every schema version: new, old (fixtures), newer, and not ours.

use netsonde_model::spec::FlowDir;
use netsonde_store::{PointStatus, RunStatus, Store, StoreError, MIGRATIONS};
use rusqlite::Connection;

use crate::util::{metrics, TempDb};

const SCHEMA_V1: &str = include_str!("fixtures/schema_v1.sql");

fn user_version(conn: &Connection) -> i64 {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

/// `(type, name, sql)` of every schema object, by name.
fn schema_of(conn: &Connection) -> Vec<(String, String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn empty_file_migrates_to_latest_and_reopens_unchanged() {
    let db = TempDb::new();
    let id = {
        let mut store = Store::open(&db.path).unwrap();
        assert_eq!(store.schema_version().unwrap(), 3);
        assert_eq!(store.schema_version().unwrap(), Store::SCHEMA_VERSION);
        store
            .create_run(&crate::util::new_run("first"), &crate::util::planned(2))
            .unwrap()
    };
    let schema_before = schema_of(&db.raw());
    let store = Store::open(&db.path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 3);
    assert_eq!(store.run(id).unwrap().label, "first");
    assert_eq!(store.integrity_check().unwrap(), "ok");
    assert_eq!(schema_of(&db.raw()), schema_before);
    let mode: String = db
        .raw()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn in_memory_store_is_at_latest_version() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.schema_version().unwrap(), Store::SCHEMA_VERSION);
    assert_eq!(store.latest_run().unwrap(), None);
    assert!(store.runs().unwrap().is_empty());
}

#[test]
fn fixture_v1_has_exactly_the_first_migrations_schema() {
    let fixture = Connection::open_in_memory().unwrap();
    fixture.execute_batch(SCHEMA_V1).unwrap();
    assert_eq!(user_version(&fixture), 1);
    let fresh = Connection::open_in_memory().unwrap();
    fresh.execute_batch(MIGRATIONS[0]).unwrap();
    assert_eq!(schema_of(&fixture), schema_of(&fresh));
}

#[test]
fn fixture_v1_migrates_and_reads_back() {
    let db = TempDb::new();
    std::fs::create_dir_all(db.path.parent().unwrap()).unwrap();
    {
        let conn = Connection::open(&db.path).unwrap();
        conn.execute_batch(SCHEMA_V1).unwrap();
        assert_eq!(user_version(&conn), 1);
    }
    let mut store = Store::open(&db.path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 3);
    assert_eq!(user_version(&db.raw()), 3);

    let run = store.run(1).unwrap();
    assert_eq!(run.label, "streams-sweep");
    assert_eq!(
        run.command,
        "netsonde sweep --streams 1,4 --reps 2 -c 10.0.0.2"
    );
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.created_at, 1_767_225_600);
    assert_eq!(run.finished_at, Some(1_767_225_660));
    assert!(run.server_host_json.unwrap().contains("\"beta\""));
    assert_eq!(run.link_json, None);
    assert_eq!((run.points_total, run.points_done), (2, 1));
    assert_eq!(store.latest_run().unwrap(), Some(1));

    let points = store.points(1).unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!(points[0].status, PointStatus::Done);
    assert_eq!(points[0].axes_json, r#"{"streams":1}"#);
    assert_eq!(points[0].reps.len(), 2);
    assert_eq!(
        points[0].reps[0].metrics,
        metrics(&[("goodput", 9.4e9), ("retransmits", 3.0)])
    );
    assert_eq!(points[0].reps[1].rep, 1);
    assert_eq!(points[1].status, PointStatus::Pending);
    assert!(points[1].reps.is_empty());

    let samples = store.samples(1, 0, 0).unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[1].start.0, 1_000_000_000);
    assert_eq!(samples[1].messages, 17_931);
    assert_eq!(store.samples(1, 0, 1).unwrap()[0].dir, FlowDir::Down);

    // The old run resumes on the new schema, and the new column is writable.
    assert_eq!(store.pending_points(1).unwrap(), vec![1]);
    store.reopen_run(1).unwrap();
    store
        .record_point(1, 1, &crate::util::two_reps(), r#"{"goodput":{}}"#)
        .unwrap();
    store.set_link(1, r#"{"delay_ms":10}"#).unwrap();
    store
        .finish_run(1, RunStatus::Complete, 1_767_300_000)
        .unwrap();
    let run = store.run(1).unwrap();
    assert_eq!((run.points_total, run.points_done), (2, 2));
    assert_eq!(run.link_json.as_deref(), Some(r#"{"delay_ms":10}"#));
    assert!(store.pending_points(1).unwrap().is_empty());
    // Ids continue after the fixture's, never reusing them.
    let next = store
        .create_run(&crate::util::new_run("after"), &[])
        .unwrap();
    assert_eq!(next, 2);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn fixture_v1_migrates_through_from_connection() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(SCHEMA_V1).unwrap();
    let store = Store::from_connection(conn).unwrap();
    assert_eq!(store.schema_version().unwrap(), 3);
    assert_eq!(store.points(1).unwrap()[0].reps.len(), 2);
}

#[test]
fn newer_schema_is_refused_and_left_untouched() {
    let db = TempDb::new();
    std::fs::create_dir_all(db.path.parent().unwrap()).unwrap();
    db.raw().pragma_update(None, "user_version", 99).unwrap();
    match Store::open(&db.path) {
        Err(StoreError::NewerSchema { found, supported }) => {
            assert_eq!(found, 99);
            assert_eq!(supported, 3);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let raw = db.raw();
    assert_eq!(user_version(&raw), 99);
    assert!(schema_of(&raw).is_empty(), "no tables may be created");
}

#[test]
fn a_file_that_is_not_a_database_is_an_open_error() {
    let db = TempDb::new();
    std::fs::create_dir_all(db.path.parent().unwrap()).unwrap();
    std::fs::write(&db.path, vec![b'x'; 4096]).unwrap();
    match Store::open(&db.path) {
        Err(StoreError::Open { path, .. }) => assert_eq!(path, db.path),
        other => panic!("expected Open, got {other:?}"),
    }
}

#[test]
fn default_path_names_the_netsonde_database() {
    let p = Store::default_path();
    assert!(p.ends_with("netsonde/netsonde.db") || p == std::path::Path::new("netsonde.db"));
}

const SCHEMA_V2: &str = include_str!("fixtures/schema_v2.sql");

#[test]
fn fixture_v2_has_exactly_the_first_two_migrations_schema() {
    let fixture = Connection::open_in_memory().unwrap();
    fixture.execute_batch(SCHEMA_V2).unwrap();
    assert_eq!(user_version(&fixture), 2);
    let fresh = Connection::open_in_memory().unwrap();
    fresh.execute_batch(MIGRATIONS[0]).unwrap();
    fresh.execute_batch(MIGRATIONS[1]).unwrap();
    assert_eq!(schema_of(&fixture), schema_of(&fresh));
}

/// A version-2 file opens at version 3: its runs read back (a legacy `failed`
/// point included), it has no failures yet, and its interrupted run resumes with
/// failures recorded beside its repetitions.
#[test]
fn fixture_v2_migrates_and_reads_back() {
    use netsonde_store::FailureKind;
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(SCHEMA_V2).unwrap();
    let mut store = Store::from_connection(conn).unwrap();
    assert_eq!(store.schema_version().unwrap(), 3);
    let run = store.run(1).unwrap();
    assert!(run.link_json.unwrap().contains("9000"));
    let legacy = store.points(2).unwrap();
    assert_eq!(legacy[0].status, PointStatus::Failed);
    assert_eq!(legacy[0].reason.as_deref(), Some("connection refused"));
    assert_eq!(legacy[1].status, PointStatus::Skipped);
    assert!(store.failures(1).unwrap().is_empty());
    store
        .record_failure(1, 1, 0, 1_767_400_000, FailureKind::Failed, "refused")
        .unwrap();
    assert_eq!(store.failures(1).unwrap().len(), 1);
    assert_eq!(store.points(1).unwrap()[0].reps.len(), 2);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}
