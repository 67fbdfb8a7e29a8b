//! `netsonde dashboard`: `netsonde_report::dashboard`'s pages over a store
//! opened read-only for each request (so several dashboards, and the monitors
//! writing the store, go on beside each other), served by the bounded server
//! of `--metrics` on 127.0.0.1 unless told otherwise. GET only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use hyper::StatusCode;
use netsonde_args::DashboardArgs;
use netsonde_report::dashboard as pages;
use netsonde_store::{Location, Store};

use crate::metrics_http::{serve_pages, Page};
use crate::runs;

/// Rounds a pair's page shows.
const HISTORY: usize = 100;

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
    let window = a.window as usize;
    let at = db.clone();
    let handler = Arc::new(move |path: &str, query: Option<&str>| {
        answer(&at, window, path, query).unwrap_or_else(|e| Page {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            content_type: "text/plain; charset=utf-8",
            body: format!("{}\n", crate::one_line(&e)),
        })
    });
    let bound = serve_pages(a.listen, "--listen", handler)?;
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

fn html(title: &str, body: &str) -> Page {
    Page {
        status: StatusCode::OK,
        content_type: "text/html; charset=utf-8",
        body: pages::page(title, body),
    }
}

/// A query's value by name.
fn param(query: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The page at `path`.
fn answer(db: &Location, window: usize, path: &str, query: Option<&str>) -> anyhow::Result<Page> {
    let store = runs::open_store_read_only(Some(db))?;
    Ok(match path {
        "/" => {
            let mut body = String::new();
            for label in netsonde_run::monitor::monitors(&store)? {
                let (pairs, last) = netsonde_run::monitor::latest(&store, &label, window)?;
                body.push_str(&pages::grids(&label, &pairs, last));
            }
            if body.is_empty() {
                body = "<p>No mesh or monitor run is stored yet.</p>".into();
            }
            html("pairs", &body)
        }
        "/pair" => {
            let (Some(label), Some(src), Some(dst), Some(test)) = (
                param(query, "monitor"),
                param(query, "src"),
                param(query, "dst"),
                param(query, "test"),
            ) else {
                return Ok(Page::not_found());
            };
            let h = netsonde_run::monitor::history(
                &store,
                &label,
                (&src, &dst, &test),
                window,
                HISTORY,
            )?;
            html(
                &format!("{src} → {dst}: {test} ({label})"),
                &pages::pair_history(&h),
            )
        }
        "/runs" => {
            let rows: Vec<_> = store
                .runs()?
                .into_iter()
                .map(|r| {
                    (
                        r.id,
                        r.created_at,
                        r.label,
                        r.status.to_string(),
                        r.points_done as u64,
                        r.points_total as u64,
                    )
                })
                .collect();
            html("runs", &pages::runs(&rows))
        }
        "/compare" => {
            let (a, b) = (param(query, "a"), param(query, "b"));
            let result = match (&a, &b) {
                (Some(a), Some(b)) => Some(compare(&store, a, b)?),
                _ => None,
            };
            html(
                "compare",
                &pages::compare(a.as_deref(), b.as_deref(), result.as_deref()),
            )
        }
        p => match p.strip_prefix("/runs/").and_then(|n| n.parse().ok()) {
            Some(id) if store.run(id).is_ok() => Page {
                status: StatusCode::OK,
                content_type: "text/html; charset=utf-8",
                body: netsonde_report::html::render(&runs::view(&store, id)?),
            },
            _ => Page::not_found(),
        },
    })
}

/// `compare A B` as its text.
fn compare(store: &Store, a: &str, b: &str) -> anyhow::Result<String> {
    let ra = runs::run_id(store, Some(a))?;
    let rb = runs::run_id(store, Some(b))?;
    Ok(runs::compare(store, ra, rb, None)?.0)
}
