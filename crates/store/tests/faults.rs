//! A write that fails part-way leaves nothing behind: every multi-row write is one
//! transaction.

use netsonde_model::spec::FlowDir;
use netsonde_model::units::{BitRate, Bytes};
use netsonde_store::{PointStatus, Store, StoreError};

use crate::util::{metrics, new_run, planned, sample, two_reps, TempDb};

/// Nothing of the failed write is visible: no repetitions, no samples, still pending.
fn assert_point_untouched(db: &TempDb, store: &Store, id: i64) {
    assert_eq!(db.count("reps", id), 0);
    assert_eq!(db.count("samples", id), 0);
    let p = &store.points(id).unwrap()[0];
    assert_eq!(p.status, PointStatus::Pending);
    assert!(p.reps.is_empty());
    assert_eq!(p.summary_json, None);
    assert_eq!(store.pending_points(id).unwrap(), vec![0]);
}

#[test]
fn sql_failure_in_a_later_sample_rolls_back_the_whole_point() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let id = store.create_run(&new_run("fault"), &planned(1)).unwrap();
    let mut reps = two_reps();
    // SQLite stores NaN as NULL, which the NOT NULL rate_bps column refuses: the
    // statement fails inside the transaction, after rep 0 and its samples went in.
    let mut bad = sample(5, FlowDir::Up);
    bad.rate = BitRate(f64::NAN);
    reps[1].2 = vec![sample(4, FlowDir::Up), bad];
    let err = store.record_point(id, 0, &reps, "{}").unwrap_err();
    assert!(matches!(err, StoreError::Sql(_)), "{err:?}");
    assert_point_untouched(&db, &store, id);
    // The connection is still usable afterwards.
    store.record_point(id, 0, &two_reps(), "{}").unwrap();
    assert_eq!(db.count("samples", id), 3);
}

#[test]
fn refused_value_in_a_later_rep_rolls_back_the_whole_point() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let id = store.create_run(&new_run("fault"), &planned(1)).unwrap();

    // A metric that is not finite cannot be stored: Metrics leaves it out.
    assert!(metrics(&[("goodput", f64::INFINITY)]).is_empty());

    let mut reps = two_reps();
    reps[1].2 = vec![sample(0, FlowDir::Down)];
    reps[1].2[0].bytes = Bytes(u64::MAX);
    let err = store.record_point(id, 0, &reps, "{}").unwrap_err();
    assert!(
        matches!(err, StoreError::TooLarge { what: "bytes", .. }),
        "{err:?}"
    );
    assert_point_untouched(&db, &store, id);

    let mut reps = two_reps();
    reps[1].0 = "{not json".into();
    assert!(matches!(
        store.record_point(id, 0, &reps, "{}"),
        Err(StoreError::Json(_))
    ));
    assert_point_untouched(&db, &store, id);
}

#[test]
fn failed_rerecord_keeps_the_earlier_attempt() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let id = store.create_run(&new_run("keep"), &planned(1)).unwrap();
    store
        .record_point(id, 0, &two_reps(), r#"{"first":true}"#)
        .unwrap();
    let before = store.points(id).unwrap();
    let mut reps = two_reps();
    reps[1].2 = vec![sample(0, FlowDir::Up)];
    reps[1].2[0].rate = BitRate(f64::NAN);
    assert!(store.record_point(id, 0, &reps, "{}").is_err());
    assert_eq!(store.points(id).unwrap(), before);
    assert_eq!(db.count("samples", id), 3);
}

#[test]
fn create_run_with_a_duplicate_point_leaves_no_run() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let mut plan = planned(3);
    plan[2].idx = 0;
    let err = store.create_run(&new_run("dup"), &plan).unwrap_err();
    assert!(matches!(err, StoreError::Sql(_)), "{err:?}");
    assert!(store.runs().unwrap().is_empty());
    let points: i64 = db
        .raw()
        .query_row("SELECT count(*) FROM points", [], |r| r.get(0))
        .unwrap();
    assert_eq!(points, 0);
}
