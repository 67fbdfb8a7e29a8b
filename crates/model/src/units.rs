//! Units as newtypes, and the single place where size and rate strings are parsed
//! and printed.
//!
//! # The prefix convention, stated once
//!
//! | written | means | why |
//! |---|---|---|
//! | `64KiB`, `1MiB`, `1GiB` | 2^10, 2^20, 2^30 bytes (IEC) | unambiguous |
//! | `64kB`, `1MB`, `1GB` | 10^3, 10^6, 10^9 bytes (SI) | unambiguous |
//! | `64K`, `1M`, `1G` (sizes) | **2^10, 2^20, 2^30 bytes** | what iperf3 and netperf users type for `-l` and `-w` |
//! | `10k`, `10M`, `10G` (rates) | **10^3, 10^6, 10^9 bit/s** | line rates are decimal: 10G Ethernet is 10^10 bit/s |
//!
//! Rates also accept an explicit `bit/s`, `bps`, `b` suffix (`10Gbit/s`, `10Gbps`,
//! `10Gb`) and nothing else: a byte rate is a different quantity and is rejected.
//! Printing is always explicit: sizes print in IEC (`128 KiB`), rates in SI
//! (`9.41 Gbit/s`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Why a unit string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// The string was empty.
    #[error("empty value")]
    Empty,
    /// The numeric part did not parse.
    #[error("'{0}' is not a number")]
    BadNumber(String),
    /// The suffix is not one this quantity accepts.
    #[error("unknown unit '{suffix}' in '{input}' (expected {expected})")]
    BadSuffix {
        /// The whole input.
        input: String,
        /// The suffix that was not understood.
        suffix: String,
        /// What would have been accepted.
        expected: &'static str,
    },
    /// Negative, NaN, or too large to represent.
    #[error("'{0}' is out of range")]
    OutOfRange(String),
}

fn split_number(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+' || c == '_'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(end);
    let num_clean: String = num.chars().filter(|&c| c != '_').collect();
    let value: f64 = num_clean
        .parse()
        .map_err(|_| UnitError::BadNumber(s.to_string()))?;
    if !value.is_finite() || value < 0.0 {
        return Err(UnitError::OutOfRange(s.to_string()));
    }
    Ok((value, suffix.trim()))
}

/// A count of bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    /// One kibibyte, 2^10 bytes.
    pub const KIB: u64 = 1 << 10;
    /// One mebibyte, 2^20 bytes.
    pub const MIB: u64 = 1 << 20;
    /// One gibibyte, 2^30 bytes.
    pub const GIB: u64 = 1 << 30;

    /// The raw count.
    pub fn get(self) -> u64 {
        self.0
    }

    /// As bits, for rate arithmetic.
    pub fn bits(self) -> f64 {
        self.0 as f64 * 8.0
    }
}

impl FromStr for Bytes {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (value, suffix) = split_number(s)?;
        let mult: u64 = match suffix {
            "" | "B" | "b" => 1,
            "K" | "k" | "KiB" | "Ki" => Bytes::KIB,
            "M" | "m" | "MiB" | "Mi" => Bytes::MIB,
            "G" | "g" | "GiB" | "Gi" => Bytes::GIB,
            "kB" | "KB" => 1_000,
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            other => {
                return Err(UnitError::BadSuffix {
                    input: s.to_string(),
                    suffix: other.to_string(),
                    expected: "B, K/KiB, M/MiB, G/GiB (x1024) or kB, MB, GB (x1000)",
                })
            }
        };
        let total = value * mult as f64;
        if total > u64::MAX as f64 / 2.0 || total.fract() != 0.0 {
            return Err(UnitError::OutOfRange(s.to_string()));
        }
        Ok(Bytes(total as u64))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let (div, unit) = if v >= Bytes::GIB {
            (Bytes::GIB, "GiB")
        } else if v >= Bytes::MIB {
            (Bytes::MIB, "MiB")
        } else if v >= Bytes::KIB {
            (Bytes::KIB, "KiB")
        } else {
            return write!(f, "{v} B");
        };
        if v.is_multiple_of(div) {
            write!(f, "{} {unit}", v / div)
        } else {
            write!(f, "{:.2} {unit}", v as f64 / div as f64)
        }
    }
}

/// A rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(pub f64);

impl BitRate {
    /// Bits per second.
    pub fn bps(self) -> f64 {
        self.0
    }

    /// The rate of `bytes` moved in `elapsed`; zero when no time elapsed.
    pub fn from_bytes(bytes: Bytes, elapsed: Duration) -> BitRate {
        let s = elapsed.as_secs_f64();
        if s <= 0.0 {
            BitRate(0.0)
        } else {
            BitRate(bytes.bits() / s)
        }
    }

    /// Bytes per second.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 / 8.0
    }
}

impl FromStr for BitRate {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (value, suffix) = split_number(s)?;
        let unit = suffix
            .strip_suffix("bit/s")
            .or_else(|| suffix.strip_suffix("bps"))
            .or_else(|| suffix.strip_suffix('b'))
            .unwrap_or(suffix);
        let mult = match unit {
            "" => 1e0,
            "k" | "K" => 1e3,
            "M" | "m" => 1e6,
            "G" | "g" => 1e9,
            "T" | "t" => 1e12,
            _ => {
                return Err(UnitError::BadSuffix {
                    input: s.to_string(),
                    suffix: suffix.to_string(),
                    expected: "k, M, G, T (x1000), optionally followed by bit/s or bps",
                })
            }
        };
        Ok(BitRate(value * mult))
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let (div, unit) = if v >= 1e12 {
            (1e12, "Tbit/s")
        } else if v >= 1e9 {
            (1e9, "Gbit/s")
        } else if v >= 1e6 {
            (1e6, "Mbit/s")
        } else if v >= 1e3 {
            (1e3, "kbit/s")
        } else {
            (1.0, "bit/s")
        };
        write!(f, "{:.2} {unit}", v / div)
    }
}

/// A fixed unit for rates in text output, as iperf3's `-f`: `k`, `m`, `g`, `t`
/// for kilo- to terabits per second (decimal), `K`, `M`, `G`, `T` for KiB/s to
/// TiB/s (binary, as iperf3's bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// Bits per second times 1000^`power`.
    Bits {
        /// 1 (k) to 4 (t).
        power: u8,
    },
    /// Bytes per second times 1024^`power`.
    Bytes {
        /// 1 (K) to 4 (T).
        power: u8,
    },
}

impl RateUnit {
    /// The units `-f` takes, in order.
    pub const LETTERS: [&'static str; 8] = ["k", "m", "g", "t", "K", "M", "G", "T"];

    /// The unit iperf3's `-f` letter names.
    pub fn from_letter(s: &str) -> Option<RateUnit> {
        let power = |c: char| "kmgt".find(c.to_ascii_lowercase()).map(|i| i as u8 + 1);
        let mut chars = s.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        let p = power(c)?;
        Some(if c.is_ascii_lowercase() {
            RateUnit::Bits { power: p }
        } else {
            RateUnit::Bytes { power: p }
        })
    }

    /// `bps` in this unit, with two decimals.
    pub fn format(self, bps: f64) -> String {
        const PREFIX: [&str; 5] = ["", "k", "M", "G", "T"];
        const BINARY: [&str; 5] = ["", "Ki", "Mi", "Gi", "Ti"];
        match self {
            RateUnit::Bits { power } => {
                let p = usize::from(power.min(4));
                format!("{:.2} {}bit/s", bps / 1000f64.powi(p as i32), PREFIX[p])
            }
            RateUnit::Bytes { power } => {
                let p = usize::from(power.min(4));
                format!("{:.2} {}B/s", bps / 8.0 / 1024f64.powi(p as i32), BINARY[p])
            }
        }
    }
}

/// A rate in packets (datagrams, frames) per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PacketRate(pub f64);

impl fmt::Display for PacketRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v >= 1e6 {
            write!(f, "{:.3} Mpps", v / 1e6)
        } else if v >= 1e3 {
            write!(f, "{:.1} kpps", v / 1e3)
        } else {
            write!(f, "{v:.0} pps")
        }
    }
}

/// A duration or timestamp in nanoseconds. Timestamps are relative to an epoch the
/// caller chooses (protocol code never reads a clock; the caller passes `now`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Zero.
    pub const ZERO: Nanos = Nanos(0);

    /// From whole milliseconds (saturating at about 584 years).
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(1_000_000))
    }

    /// From whole seconds (saturating at about 584 years).
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(1_000_000_000))
    }

    /// As a `Duration`.
    pub fn as_duration(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// As fractional seconds.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// As fractional microseconds.
    pub fn as_micros_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    /// `self + d`, saturating.
    pub fn saturating_add(self, d: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(d.0))
    }

    /// `self - d`, saturating at zero.
    pub fn saturating_sub(self, d: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(d.0))
    }
}

impl From<Duration> for Nanos {
    fn from(d: Duration) -> Nanos {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl FromStr for Nanos {
    type Err = UnitError;
    /// `10` (seconds), `10s`, `500ms`, `250us`, `100ns`, `2m`, `1h`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (value, suffix) = split_number(s)?;
        let mult = match suffix {
            "" | "s" => 1e9,
            "ms" => 1e6,
            "us" | "µs" => 1e3,
            "ns" => 1.0,
            "m" | "min" => 60e9,
            "h" => 3600e9,
            other => {
                return Err(UnitError::BadSuffix {
                    input: s.to_string(),
                    suffix: other.to_string(),
                    expected: "ns, us, ms, s (default), m, h",
                })
            }
        };
        let ns = value * mult;
        if ns > 1e18 {
            return Err(UnitError::OutOfRange(s.to_string()));
        }
        Ok(Nanos(ns.round() as u64))
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0 as f64;
        if self.0 >= 1_000_000_000 {
            write!(f, "{:.2} s", v / 1e9)
        } else if self.0 >= 1_000_000 {
            write!(f, "{:.2} ms", v / 1e6)
        } else if self.0 >= 1_000 {
            write!(f, "{:.1} us", v / 1e3)
        } else {
            write!(f, "{} ns", self.0)
        }
    }
}

/// A percentage, 0 to 100 for a share of one thing (one core, one link).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Percent(pub f64);

impl Percent {
    /// `part / whole` as a percentage; zero when `whole` is zero.
    pub fn of(part: f64, whole: f64) -> Percent {
        if whole <= 0.0 {
            Percent(0.0)
        } else {
            Percent(100.0 * part / whole)
        }
    }
}

impl fmt::Display for Percent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1}%", self.0)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn rate_units_are_iperf3s_format_letters() {
        let m = RateUnit::from_letter("m").unwrap();
        assert_eq!(m.format(9.415e9), "9415.00 Mbit/s");
        assert_eq!(
            RateUnit::from_letter("G")
                .unwrap()
                .format(8.0 * 1024f64.powi(3)),
            "1.00 GiB/s"
        );
        assert_eq!(
            RateUnit::from_letter("k").unwrap().format(1500.0),
            "1.50 kbit/s"
        );
        assert!(RateUnit::from_letter("x").is_none() && RateUnit::from_letter("mm").is_none());
        assert!(RateUnit::LETTERS
            .iter()
            .all(|l| RateUnit::from_letter(l).is_some()));
    }

    use super::*;

    #[test]
    fn size_prefixes_are_stated_once() {
        // The convention table in the module docs, as code.
        assert_eq!("64K".parse::<Bytes>().unwrap(), Bytes(65_536));
        assert_eq!("64KiB".parse::<Bytes>().unwrap(), Bytes(65_536));
        assert_eq!("64kB".parse::<Bytes>().unwrap(), Bytes(64_000));
        assert_eq!("1M".parse::<Bytes>().unwrap(), Bytes(1 << 20));
        assert_eq!("1MB".parse::<Bytes>().unwrap(), Bytes(1_000_000));
        assert_eq!("1GiB".parse::<Bytes>().unwrap(), Bytes(1 << 30));
        assert_eq!("1.5K".parse::<Bytes>().unwrap(), Bytes(1536));
        assert_eq!("128".parse::<Bytes>().unwrap(), Bytes(128));
        assert_eq!("128B".parse::<Bytes>().unwrap(), Bytes(128));
    }

    #[test]
    fn rate_prefixes_are_decimal() {
        assert_eq!("10G".parse::<BitRate>().unwrap(), BitRate(1e10));
        assert_eq!("10Gbit/s".parse::<BitRate>().unwrap(), BitRate(1e10));
        assert_eq!("200Mbps".parse::<BitRate>().unwrap(), BitRate(2e8));
        assert_eq!("1k".parse::<BitRate>().unwrap(), BitRate(1e3));
        assert_eq!("100".parse::<BitRate>().unwrap(), BitRate(100.0));
    }

    #[test]
    fn bad_units_are_errors() {
        assert!(matches!(
            "10X".parse::<Bytes>(),
            Err(UnitError::BadSuffix { .. })
        ));
        assert!(matches!("".parse::<Bytes>(), Err(UnitError::Empty)));
        assert!(matches!(
            "-5".parse::<Bytes>(),
            Err(UnitError::OutOfRange(_))
        ));
        assert!(matches!(
            "1.3B".parse::<Bytes>(),
            Err(UnitError::OutOfRange(_))
        ));
        assert!(matches!(
            "10GB/s".parse::<BitRate>(),
            Err(UnitError::BadSuffix { .. })
        ));
        assert!(matches!(
            "abc".parse::<Nanos>(),
            Err(UnitError::BadNumber(_))
        ));
        assert!("1e30".parse::<Nanos>().is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!("10".parse::<Nanos>().unwrap(), Nanos::from_secs(10));
        assert_eq!("2s".parse::<Nanos>().unwrap(), Nanos::from_secs(2));
        assert_eq!("500ms".parse::<Nanos>().unwrap(), Nanos::from_millis(500));
        assert_eq!("250us".parse::<Nanos>().unwrap(), Nanos(250_000));
        assert_eq!("0.5".parse::<Nanos>().unwrap(), Nanos::from_millis(500));
    }

    #[test]
    fn printing_is_explicit() {
        assert_eq!(Bytes(131_072).to_string(), "128 KiB");
        assert_eq!(Bytes(64).to_string(), "64 B");
        assert_eq!(Bytes(1536).to_string(), "1.50 KiB");
        assert_eq!(Bytes(3 << 30).to_string(), "3 GiB");
        assert_eq!(BitRate(9.41e9).to_string(), "9.41 Gbit/s");
        assert_eq!(BitRate(1.5e6).to_string(), "1.50 Mbit/s");
        assert_eq!(Nanos(120_500).to_string(), "120.5 us");
        assert_eq!(Percent(12.345).to_string(), "12.3%");
    }

    #[test]
    fn rate_from_bytes() {
        let r = BitRate::from_bytes(Bytes(125_000_000), Duration::from_secs(1));
        assert_eq!(r.bps(), 1e9);
        assert_eq!(BitRate::from_bytes(Bytes(1), Duration::ZERO).bps(), 0.0);
    }
}
