//! A run copied whole from one store into another: how a monitor keeps a round
//! it measured while its store was out of reach (in a private in-memory
//! store) and writes it once the store is back.

use crate::db::Tx;
use crate::value::{values, Row, Value};
use crate::{RunId, Store, StoreError};

/// Each table of a run and its columns but `run_id`, in the order they are
/// copied (a row's parents first).
const TABLES: [(&str, &str); 4] = [
    (
        "points",
        "idx, run_order, config_json, axes_json, status, reason, summary_json",
    ),
    ("reps", "idx, rep, report_json, metrics_json"),
    (
        "samples",
        "idx, rep, seq, start_ns, end_ns, dir, bytes, rate_bps, messages, transactions",
    ),
    ("failures", "idx, rep, at, kind, reason"),
];

const RUN: &str = "created_at, tool_version, label, command, plan_json, client_host_json, \
                   server_host_json, status, finished_at, link_json";

/// `?1, ?2, ... ?n`.
fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn columns(list: &str) -> usize {
    list.split(',').count()
}

impl Store {
    /// Copies run `id` of `from`, with its points, repetitions, samples and
    /// failed attempts, into this store as a new run in one transaction;
    /// returns its id here.
    pub fn import_run(&mut self, from: &Store, id: RunId) -> Result<RunId, StoreError> {
        let (run, tables) = from.conn.borrow_mut().read(|tx| {
            let run = tx
                .query_opt(
                    &format!("SELECT {RUN} FROM runs WHERE id = ?1"),
                    &values![id],
                )?
                .ok_or(StoreError::NoSuchRun(id))?;
            let tables = TABLES
                .iter()
                .map(|(table, cols)| {
                    tx.query(
                        &format!("SELECT {cols} FROM {table} WHERE run_id = ?1"),
                        &values![id],
                    )
                })
                .collect::<Result<Vec<Vec<Row>>, StoreError>>()?;
            Ok((run, tables))
        })?;
        self.conn.get_mut().write(|tx| insert(tx, run, tables))
    }
}

fn insert(tx: &mut Tx<'_>, run: Row, tables: Vec<Vec<Row>>) -> Result<RunId, StoreError> {
    let new = tx
        .query_one(
            &format!(
                "INSERT INTO runs ({RUN}) VALUES ({}) RETURNING id",
                placeholders(columns(RUN))
            ),
            &run.0,
        )?
        .int(0)?;
    for ((table, cols), rows) in TABLES.iter().zip(tables) {
        tx.execute_each(
            &format!(
                "INSERT INTO {table} (run_id, {cols}) VALUES ({})",
                placeholders(columns(cols) + 1)
            ),
            rows.into_iter().map(|r| {
                let mut v = Vec::with_capacity(r.0.len() + 1);
                v.push(Value::Int(new));
                v.extend(r.0);
                Ok(v)
            }),
        )?;
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewRun, PlannedPoint};

    #[test]
    fn a_run_is_copied_whole_under_a_new_id() {
        let mut a = Store::open_in_memory().unwrap();
        let mut b = Store::open_in_memory().unwrap();
        let run = NewRun {
            created_at: 7,
            tool_version: "t".into(),
            label: "monitor".into(),
            command: "netsonde monitor".into(),
            plan_json: "{}".into(),
            client_host_json: "{}".into(),
        };
        let point = PlannedPoint {
            idx: 0,
            run_order: 0,
            config_json: "{}".into(),
            axes_json: r#"{"src":"h1"}"#.into(),
        };
        // An earlier run in the target, so the ids differ.
        b.create_run(&run, &[]).unwrap();
        let id = a.create_run(&run, &[point]).unwrap();
        a.record_failure(id, 0, 0, 9, crate::FailureKind::Failed, "cut short")
            .unwrap();
        let copied = b.import_run(&a, id).unwrap();
        assert_ne!(copied, id);
        let (ra, rb) = (a.run(id).unwrap(), b.run(copied).unwrap());
        assert_eq!(
            (ra.label, ra.created_at, ra.status),
            (rb.label, rb.created_at, rb.status)
        );
        let (pa, pb) = (a.points(id).unwrap(), b.points(copied).unwrap());
        assert_eq!(pa.len(), 1);
        assert_eq!(pa[0].axes_json, pb[0].axes_json);
        assert_eq!(pa[0].reason, pb[0].reason);
        assert_eq!(b.failures(copied).unwrap().len(), 1);
        assert!(matches!(
            b.import_run(&a, 99),
            Err(StoreError::NoSuchRun(99))
        ));
    }
}
