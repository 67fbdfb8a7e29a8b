//! Bottleneck diagnosis for a stream point: [`diagnose`] reads what was measured
//! about one point ([`DiagnosisInput`]) and names what most likely limited its
//! goodput ([`Bottleneck`]).
//!
//! The rules are ordered, and the first that applies wins, because the earlier
//! limits explain the later symptoms: a flow that fills the link, or its pacing rate,
//! is limited by that no matter how busy its CPUs are; a saturated core can starve a
//! window; and a little loss is normal at any rate.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Goodput within this share of the theoretical maximum is link-limited.
pub const LINK_SHARE: f64 = 0.90;

/// Goodput within this share of the pacing rate is application-limited.
pub const PACED_SHARE: f64 = 0.90;

/// A busiest core at or above this busy share, in percent, is CPU-limited.
pub const CPU_BUSY_PCT: f64 = 90.0;

/// Goodput within this share of window/RTT is window-limited.
pub const WINDOW_SHARE: f64 = 0.80;

/// Loss above this, in percent, is loss-limited.
pub const LOSS_PCT: f64 = 0.1;

/// Retransmitted segments above this count are loss-limited.
pub const RETRANSMITS: f64 = 100.0;

/// What most likely limited a stream's goodput.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Bottleneck {
    /// One core on one end was (nearly) fully busy.
    Cpu {
        /// `client` or `server`.
        side: String,
    },
    /// The socket buffer limited the data in flight: goodput ≈ window / RTT.
    Window,
    /// Loss or retransmissions held the congestion window down.
    Loss,
    /// The sender was paced at a rate it reached.
    Application,
    /// The link ran at (nearly) its theoretical maximum.
    Link,
    /// None of the rules applied.
    Unknown,
}

impl fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bottleneck::Cpu { side } => write!(
                f,
                "CPU-bound: the busiest {side} core is saturated, so more bytes need more cycles"
            ),
            Bottleneck::Window => write!(
                f,
                "window-limited: goodput is close to window/RTT; a larger socket buffer would help"
            ),
            Bottleneck::Loss => write!(
                f,
                "loss-limited: drops and retransmissions keep the congestion window small"
            ),
            Bottleneck::Application => write!(
                f,
                "application-limited: the sender reached its pacing rate and sent no faster"
            ),
            Bottleneck::Link => write!(
                f,
                "link-limited: goodput is close to the theoretical maximum of the link"
            ),
            Bottleneck::Unknown => write!(f, "no single bottleneck stands out"),
        }
    }
}

/// What was measured about one stream point, as [`diagnose`] needs it. `None` means
/// unknown, and a rule that needs an unknown figure does not apply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DiagnosisInput {
    /// Measured goodput, bit/s.
    pub goodput_bps: f64,
    /// Line rate of the link, bit/s; stands in for `theoretical_bps` when that is
    /// unknown.
    pub line_rate_bps: Option<f64>,
    /// Theoretical maximum goodput of the link, bit/s (see
    /// [`crate::link::theoretical_goodput`]).
    pub theoretical_bps: Option<f64>,
    /// Busy share of the client's busiest core, percent.
    pub client_cpu_max_core: Option<f64>,
    /// Busy share of the server's busiest core, percent.
    pub server_cpu_max_core: Option<f64>,
    /// The window in effect (granted socket buffer), bytes.
    pub window_bytes: Option<f64>,
    /// Round-trip time, ns.
    pub rtt_ns: Option<f64>,
    /// Retransmitted segments.
    pub retransmits: Option<f64>,
    /// Loss, percent.
    pub loss_pct: Option<f64>,
    /// Pacing rate the sender was held to, bit/s.
    pub paced_bps: Option<f64>,
}

/// Names the bottleneck of a stream point. Rules, first that applies:
///
/// 1. [`Bottleneck::Link`] if the theoretical maximum is known (else the line rate,
///    which is stricter) and goodput ≥ 0.90 of it;
/// 2. [`Bottleneck::Application`] if paced and goodput ≥ 0.90 of the pacing rate;
/// 3. [`Bottleneck::Cpu`] if either end's busiest core is ≥ 90% busy (the busier
///    end; the client on a tie);
/// 4. [`Bottleneck::Window`] if window and RTT are known and goodput ≥ 0.80 of
///    `window·8 / RTT`, the most a window-limited flow can carry;
/// 5. [`Bottleneck::Loss`] if loss exceeds 0.1% or retransmits exceed 100;
/// 6. [`Bottleneck::Unknown`].
pub fn diagnose(d: &DiagnosisInput) -> Bottleneck {
    let g = d.goodput_bps;
    let positive = |v: Option<f64>| v.filter(|v| v.is_finite() && *v > 0.0);

    if let Some(max) = positive(d.theoretical_bps.or(d.line_rate_bps)) {
        if g >= LINK_SHARE * max {
            return Bottleneck::Link;
        }
    }
    if let Some(paced) = positive(d.paced_bps) {
        if g >= PACED_SHARE * paced {
            return Bottleneck::Application;
        }
    }
    let busiest = [
        ("client", d.client_cpu_max_core),
        ("server", d.server_cpu_max_core),
    ]
    .into_iter()
    .filter_map(|(side, busy)| Some((side, busy?)))
    .filter(|&(_, busy)| busy >= CPU_BUSY_PCT)
    .reduce(|a, b| if b.1 > a.1 { b } else { a });
    if let Some((side, _)) = busiest {
        return Bottleneck::Cpu {
            side: side.to_string(),
        };
    }
    if let (Some(w), Some(rtt)) = (positive(d.window_bytes), positive(d.rtt_ns)) {
        let window_rate = w * 8.0 / (rtt * 1e-9);
        if g >= WINDOW_SHARE * window_rate {
            return Bottleneck::Window;
        }
    }
    if d.loss_pct.is_some_and(|l| l > LOSS_PCT) || d.retransmits.is_some_and(|r| r > RETRANSMITS) {
        return Bottleneck::Loss;
    }
    Bottleneck::Unknown
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 10 Gbit/s link, 1 ms RTT, 4 MiB window (at most 33.5 Gbit/s), quiet CPUs,
    /// no loss, and goodput far below every limit.
    fn base() -> DiagnosisInput {
        DiagnosisInput {
            goodput_bps: 2e9,
            line_rate_bps: Some(10e9),
            theoretical_bps: Some(9.415e9),
            client_cpu_max_core: Some(40.0),
            server_cpu_max_core: Some(50.0),
            window_bytes: Some(4_194_304.0),
            rtt_ns: Some(1e6),
            retransmits: Some(0.0),
            loss_pct: Some(0.0),
            paced_bps: None,
        }
    }

    #[test]
    fn nothing_applies() {
        assert_eq!(diagnose(&base()), Bottleneck::Unknown);
        assert_eq!(diagnose(&DiagnosisInput::default()), Bottleneck::Unknown);
    }

    #[test]
    fn link() {
        let d = DiagnosisInput {
            goodput_bps: 9.3e9,
            // Even a saturated core does not matter once the link is full.
            client_cpu_max_core: Some(99.0),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Link);
        // Without a theoretical figure, the line rate stands in.
        let d = DiagnosisInput {
            theoretical_bps: None,
            goodput_bps: 9.1e9,
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Link);
    }

    #[test]
    fn application() {
        let d = DiagnosisInput {
            goodput_bps: 0.98e9,
            paced_bps: Some(1e9),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Application);
    }

    #[test]
    fn cpu_names_the_busier_side() {
        let d = DiagnosisInput {
            server_cpu_max_core: Some(97.0),
            ..base()
        };
        assert_eq!(
            diagnose(&d),
            Bottleneck::Cpu {
                side: "server".into()
            }
        );
        let d = DiagnosisInput {
            client_cpu_max_core: Some(99.0),
            server_cpu_max_core: Some(92.0),
            ..base()
        };
        assert_eq!(
            diagnose(&d),
            Bottleneck::Cpu {
                side: "client".into()
            }
        );
    }

    #[test]
    fn window() {
        // 256 KiB over 10 ms: at most 209.7 Mbit/s; the flow got 200 Mbit/s.
        let d = DiagnosisInput {
            goodput_bps: 200e6,
            window_bytes: Some(262_144.0),
            rtt_ns: Some(10e6),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Window);
    }

    #[test]
    fn loss() {
        let d = DiagnosisInput {
            loss_pct: Some(0.5),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Loss);
        let d = DiagnosisInput {
            retransmits: Some(5000.0),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Loss);
        // A handful of retransmits is normal.
        let d = DiagnosisInput {
            retransmits: Some(20.0),
            ..base()
        };
        assert_eq!(diagnose(&d), Bottleneck::Unknown);
    }

    #[test]
    fn serializes_with_a_kind_tag_and_explains_itself() {
        let cpu = Bottleneck::Cpu {
            side: "client".into(),
        };
        assert_eq!(
            serde_json::to_string(&cpu).unwrap(),
            r#"{"kind":"cpu","side":"client"}"#
        );
        assert_eq!(
            serde_json::to_string(&Bottleneck::Application).unwrap(),
            r#"{"kind":"application"}"#
        );
        assert!(cpu.to_string().starts_with("CPU-bound"));
        assert!(!cpu.to_string().contains('\n'));
    }
}
