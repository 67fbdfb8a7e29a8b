//! `--metrics ADDR`: the OpenMetrics text (`netsonde_report::openmetrics`) on
//! `GET /metrics`, off the data path: each scrape reads the server's health and
//! the last results kept.
//!
//! Served by hyper on one thread of its own (a current-thread tokio runtime), and
//! bounded by design, since anyone who reaches the port can connect without the
//! key:
//! - at most [`MAX_CONNECTIONS`] connections at once, whose descriptors the
//!   server reserves beside its control connections; one accepted beyond that
//!   closes the oldest (an idle or slow client holds it; a scraper sends its
//!   request at once);
//! - a request's head must arrive within [`HEADER_TIMEOUT`], and a connection
//!   lasts at most [`CONNECTION_LIFETIME`];
//! - no thread per connection: a flood costs tasks on the one thread, never
//!   threads or memory beyond the connections kept;
//! - an accept that fails (EMFILE: the process is out of descriptors) is logged at
//!   most once a second and retried after a pause, so the endpoint comes back
//!   when descriptors do;
//! - a page is made off the async thread, on at most [`PAGE_THREADS`] blocking
//!   threads: a page reads the store, whose calls block (the PostgreSQL client
//!   starts a runtime of its own, which panics inside this one's thread).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};

/// Connections served at once; the descriptors they may hold are reserved in
/// the server's budget ([`crate::server_cmd`]).
pub(crate) const MAX_CONNECTIONS: usize = 16;

/// How long a client may take to send a request's head.
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest a connection is kept, requests and all.
pub(crate) const CONNECTION_LIFETIME: Duration = Duration::from_secs(10);

/// The pause after a failed accept before the next.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Threads that make pages at once (each blocking on the store while it reads);
/// more requests wait for one.
pub(crate) const PAGE_THREADS: usize = 2;

type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// A page: its status, content type and body.
pub(crate) struct Page {
    /// 200, 404, 400.
    pub status: StatusCode,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Page {
    /// 404, in a line.
    pub fn not_found() -> Page {
        Page {
            status: StatusCode::NOT_FOUND,
            content_type: "text/plain; charset=utf-8",
            body: "not found\n".into(),
        }
    }
}

/// What answers a `GET`: its path and query (undecoded) to a page.
pub(crate) type Handler = Arc<dyn Fn(&str, Option<&str>) -> Page + Send + Sync>;

/// Serves `render()` on `GET /metrics` at `addr` until the process ends;
/// returns the address bound. Anything else is 404.
pub(crate) fn serve(addr: SocketAddr, render: Render) -> anyhow::Result<SocketAddr> {
    let handler: Handler = Arc::new(move |path, _| {
        if path == "/metrics" {
            Page {
                status: StatusCode::OK,
                content_type: "application/openmetrics-text; version=1.0.0; charset=utf-8",
                body: render(),
            }
        } else {
            Page::not_found()
        }
    });
    serve_pages(addr, "--metrics", handler)
}

/// Serves `handler`'s pages on `GET` at `addr` until the process ends, bounded
/// as the module says; `what` names the option in errors. Returns the address
/// bound.
pub(crate) fn serve_pages(
    addr: SocketAddr,
    what: &'static str,
    handler: Handler,
) -> anyhow::Result<SocketAddr> {
    let listener = std::net::TcpListener::bind(addr).with_context(|| format!("{what} {addr}"))?;
    listener
        .set_nonblocking(true)
        .with_context(|| format!("{what} {addr}"))?;
    let bound = listener.local_addr().context(what)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(PAGE_THREADS)
        .thread_keep_alive(Duration::from_secs(5))
        .build()
        .with_context(|| format!("{what}: starting its runtime"))?;
    std::thread::Builder::new()
        .name("http".into())
        .spawn(move || rt.block_on(accept_loop(listener, handler, what)))
        .with_context(|| format!("{what}: starting its thread"))?;
    Ok(bound)
}

/// Accepts for ever, keeping at most [`MAX_CONNECTIONS`] open.
async fn accept_loop(listener: std::net::TcpListener, handler: Handler, what: &'static str) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("netsonde: {what}: {e}");
            return;
        }
    };
    let mut open: VecDeque<tokio::task::AbortHandle> = VecDeque::new();
    let mut logged: Option<Instant> = None;
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                open.retain(|h| !h.is_finished());
                if open.len() >= MAX_CONNECTIONS {
                    if let Some(oldest) = open.pop_front() {
                        oldest.abort();
                        // Let the runtime drop it (and close its socket) now,
                        // before the next accept.
                        tokio::task::yield_now().await;
                    }
                }
                let handler = handler.clone();
                let task = tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let handler = handler.clone();
                        async move { Ok::<_, Infallible>(respond(&req, handler).await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(HEADER_TIMEOUT)
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                    let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
                });
                open.push_back(task.abort_handle());
            }
            Err(e) => {
                if logged.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                    eprintln!("netsonde: {what}: accepting a connection failed: {e} (retrying)");
                    logged = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_PAUSE).await;
            }
        }
    }
}

/// The handler's page for a `GET`, made on a blocking thread; 405 for any
/// other method.
async fn respond(req: &Request<Incoming>, handler: Handler) -> Response<Full<Bytes>> {
    let page = if req.method() == Method::GET {
        let path = req.uri().path().to_string();
        let query = req.uri().query().map(str::to_string);
        tokio::task::spawn_blocking(move || handler(&path, query.as_deref()))
            .await
            .unwrap_or_else(|_| Page {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                content_type: "text/plain; charset=utf-8",
                body: "the page failed\n".into(),
            })
    } else {
        Page {
            status: StatusCode::METHOD_NOT_ALLOWED,
            content_type: "text/plain; charset=utf-8",
            body: "read-only: GET only\n".into(),
        }
    };
    Response::builder()
        .status(page.status)
        .header("Content-Type", page.content_type)
        .body(Full::new(Bytes::from(page.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
