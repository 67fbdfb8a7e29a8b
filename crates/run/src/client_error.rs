//! A client's error as the sweep executor sees it, for every runner (the
//! client's own, a mesh's agents).

use std::time::Duration;

use netsonde_driver::client::ClientError;
use netsonde_sweep::exec::RunError;

/// What the executor should make of a client error: a busy server is waited for,
/// a refused configuration is the point's own, anything else is a failure.
pub fn run_error(e: ClientError) -> RunError {
    match e {
        ClientError::Busy {
            message,
            retry_after_ms,
            ..
        } => RunError::Busy {
            message,
            retry_after: retry_after_ms.map(Duration::from_millis),
        },
        e @ ClientError::Refused { .. } => RunError::refused(e),
        // A point an iperf3 server cannot run (request/response, a time that
        // is not whole seconds): the point's own, as a refusal is.
        e @ ClientError::Iperf3 {
            source: netsonde_proto::iperf3::Iperf3Error::Unsupported(_),
            ..
        } => RunError::refused(e),
        e => RunError::failed(e),
    }
}
