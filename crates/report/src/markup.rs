//! Escaping text for HTML, shared by the renderers that write it.

/// `s` with HTML's special characters escaped, for text and attribute values.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
