//! What goes in comes back out, and deletes cascade.

use netsonde_store::{PointRow, PointStatus, RepRow, RunStatus, Store, StoreError};

use crate::util::{new_run, planned, two_reps, TempDb};

#[test]
fn record_point_reads_back_equal_and_delete_cascades() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let plan = planned(3);
    let id = store.create_run(&new_run("rt"), &plan).unwrap();
    // Pending points come back in run order, which is the reverse of idx here.
    assert_eq!(store.pending_points(id).unwrap(), vec![2, 1, 0]);

    let run = store.run(id).unwrap();
    assert_eq!(run.status, RunStatus::Running);
    assert_eq!(run.finished_at, None);
    assert_eq!(run.server_host_json, None);
    assert_eq!((run.points_total, run.points_done), (3, 0));
    assert_eq!(run.plan_json, new_run("rt").plan_json);

    store.set_server_host(id, r#"{"hostname":"beta"}"#).unwrap();
    let reps = two_reps();
    store
        .record_point(id, 2, &reps, r#"{"goodput":{"mean":9.405e9}}"#)
        .unwrap();
    assert_eq!(store.pending_points(id).unwrap(), vec![1, 0]);

    let points = store.points(id).unwrap();
    assert_eq!(points.len(), 3);
    assert_eq!(
        points[2],
        PointRow {
            idx: 2,
            run_order: 0,
            config_json: plan[2].config_json.clone(),
            axes_json: plan[2].axes_json.clone(),
            status: PointStatus::Done,
            reason: None,
            summary_json: Some(r#"{"goodput":{"mean":9.405e9}}"#.into()),
            reps: vec![
                RepRow {
                    rep: 0,
                    report_json: reps[0].0.clone(),
                    metrics: reps[0].1.clone(),
                },
                RepRow {
                    rep: 1,
                    report_json: reps[1].0.clone(),
                    metrics: reps[1].1.clone(),
                },
            ],
        }
    );
    assert_eq!(points[0].status, PointStatus::Pending);
    assert!(points[0].reps.is_empty());
    assert_eq!(points[0].summary_json, None);
    assert_eq!(store.samples(id, 2, 0).unwrap(), reps[0].2);
    assert!(store.samples(id, 2, 1).unwrap().is_empty());

    store
        .skip_point(id, 1, PointStatus::Skipped, "window above rmem_max")
        .unwrap();
    store.record_point(id, 0, &two_reps()[1..], "{}").unwrap();
    assert!(store.pending_points(id).unwrap().is_empty());
    store
        .finish_run(id, RunStatus::Complete, 1_767_229_200)
        .unwrap();
    let run = store.run(id).unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.finished_at, Some(1_767_229_200));
    assert_eq!(
        run.server_host_json.as_deref(),
        Some(r#"{"hostname":"beta"}"#)
    );
    assert_eq!((run.points_total, run.points_done), (3, 2));
    let skipped = &store.points(id).unwrap()[1];
    assert_eq!(skipped.status, PointStatus::Skipped);
    assert_eq!(skipped.reason.as_deref(), Some("window above rmem_max"));

    assert_eq!(db.count("samples", id), 3);
    assert_eq!(db.count("reps", id), 3);
    store.delete_run(id).unwrap();
    for table in ["points", "reps", "samples"] {
        assert_eq!(db.count(table, id), 0, "{table} left behind");
    }
    assert!(matches!(store.run(id), Err(StoreError::NoSuchRun(x)) if x == id));
    assert!(matches!(
        store.delete_run(id),
        Err(StoreError::NoSuchRun(_))
    ));
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn runs_are_listed_newest_first_and_ids_are_not_reused() {
    let mut store = Store::open_in_memory().unwrap();
    let a = store.create_run(&new_run("a"), &planned(1)).unwrap();
    let b = store.create_run(&new_run("b"), &planned(2)).unwrap();
    let labels: Vec<_> = store.runs().unwrap().into_iter().map(|r| r.label).collect();
    assert_eq!(labels, ["b", "a"]);
    assert_eq!(store.latest_run().unwrap(), Some(b));
    store.delete_run(b).unwrap();
    assert_eq!(store.latest_run().unwrap(), Some(a));
    let c = store.create_run(&new_run("c"), &[]).unwrap();
    assert!(c > b, "id {c} reuses a deleted run's id {b}");
    let runs = store.runs().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[1].points_total, runs[0].points_total), (1, 0));
}

#[test]
fn recording_a_point_again_replaces_the_earlier_attempt() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_run(&new_run("again"), &planned(1)).unwrap();
    store.record_point(id, 0, &two_reps(), "{}").unwrap();
    store
        .record_point(id, 0, &two_reps()[1..], r#"{"n":1}"#)
        .unwrap();
    let p = &store.points(id).unwrap()[0];
    assert_eq!(p.reps.len(), 1);
    assert_eq!(p.summary_json.as_deref(), Some(r#"{"n":1}"#));
    assert!(store.samples(id, 0, 0).unwrap().is_empty());
    assert!(matches!(
        store.samples(id, 0, 1),
        Err(StoreError::NoSuchRep { rep: 1, .. })
    ));
}

#[test]
fn missing_runs_points_and_reps_are_named() {
    let mut store = Store::open_in_memory().unwrap();
    let id = store.create_run(&new_run("x"), &planned(1)).unwrap();
    let missing = id + 41;
    assert!(matches!(store.run(missing), Err(StoreError::NoSuchRun(m)) if m == missing));
    assert!(matches!(
        store.points(missing),
        Err(StoreError::NoSuchRun(_))
    ));
    assert!(matches!(
        store.pending_points(missing),
        Err(StoreError::NoSuchRun(_))
    ));
    assert!(matches!(
        store.record_point(missing, 0, &two_reps(), "{}"),
        Err(StoreError::NoSuchRun(_))
    ));
    assert!(matches!(
        store.record_point(id, 7, &two_reps(), "{}"),
        Err(StoreError::NoSuchPoint { idx: 7, .. })
    ));
    assert!(matches!(
        store.samples(id, 7, 0),
        Err(StoreError::NoSuchPoint { idx: 7, .. })
    ));
    assert!(matches!(
        store.samples(id, 0, 0),
        Err(StoreError::NoSuchRep { idx: 0, rep: 0, .. })
    ));
    assert!(matches!(
        store.set_server_host(missing, "{}"),
        Err(StoreError::NoSuchRun(_))
    ));
    assert!(matches!(
        store.finish_run(missing, RunStatus::Failed, 0),
        Err(StoreError::NoSuchRun(_))
    ));
    assert!(matches!(
        store.skip_point(id, 0, PointStatus::Done, "no"),
        Err(StoreError::NotASkipStatus(PointStatus::Done))
    ));
}

#[test]
fn interleaved_reps_commit_one_at_a_time_and_complete_later() {
    use netsonde_model::sweep::Metrics;
    let mut store = netsonde_store::Store::open_in_memory().unwrap();
    let run = store
        .create_run(
            &netsonde_store::NewRun {
                label: "l".into(),
                tool_version: "0".into(),
                command: "c".into(),
                plan_json: "{}".into(),
                client_host_json: "{}".into(),
                created_at: 1,
            },
            &[netsonde_store::PlannedPoint {
                idx: 0,
                run_order: 0,
                config_json: "{}".into(),
                axes_json: "{}".into(),
            }],
        )
        .unwrap();
    let mut m = Metrics::default();
    m.set(netsonde_model::sweep::Metric::Goodput, 1.0);
    store
        .record_rep(run, 0, 0, &("{}".into(), m.clone(), vec![]))
        .unwrap();
    store
        .record_rep(run, 0, 1, &("{}".into(), m.clone(), vec![]))
        .unwrap();
    // Still pending, with both reps kept.
    assert_eq!(store.pending_points(run).unwrap(), vec![0]);
    assert_eq!(store.points(run).unwrap()[0].reps.len(), 2);
    // Re-recording a rep replaces it rather than adding one.
    store
        .record_rep(run, 0, 1, &("{}".into(), m, vec![]))
        .unwrap();
    assert_eq!(store.points(run).unwrap()[0].reps.len(), 2);
    store.complete_point(run, 0, "{\"reps\":2}").unwrap();
    assert!(store.pending_points(run).unwrap().is_empty());
    assert!(store
        .record_rep(run, 9, 0, &("{}".into(), Default::default(), vec![]))
        .is_err());
}

/// A failed attempt is kept beside the repetitions already measured: nothing is
/// deleted, the point stays pending with the failure as its reason.
#[test]
fn a_failure_keeps_every_measured_repetition_and_the_point_pending() {
    use netsonde_store::FailureKind;
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let id = store.create_run(&new_run("f"), &planned(2)).unwrap();
    let reps = two_reps();
    store.record_rep(id, 0, 0, &reps[0]).unwrap();
    store.record_rep(id, 0, 1, &reps[1]).unwrap();
    store
        .record_failure(id, 0, 2, 100, FailureKind::Busy, "server busy")
        .unwrap();
    store
        .record_failure(id, 0, 2, 101, FailureKind::Failed, "connection refused")
        .unwrap();
    let p = &store.points(id).unwrap()[0];
    assert_eq!(p.status, PointStatus::Pending);
    assert_eq!(p.reps.len(), 2, "the measured repetitions are kept");
    assert_eq!(p.reason.as_deref(), Some("failed: connection refused"));
    let f = store.failures(id).unwrap();
    assert_eq!(f.len(), 2);
    assert_eq!((f[0].idx, f[0].rep, f[0].at), (0, 2, 100));
    assert_eq!(f[0].kind, FailureKind::Busy);
    assert_eq!(f[1].reason, "connection refused");
    // Skipping a point with measurements is refused, and deletes nothing.
    assert!(matches!(
        store.skip_point(id, 0, PointStatus::Failed, "no"),
        Err(StoreError::HasReps { reps: 2, .. })
    ));
    assert_eq!(store.points(id).unwrap()[0].reps.len(), 2);
    // Completing the point clears the reason; deleting the run takes the failures.
    store.record_rep(id, 0, 2, &reps[0]).unwrap();
    store.complete_point(id, 0, "{}").unwrap();
    assert_eq!(store.points(id).unwrap()[0].reason, None);
    store.delete_run(id).unwrap();
    assert_eq!(db.count("failures", id), 0);
}

/// One process holds a run; another (here another descriptor) is refused until
/// the first lets go.
#[test]
fn a_run_is_locked_by_the_process_executing_it() {
    let db = TempDb::new();
    let mut store = Store::open(&db.path).unwrap();
    let id = store.create_run(&new_run("l"), &planned(1)).unwrap();
    let other = Store::open(&db.path).unwrap();
    let held = store.lock_run(id).unwrap();
    match other.lock_run(id) {
        Err(StoreError::RunLocked { run, .. }) => assert_eq!(run, id),
        r => panic!("expected RunLocked, got {r:?}"),
    }
    assert!(matches!(
        store.delete_run(id),
        Err(StoreError::RunLocked { .. })
    ));
    drop(held);
    let again = other.lock_run(id).unwrap();
    drop(again);
    assert!(matches!(
        store.lock_run(999),
        Err(StoreError::NoSuchRun(999))
    ));
    // In memory there is no other process to exclude.
    let mut mem = Store::open_in_memory().unwrap();
    let r = mem.create_run(&new_run("m"), &planned(1)).unwrap();
    let _a = mem.lock_run(r).unwrap();
    let _b = mem.lock_run(r).unwrap();
}
