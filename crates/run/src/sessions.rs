//! Single tests into the store: a client's test, and each iperf3 client's
//! session a server ran, stored by a thread of its own (so a session's slot is
//! free as soon as its results are out), each as a complete run of one point.

use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use netsonde_driver::server::SessionSink;
use netsonde_model::result::TestReport;
use netsonde_store::{Location, RunId};

use crate::error::{open_store, OpenError};
use crate::{PipelineError, RunMeta};

/// How many finished sessions may wait for the store.
const QUEUED: usize = 64;

/// Why a test could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreTestError {
    /// The store could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Storing it failed.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

/// Stores one test's report as a complete run of one point in `db`; `command`
/// is the command line that ran it.
pub fn store_test(
    db: &Location,
    label: String,
    report: &TestReport,
    (host, port): (Option<String>, u16),
    command: String,
) -> Result<RunId, StoreTestError> {
    let mut store = open_store(db)?;
    let meta = RunMeta {
        label,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command,
        client_host_json: serde_json::to_string(&report.client.host).expect("host facts serialize"),
        created_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64),
        link_json: report
            .link
            .as_ref()
            .map(|l| serde_json::to_string(l).expect("a link record serializes")),
    };
    Ok(crate::record_single(&mut store, &meta, report, host, port)?)
}

/// Where a server's iperf3 sessions go: a thread of their own finishes each
/// (verdict, warnings) and stores it in `db`, saying so on standard error, as
/// the server's log does. The receiver hears once every queued session is
/// stored, after the sink is dropped.
pub fn iperf3_storer(db: Location, port: u16, command: String) -> (SessionSink, Receiver<()>) {
    let (tx, rx) = mpsc::sync_channel::<TestReport>(QUEUED);
    let (done, stored_all) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        for mut report in rx {
            netsonde_analysis::finish(&mut report, None);
            let label = format!(
                "iperf3 client: {} {}",
                report.spec.test,
                report.spec.iperf3_flags()
            );
            match store_test(&db, label, &report, (None, port), command.clone()) {
                Ok(run) => {
                    eprintln!("netsonde server: the iperf3 session is stored as run {run} in {db}")
                }
                Err(e) => eprintln!(
                    "netsonde server: the iperf3 session is not stored: {}",
                    netsonde_sweep::exec::Cause::new(e)
                ),
            }
        }
        let _ = done.send(());
    });
    let tx = Mutex::new(tx);
    let sink = SessionSink(Arc::new(move |report: TestReport| {
        let queued = tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .try_send(report);
        if queued.is_err() {
            eprintln!(
                "netsonde server: an iperf3 session is not stored: {QUEUED} wait for the store already"
            );
        }
    }));
    (sink, stored_all)
}
