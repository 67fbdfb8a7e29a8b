//! `netsonde dashboard`: `netsonde_serve::dashboard`'s pages over the store,
//! read-only, on 127.0.0.1 unless told otherwise, until SIGINT or SIGTERM.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use netsonde_args::DashboardArgs;
use netsonde_store::Location;

use crate::runs;

/// Serves the dashboard until SIGINT or SIGTERM.
pub fn run(a: DashboardArgs) -> anyhow::Result<()> {
    let db = a.store.db.clone().unwrap_or_else(Location::default_file);
    // Said at once when the store cannot be read, not on the first request.
    runs::open_store_read_only(Some(&db))?;
    if let Location::File(path) = &db {
        if !path.exists() {
            eprintln!(
                "netsonde dashboard: no store at {} yet: its pages stay empty until a run \
                 is stored there",
                path.display()
            );
        }
    }
    let bound = netsonde_serve::serve_dashboard(a.listen, db.clone(), a.window as usize)?;
    eprintln!("netsonde dashboard: http://{bound}/ (read-only, over {db})");
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing the signal handler")?;
    }
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(())
}
