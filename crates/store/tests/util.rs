//! Temp files and builders shared by the tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use netsonde_model::result::IntervalRecord;
use netsonde_model::spec::FlowDir;
use netsonde_model::sweep::{Metric, Metrics};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use netsonde_store::{NewRun, PlannedPoint};
use rusqlite::Connection;

/// A database path in a fresh directory (one level down, so `Store::open` has a
/// parent to create), removed with everything in it on drop.
pub struct TempDb {
    dir: PathBuf,
    pub path: PathBuf,
}

impl TempDb {
    pub fn new() -> TempDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("netsonde-store-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("data").join("netsonde.db");
        TempDb { dir, path }
    }

    /// A raw connection, for looking under the store's API.
    pub fn raw(&self) -> Connection {
        Connection::open(&self.path).expect("open raw connection")
    }

    /// Rows of `table` belonging to run `run`.
    pub fn count(&self, table: &str, run: i64) -> i64 {
        self.raw()
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE run_id = ?1"),
                [run],
                |r| r.get(0),
            )
            .expect("count rows")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn new_run(label: &str) -> NewRun {
    NewRun {
        label: label.into(),
        tool_version: "0.1.0".into(),
        command: format!("netsonde sweep --label {label} --streams 1,2,4"),
        plan_json: r#"{"axes":[{"name":"streams","values":[1,2,4]}],"reps":2}"#.into(),
        client_host_json: r#"{"hostname":"alpha","cores":8}"#.into(),
        created_at: 1_767_225_600,
    }
}

/// `n` points executed in reverse order of their index.
pub fn planned(n: u32) -> Vec<PlannedPoint> {
    (0..n)
        .map(|idx| PlannedPoint {
            idx,
            run_order: n - 1 - idx,
            config_json: format!(r#"{{"test":"tcp-stream","streams":{}}}"#, 1 << idx),
            axes_json: format!(r#"{{"streams":{}}}"#, 1 << idx),
        })
        .collect()
}

pub fn sample(seq: u64, dir: FlowDir) -> IntervalRecord {
    IntervalRecord {
        start: Nanos(seq * 1_000_000_000),
        end: Nanos((seq + 1) * 1_000_000_000),
        dir,
        bytes: Bytes(1_175_000_000 + seq),
        rate: BitRate(9.4e9 + seq as f64),
        messages: 17_930 + seq,
        transactions: seq,
        udp: None,
        subflows: None,
    }
}

pub fn metrics(pairs: &[(&str, f64)]) -> Metrics {
    pairs
        .iter()
        .map(|(k, v)| (Metric::from_name(k).expect("a metric's name"), *v))
        .collect()
}

/// Two repetitions: the first with up and down samples, the second with none.
pub fn two_reps() -> Vec<(String, Metrics, Vec<IntervalRecord>)> {
    vec![
        (
            r#"{"schema_version":1,"rep":0}"#.into(),
            metrics(&[("goodput", 9.4e9), ("retransmits", 3.0)]),
            vec![
                sample(0, FlowDir::Up),
                sample(0, FlowDir::Down),
                sample(1, FlowDir::Up),
            ],
        ),
        (
            r#"{"schema_version":1,"rep":1}"#.into(),
            metrics(&[("goodput", 9.41e9), ("latency_p99", 123_456.0)]),
            vec![],
        ),
    ]
}
