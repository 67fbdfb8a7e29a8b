//! Advice a user can run: every flag a verdict suggests is one the test it
//! judged accepts (the spec with it set validates) and is not what the test
//! already ran with. A verdict lists what to try as [`Try`]s; [`offer`] keeps
//! those that pass for the test at hand and words them. Without the test's
//! spec (a sweep's stored metrics) every one is offered.

use netsonde_model::spec::{IoStrategy, TestSpec};
use netsonde_model::units::Bytes;

/// One change to a test's flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Try {
    /// `--io S`: both ends.
    Io(IoStrategy),
    /// `--tx-io S`.
    TxIo(IoStrategy),
    /// `--rx-io S`.
    RxIo(IoStrategy),
    /// `-l N`: messages of `N` bytes, offered only when larger than the test's.
    Size(u64),
    /// `-P N`: twice the test's streams.
    MoreStreams,
    /// `--congestion X`.
    Congestion(&'static str),
    /// `--tls-suite X`.
    TlsSuite(&'static str),
    /// `--tls-resume`.
    TlsResume,
    /// Leaving `--verify` off.
    NoVerify,
    /// `-A 0`: pinning the client's flows (the server's with `--server-affinity`).
    Pin,
}

impl Try {
    /// The test with this change made; `None` when it cannot be made.
    fn applied(self, spec: &TestSpec) -> Option<TestSpec> {
        let mut s = spec.clone();
        match self {
            Try::Io(io) => {
                s.tx_io = io;
                s.rx_io = io;
            }
            Try::TxIo(io) => s.tx_io = io,
            Try::RxIo(io) => s.rx_io = io,
            Try::Size(n) => {
                if n <= spec.size.0 || spec.test.is_rr() {
                    return None;
                }
                s.size = Bytes(n);
            }
            Try::MoreStreams => s.parallel = spec.parallel.checked_mul(2)?,
            Try::Congestion(c) => s.congestion = Some(c.into()),
            Try::TlsSuite(t) => s.tls_suite = Some(t.into()),
            Try::TlsResume => s.tls_resume = true,
            Try::NoVerify => s.verify = false,
            Try::Pin => {
                if !s.client_affinity.is_empty() {
                    return None;
                }
                s.client_affinity = vec![0];
            }
        }
        Some(s)
    }

    /// Whether the test accepts it and it changes something.
    pub fn runnable(self, spec: &TestSpec) -> bool {
        self.applied(spec)
            .is_some_and(|s| s != *spec && s.validate().is_ok())
    }

    /// The flag as a user types it, for this test when known.
    pub fn flag(self, spec: Option<&TestSpec>) -> String {
        match self {
            Try::Io(io) => format!("--io {}", io.name()),
            Try::TxIo(io) => format!("--tx-io {}", io.name()),
            Try::RxIo(io) => format!("--rx-io {}", io.name()),
            Try::Size(n) => format!("-l {}", size(n)),
            Try::MoreStreams => format!("-P {}", spec.map_or(2, |s| s.parallel.saturating_mul(2))),
            Try::Congestion(c) => format!("--congestion {c}"),
            Try::TlsSuite(t) => format!("--tls-suite {t}"),
            Try::TlsResume => "--tls-resume".into(),
            Try::NoVerify => "leave off --verify".into(),
            Try::Pin => "-A".into(),
        }
    }
}

/// `131072` as `128K`, `1472` as `1472`.
fn size(n: u64) -> String {
    if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}K", n / 1024)
    } else {
        n.to_string()
    }
}

/// One piece of advice: what it does (with `{}` where its flag goes) and the
/// change it asks for.
pub type Part = (&'static str, Try);

/// `lead` and the `parts` this test can run and has not (each its text with
/// the flag in place), joined as a sentence: "lead: a, b, or c". With none
/// left, `fallback` (advice with no flag of its own).
pub fn offer(spec: Option<&TestSpec>, lead: &str, parts: &[Part], fallback: &str) -> String {
    let kept: Vec<String> = parts
        .iter()
        .filter(|(_, t)| spec.is_none_or(|s| t.runnable(s)))
        .map(|(text, t)| text.replacen("{}", &t.flag(spec), 1))
        .collect();
    let list = match kept.as_slice() {
        [] => return fallback.to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{}, or {last}", init.join(", ")),
    };
    if lead.is_empty() {
        list
    } else {
        format!("{lead}: {list}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::spec::TestKind;

    #[test]
    fn only_what_the_test_accepts_and_has_not_is_offered() {
        let tls = TestSpec::new(TestKind::TlsStream);
        let parts: [Part; 3] = [
            ("{}", Try::Io(IoStrategy::Batch)),
            ("larger messages ({})", Try::Size(128 * 1024)),
            ("more streams ({})", Try::MoreStreams),
        ];
        // tls-stream refuses --io; the default is 128 KiB already.
        let a = offer(Some(&tls), "try", &parts, "nothing");
        assert_eq!(a, "try: more streams (-P 2)");
        let mut two = TestSpec::new(TestKind::TcpStream);
        two.parallel = 2;
        let a = offer(Some(&two), "", &parts, "nothing");
        assert!(
            a.contains("--io batch") && a.contains("-P 4") && !a.contains("-l"),
            "{a}"
        );
        let mut bbr = TestSpec::new(TestKind::TcpStream);
        bbr.congestion = Some("bbr".into());
        assert_eq!(
            offer(Some(&bbr), "", &[("{}", Try::Congestion("bbr"))], "x"),
            "x"
        );
        // No test known: everything, as worded.
        assert_eq!(
            offer(None, "", &parts, "x"),
            "--io batch, larger messages (-l 128K), or more streams (-P 2)"
        );
    }
}
