//! The text report against its golden copies.

use super::*;
use crate::fixture;

#[test]
fn stream_text_golden() {
    insta::assert_snapshot!(render(&fixture::stream_report()));
}

#[test]
fn rr_text_golden() {
    insta::assert_snapshot!(render(&fixture::rr_report()));
}

/// CI's host: a five-digit port and the CPU model "Intel(R) Xeon(R)
/// Processor" made the server's line 94 columns; its fields wrap as the
/// test's do.
#[test]
fn the_server_line_wraps_at_the_width() {
    let mut r = fixture::stream_report();
    r.server_address = "embedded 127.0.0.1:36657".into();
    r.server.host.kernel = "6.18.44-fc-v1045".into();
    r.server.host.cpu_model = "Intel(R) Xeon(R) Processor".into();
    let text = render(&r);
    for l in text.lines() {
        assert!(
            l.chars().count() <= 80,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    assert!(text.contains("Intel(R) Xeon(R) Processor"), "{text}");
}
