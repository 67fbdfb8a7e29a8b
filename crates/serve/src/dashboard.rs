//! `netsonde dashboard`'s routes: each page read from a store opened
//! read-only for its request (so several dashboards, and the monitors writing
//! the store, go on beside each other), on a blocking thread of the HTTP
//! server, rendered by `netsonde_report::dashboard`. A request the pages
//! cannot answer gets 400 or 404 with why in a line, never its input echoed.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::StatusCode;
use netsonde_report::dashboard as pages;
use netsonde_store::{Location, RunId, Store};

use crate::http::{serve, Get, Handler, Page, ServeError};

/// Rounds a pair's page shows.
pub const HISTORY: usize = 100;

/// Serves the dashboard over the store at `db`, each pair judged against
/// `window` past rounds, at `addr` until the process ends; returns the
/// address bound.
pub fn serve_dashboard(
    addr: SocketAddr,
    db: Location,
    window: usize,
) -> Result<SocketAddr, ServeError> {
    let handler: Handler = Arc::new(move |get: &Get| {
        answer(&db, window, get).unwrap_or_else(|e| match e {
            Error::Bad(why) => Page::bad_request(why),
            Error::NotFound => Page::not_found(),
            Error::Store(why) => Page::text(StatusCode::SERVICE_UNAVAILABLE, why),
        })
    });
    serve(addr, "--listen", handler)
}

/// Why a page is not there.
enum Error {
    /// The request is wrong: why.
    Bad(&'static str),
    /// Nothing at that path.
    NotFound,
    /// The store could not be read: why, in a line.
    Store(String),
}

impl<E: std::error::Error> From<E> for Error {
    fn from(e: E) -> Error {
        let mut why = e.to_string();
        let mut src = e.source();
        while let Some(s) = src {
            why = format!("{why}: {s}");
            src = s.source();
        }
        Error::Store(why.replace('\n', " "))
    }
}

fn html(title: &str, body: &str, refresh: bool) -> Page {
    Page {
        status: StatusCode::OK,
        content_type: "text/html; charset=utf-8",
        body: pages::page(title, body, refresh),
    }
}

/// A run id as a page names it: a number of a stored run.
fn run_param(store: &Store, get: &Get, name: &str) -> Result<Option<RunId>, Error> {
    let Some(v) = get.param(name).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    let id: RunId = v
        .trim()
        .parse()
        .map_err(|_| Error::Bad("a run is named by its number"))?;
    store
        .run(id)
        .map_err(|_| Error::Bad("no run of that number is stored"))?;
    Ok(Some(id))
}

/// The page `get` asks for.
fn answer(db: &Location, window: usize, get: &Get) -> Result<Page, Error> {
    let store = netsonde_run::open_store_read_only(db)?;
    Ok(match get.path.as_str() {
        "/" => {
            let mut body = String::new();
            for label in netsonde_run::monitor::monitors(&store)? {
                let l = netsonde_run::monitor::latest(&store, &label, window)?;
                body.push_str(&pages::grids(&label, &l.pairs, l.last_round_unix_s));
            }
            if body.is_empty() {
                body = "<p>No mesh or monitor run is stored yet.</p>".into();
            }
            html("pairs", &body, true)
        }
        "/agents" => {
            let mut body = String::new();
            for label in netsonde_run::monitor::monitors(&store)? {
                let l = netsonde_run::monitor::latest(&store, &label, window)?;
                body.push_str(&pages::agents(&label, &l.agents));
            }
            if body.is_empty() {
                body = "<p>No mesh or monitor run is stored yet.</p>".into();
            }
            html("agents", &body, true)
        }
        "/pair" => {
            let (Some(label), Some(src), Some(dst), Some(test)) = (
                get.param("monitor"),
                get.param("src"),
                get.param("dst"),
                get.param("test"),
            ) else {
                return Err(Error::Bad(
                    "a pair's page needs monitor, src, dst and test in its query",
                ));
            };
            let h = netsonde_run::monitor::history(
                &store,
                &label,
                (&src, &dst, &test),
                window,
                HISTORY,
            )?;
            if h.is_empty() {
                return Err(Error::NotFound);
            }
            html(
                &format!("{src} → {dst}: {test} ({label})"),
                &pages::pair_history(&h),
                true,
            )
        }
        "/runs" => {
            let rows: Vec<pages::RunLine> = store
                .runs()?
                .into_iter()
                .map(|r| pages::RunLine {
                    id: r.id,
                    at: r.created_at,
                    label: r.label,
                    status: r.status.to_string(),
                    done: r.points_done as u64,
                    total: r.points_total as u64,
                })
                .collect();
            html("runs", &pages::runs(&rows), true)
        }
        "/compare" => {
            let (a, b) = (get.param("a"), get.param("b"));
            let result = match (run_param(&store, get, "a")?, run_param(&store, get, "b")?) {
                (Some(ra), Some(rb)) => Some(
                    netsonde_run::compare::compare(&store, ra, rb, None).map_err(|e| e.to_string()),
                ),
                _ => None,
            };
            let shown = result.as_ref().map(|r| r.as_ref().map_err(String::as_str));
            html(
                "compare",
                &pages::compare(a.as_deref(), b.as_deref(), shown),
                false,
            )
        }
        p => {
            let Some(n) = p.strip_prefix("/runs/") else {
                return Err(Error::NotFound);
            };
            let id: RunId = n
                .parse()
                .map_err(|_| Error::Bad("a run is named by its number"))?;
            if store.run(id).is_err() {
                return Err(Error::NotFound);
            }
            Page {
                status: StatusCode::OK,
                content_type: "text/html; charset=utf-8",
                body: netsonde_report::html::render(&netsonde_run::view(&store, id)?),
            }
        }
    })
}
