//! netsonde's HTTP serving, in a crate of its own so the binary only wires:
//! the bounded server itself (`http`: hyper on one thread, pages made on at
//! most two blocking threads, since they read the store, whose PostgreSQL
//! client blocks), `--metrics` (`metrics`: OpenMetrics for Prometheus, the
//! Prometheus text format for anything else), and `netsonde dashboard`'s
//! routes (`dashboard`: pages from a store opened read-only per request, 400
//! for a request they cannot answer).
#![forbid(unsafe_code)]

pub mod dashboard;
pub mod http;
pub mod metrics;

pub use dashboard::serve_dashboard;
pub use http::{Get, Handler, Page, ServeError, MAX_CONNECTIONS};
pub use metrics::{prometheus_text, serve_metrics, Render};
