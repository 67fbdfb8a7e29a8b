//! The HTTP server under `--metrics` and `netsonde dashboard`: `GET` pages,
//! each made by a [`Handler`] from the request's path, query and `Accept`.
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
//!   starts a runtime of its own, which panics inside this one's thread);
//! - every answer says what it is and how a browser may use it: `nosniff`, a
//!   content security policy that allows no script, no framing, no referrer,
//!   no caching.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};

/// Connections served at once; the descriptors they may hold are reserved in
/// the server's budget (`netsonde server` counts them).
pub const MAX_CONNECTIONS: usize = 16;

/// How long a client may take to send a request's head.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest a connection is kept, requests and all.
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(10);

/// The pause after a failed accept before the next.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Threads that make pages at once (each blocking on the store while it reads);
/// more requests wait for one.
pub const PAGE_THREADS: usize = 2;

/// A page: its status, content type and body.
#[derive(Debug)]
pub struct Page {
    /// 200, 404, 400.
    pub status: StatusCode,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// The body.
    pub body: String,
}

impl Page {
    /// A page of text with `status`.
    pub fn text(status: StatusCode, body: impl Into<String>) -> Page {
        let mut body = body.into();
        if !body.ends_with('\n') {
            body.push('\n');
        }
        Page {
            status,
            content_type: "text/plain; charset=utf-8",
            body,
        }
    }

    /// 404, in a line.
    pub fn not_found() -> Page {
        Page::text(StatusCode::NOT_FOUND, "not found")
    }

    /// 400, saying what is wrong with the request (never echoing it).
    pub fn bad_request(why: &str) -> Page {
        Page::text(StatusCode::BAD_REQUEST, why)
    }
}

/// A `GET` as a handler sees it.
#[derive(Debug, Clone)]
pub struct Get {
    /// Its path.
    pub path: String,
    /// Its query, undecoded.
    pub query: Option<String>,
    /// Its `Accept` header.
    pub accept: Option<String>,
}

impl Get {
    /// A query parameter's value by name, decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        form_urlencoded::parse(self.query.as_deref().unwrap_or_default().as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

/// What answers a `GET`.
pub type Handler = Arc<dyn Fn(&Get) -> Page + Send + Sync>;

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound or listened on.
    #[error("{what} {addr}: {source}")]
    Bind {
        /// The option that named it.
        what: &'static str,
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its runtime or thread could not start.
    #[error("{what}: starting its {part}: {source}")]
    Start {
        /// The option.
        what: &'static str,
        /// Runtime or thread.
        part: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Serves `handler`'s pages on `GET` at `addr` until the process ends, bounded
/// as the module says; `what` names the option in errors. Returns the address
/// bound.
pub fn serve(
    addr: SocketAddr,
    what: &'static str,
    handler: Handler,
) -> Result<SocketAddr, ServeError> {
    let bind = |source| ServeError::Bind { what, addr, source };
    let listener = std::net::TcpListener::bind(addr).map_err(bind)?;
    listener.set_nonblocking(true).map_err(bind)?;
    let bound = listener.local_addr().map_err(bind)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(PAGE_THREADS)
        .thread_keep_alive(Duration::from_secs(5))
        .build()
        .map_err(|source| ServeError::Start {
            what,
            part: "runtime",
            source,
        })?;
    std::thread::Builder::new()
        .name("http".into())
        .spawn(move || rt.block_on(accept_loop(listener, handler, what)))
        .map_err(|source| ServeError::Start {
            what,
            part: "thread",
            source,
        })?;
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

/// Headers on every answer: what it is stays what it says, no script runs,
/// no page frames it, no link leaks where it came from, nothing is cached (a
/// page shows the store now).
const SECURITY_HEADERS: [(&str, &str); 5] = [
    ("X-Content-Type-Options", "nosniff"),
    (
        "Content-Security-Policy",
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'",
    ),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
];

/// The handler's page for a `GET`, made on a blocking thread; 405 for any
/// other method.
async fn respond(req: &Request<Incoming>, handler: Handler) -> Response<Full<Bytes>> {
    let page = if req.method() == Method::GET {
        let get = Get {
            path: req.uri().path().to_string(),
            query: req.uri().query().map(str::to_string),
            accept: req
                .headers()
                .get(hyper::header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        };
        tokio::task::spawn_blocking(move || handler(&get))
            .await
            .unwrap_or_else(|_| Page::text(StatusCode::INTERNAL_SERVER_ERROR, "the page failed"))
    } else {
        Page::text(StatusCode::METHOD_NOT_ALLOWED, "read-only: GET only")
    };
    let mut r = Response::builder()
        .status(page.status)
        .header("Content-Type", page.content_type);
    for (k, v) in SECURITY_HEADERS {
        r = r.header(k, v);
    }
    if page.status == StatusCode::METHOD_NOT_ALLOWED {
        r = r.header("Allow", "GET");
    }
    r.body(Full::new(Bytes::from(page.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
