//! The store on a real PostgreSQL server (a throw-away one per test): the same
//! reads and writes as SQLite's, many controllers writing at once without losing
//! a row, run locks across controllers, and the schema's version.

use std::collections::BTreeMap;

use netsonde_model::spec::FlowDir;
use netsonde_store::{
    FailureKind, Location, PointStatus, RunRow, RunStatus, Store, StoreError, MIGRATIONS,
};

use crate::pg_util::Postgres;
use crate::util::{new_run, planned, sample, two_reps, TempDb};

fn open(url: &str) -> Store {
    Store::open_at(&url.parse::<Location>().unwrap()).unwrap()
}

/// Everything a store hands back after one fixed history of writes, with the
/// run's id and creation time left out.
fn history(store: &mut Store) -> String {
    let plan = planned(4);
    let id = store.create_run(&new_run("both"), &plan).unwrap();
    store.set_server_host(id, r#"{"hostname":"beta"}"#).unwrap();
    store.set_link(id, r#"{"rate_bps":1e8}"#).unwrap();
    store
        .record_point(id, 3, &two_reps(), r#"{"goodput":{"mean":9.4e9}}"#)
        .unwrap();
    let one = (
        r#"{"rep":0}"#.to_string(),
        two_reps()[1].1.clone(),
        vec![sample(7, FlowDir::Down)],
    );
    store.record_rep(id, 2, 0, &one).unwrap();
    store.record_rep(id, 2, 0, &one).unwrap();
    store
        .record_failure(id, 2, 1, 1_767_225_700, FailureKind::Refused, "busy server")
        .unwrap();
    store
        .skip_point(id, 1, PointStatus::Skipped, "not asked")
        .unwrap();
    assert!(matches!(
        store.skip_point(id, 3, PointStatus::Failed, "no"),
        Err(StoreError::HasReps { reps: 2, .. })
    ));
    let pending = store.pending_points(id).unwrap();
    store.complete_point(id, 2, "{}").unwrap();
    store
        .finish_run(id, RunStatus::Incomplete, 1_767_225_800)
        .unwrap();
    let RunRow {
        label,
        plan_json,
        server_host_json,
        link_json,
        status,
        finished_at,
        points_total,
        points_done,
        ..
    } = store.run(id).unwrap();
    let points = store.points(id).unwrap();
    let samples: Vec<_> = [(3, 0), (3, 1), (2, 0)]
        .iter()
        .map(|&(idx, rep)| store.samples(id, idx, rep).unwrap())
        .collect();
    let failures = store.failures(id).unwrap();
    assert_eq!(store.latest_run().unwrap(), Some(id));
    assert_eq!(store.runs().unwrap().len(), 1);
    assert_eq!(store.schema_version().unwrap(), Store::SCHEMA_VERSION);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    store.delete_run(id).unwrap();
    assert!(matches!(store.points(id), Err(StoreError::NoSuchRun(_))));
    assert!(store.runs().unwrap().is_empty());
    format!(
        "{label} {plan_json} {server_host_json:?} {link_json:?} {status} {finished_at:?} \
         {points_total} {points_done}\n{pending:?}\n{points:#?}\n{samples:#?}\n{failures:#?}"
    )
}

#[test]
fn postgres_hands_back_what_sqlite_does() {
    let Some(pg) = Postgres::start("postgres_hands_back_what_sqlite_does") else {
        return;
    };
    let file = TempDb::new();
    let from_sqlite = history(&mut Store::open(&file.path).unwrap());
    let from_postgres = history(&mut open(&pg.url));
    assert_eq!(from_postgres, from_sqlite);
    // Reopening finds the schema in place and migrates nothing.
    assert_eq!(open(&pg.url).schema_version().unwrap(), 3);
    assert_eq!(MIGRATIONS.len(), 3);
}

/// Eight controllers open one new database at once (each migration applied
/// once) and write 5 runs each, every point with two repetitions and their
/// samples: every row is there afterwards, and run ids are all distinct.
#[test]
fn concurrent_controllers_lose_no_row() {
    let Some(pg) = Postgres::start("concurrent_controllers_lose_no_row") else {
        return;
    };
    let url = pg.database("fleet");
    let (controllers, runs, points) = (8, 5, 6);
    let ids: Vec<Vec<i64>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..controllers)
            .map(|c| {
                let url = url.clone();
                s.spawn(move || {
                    let mut store = open(&url);
                    (0..runs)
                        .map(|r| {
                            let id = store
                                .create_run(&new_run(&format!("c{c}r{r}")), &planned(points))
                                .unwrap();
                            for idx in 0..points {
                                store.record_point(id, idx, &two_reps(), "{}").unwrap();
                            }
                            store.finish_run(id, RunStatus::Complete, 1).unwrap();
                            id
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<i64> = ids.concat();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), controllers * runs);
    let store = open(&url);
    let stored = store.runs().unwrap();
    assert_eq!(stored.len(), controllers * runs);
    let mut labels = BTreeMap::new();
    for run in &stored {
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!((run.points_total, run.points_done), (points, points));
        labels.insert(run.label.clone(), run.id);
        for p in store.points(run.id).unwrap() {
            assert_eq!(p.reps.len(), 2);
        }
        assert_eq!(store.samples(run.id, 0, 0).unwrap(), two_reps()[0].2);
    }
    assert_eq!(labels.len(), controllers * runs);
}

/// A run executed by one controller is refused to another, until the first
/// lets go (or its connection dies).
#[test]
fn a_run_is_locked_across_controllers() {
    let Some(pg) = Postgres::start("a_run_is_locked_across_controllers") else {
        return;
    };
    let (mut a, mut b) = (open(&pg.url), open(&pg.url));
    let id = a.create_run(&new_run("lock"), &planned(1)).unwrap();
    let held = a.lock_run(id).unwrap();
    match b.lock_run(id) {
        Err(e @ StoreError::RunLocked { .. }) => {
            assert!(e.to_string().contains("PostgreSQL advisory lock"), "{e}");
        }
        r => panic!("expected RunLocked, got {r:?}"),
    }
    assert!(matches!(
        b.delete_run(id),
        Err(StoreError::RunLocked { .. })
    ));
    drop(held);
    drop(b.lock_run(id).unwrap());
    b.delete_run(id).unwrap();
    assert!(matches!(a.run(id), Err(StoreError::NoSuchRun(_))));
}

/// A database from a newer netsonde is refused and left as it is; a server
/// that is not there fails in one line, with no password in it.
#[test]
fn newer_schemas_and_absent_servers_are_refused() {
    let Some(pg) = Postgres::start("newer_schemas_and_absent_servers_are_refused") else {
        return;
    };
    drop(open(&pg.url));
    let mut raw = postgres::Client::connect(&pg.url, postgres::NoTls).unwrap();
    raw.batch_execute("UPDATE netsonde_schema SET version = 99")
        .unwrap();
    let err = Store::open_at(&pg.url.parse().unwrap()).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found: 99, .. }),
        "{err}"
    );
    let v: i64 = raw
        .query_one("SELECT version FROM netsonde_schema", &[])
        .unwrap()
        .get(0);
    assert_eq!(v, 99);

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone: Location = format!("postgres://ns:hunter2@127.0.0.1:{port}/x")
        .parse()
        .unwrap();
    let err = Store::open_at(&gone).unwrap_err();
    let text = format!("{err}: {:?}", std::error::Error::source(&err));
    assert!(matches!(err, StoreError::Connect { .. }), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}
