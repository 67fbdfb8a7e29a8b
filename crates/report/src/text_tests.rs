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
