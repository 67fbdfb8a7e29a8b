//! `--metrics ADDR`: the OpenMetrics text (`netsonde_report::openmetrics`) on
//! `GET /metrics`, served by `tiny_http` on threads of its own, off the data
//! path: each scrape reads the server's health and the last results kept.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;

/// Serves `render()` on `GET /metrics` at `addr` until the process ends;
/// returns the address bound. Anything else is 404.
pub(crate) fn serve(
    addr: SocketAddr,
    render: Arc<dyn Fn() -> String + Send + Sync>,
) -> anyhow::Result<SocketAddr> {
    let server = tiny_http::Server::http(addr)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("--metrics {addr}"))?;
    let bound = server
        .server_addr()
        .to_ip()
        .context("--metrics: not an IP address")?;
    std::thread::spawn(move || {
        for req in server.incoming_requests() {
            let ok = req.method() == &tiny_http::Method::Get
                && req.url().split('?').next() == Some("/metrics");
            let _ = if ok {
                let header = tiny_http::Header::from_bytes(
                    "Content-Type",
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                )
                .expect("a static header");
                req.respond(tiny_http::Response::from_string(render()).with_header(header))
            } else {
                req.respond(tiny_http::Response::from_string("not found\n").with_status_code(404))
            };
        }
    });
    Ok(bound)
}
