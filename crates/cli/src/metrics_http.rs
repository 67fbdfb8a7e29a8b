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
//!   when descriptors do.

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

type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// Serves `render()` on `GET /metrics` at `addr` until the process ends;
/// returns the address bound. Anything else is 404.
pub(crate) fn serve(addr: SocketAddr, render: Render) -> anyhow::Result<SocketAddr> {
    let listener =
        std::net::TcpListener::bind(addr).with_context(|| format!("--metrics {addr}"))?;
    listener
        .set_nonblocking(true)
        .with_context(|| format!("--metrics {addr}"))?;
    let bound = listener.local_addr().context("--metrics")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("--metrics: starting its runtime")?;
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || rt.block_on(accept_loop(listener, render)))
        .context("--metrics: starting its thread")?;
    Ok(bound)
}

/// Accepts for ever, keeping at most [`MAX_CONNECTIONS`] open.
async fn accept_loop(listener: std::net::TcpListener, render: Render) {
    let listener = match tokio::net::TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("netsonde: --metrics: {e}");
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
                let render = render.clone();
                let task = tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                        let response = respond(&req, &render);
                        async move { Ok::<_, Infallible>(response) }
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
                    eprintln!("netsonde: --metrics: accepting a connection failed: {e} (retrying)");
                    logged = Some(Instant::now());
                }
                tokio::time::sleep(ACCEPT_PAUSE).await;
            }
        }
    }
}

/// The metrics on `GET /metrics`, 404 elsewhere.
fn respond(req: &Request<Incoming>, render: &Render) -> Response<Full<Bytes>> {
    let mut r = Response::builder();
    let body = if req.method() == Method::GET && req.uri().path() == "/metrics" {
        r = r.header(
            "Content-Type",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        );
        render()
    } else {
        r = r.status(StatusCode::NOT_FOUND);
        "not found\n".into()
    };
    r.body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
