//! Value parsers for the flags: units, lists, and the names of tests and I/O
//! strategies, listed for `--help` and completions.

use netsonde_model::spec::{IoStrategy, TestKind};
use netsonde_model::units::{BitRate, Bytes, Nanos, RateUnit};

/// A ratio as `0.5%` or `0.005`.
/// A run's label: text on one line, no control characters (an escape
/// sequence in a label would drive the terminal of whoever lists the runs).
pub fn parse_label(s: &str) -> Result<String, String> {
    if s.chars().any(char::is_control) {
        return Err(
            "a label is printable text on one line: this one has a control character \
                    (an escape, a tab or a newline)"
                .into(),
        );
    }
    Ok(s.to_string())
}

pub fn parse_ratio(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    }
    .map_err(|_| format!("not a ratio: '{s}' (0.5% or 0.005)"))?;
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else if t.ends_with('%') || v < 0.0 {
        Err(format!(
            "a ratio must be at least 0 and below 100%, got '{s}'"
        ))
    } else {
        Err(format!(
            "'{s}' is {}% as a ratio; write {s}% for {s} percent (or {})",
            v * 100.0,
            v / 100.0
        ))
    }
}

pub fn parse_time(s: &str) -> Result<Nanos, String> {
    s.parse::<Nanos>().map_err(|e| e.to_string())
}

pub fn parse_bytes(s: &str) -> Result<Bytes, String> {
    s.parse::<Bytes>().map_err(|e| e.to_string())
}

pub fn parse_rate(s: &str) -> Result<BitRate, String> {
    s.parse::<BitRate>().map_err(|e| e.to_string())
}

/// A value parser that also lists the values it takes, for `--help` and the
/// shell completions; `parse` alone decides what is valid.
#[derive(Clone, Copy)]
pub struct Listed<T: 'static> {
    names: fn() -> Vec<&'static str>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T> std::fmt::Debug for Listed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listed")
            .field("names", &(self.names)())
            .finish_non_exhaustive()
    }
}

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Listed<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            (self.names)()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

pub fn io_names() -> Vec<&'static str> {
    IoStrategy::ALL.iter().map(|s| s.name()).collect()
}

pub fn test_names() -> Vec<&'static str> {
    TestKind::ALL.iter().map(|t| t.name()).collect()
}

pub fn parse_io_str(s: &str) -> Result<IoStrategy, String> {
    s.parse::<IoStrategy>().map_err(|e| e.to_string())
}

pub fn parse_test_str(s: &str) -> Result<TestKind, String> {
    s.parse::<TestKind>().map_err(|e| e.to_string())
}

/// An I/O strategy, its names offered.
pub const IO: Listed<IoStrategy> = Listed {
    names: io_names,
    parse: parse_io_str,
};

/// A test kind, its names offered.
pub const TEST: Listed<TestKind> = Listed {
    names: test_names,
    parse: parse_test_str,
};

/// A TLS cipher suite by its IANA name, the suites netsonde has offered.
pub const TLS_SUITE: Listed<String> = Listed {
    names: netsonde_tls::suites,
    parse: |s| {
        if netsonde_tls::suites().contains(&s) {
            Ok(s.to_string())
        } else {
            Err(format!(
                "'{s}' is not a suite netsonde has: one of {}",
                netsonde_tls::suites().join(", ")
            ))
        }
    },
};

/// A rate unit letter, the letters offered.
pub const RATE_UNIT: Listed<RateUnit> = Listed {
    names: || RateUnit::LETTERS.to_vec(),
    parse: parse_rate_unit,
};

pub fn parse_rate_unit(s: &str) -> Result<RateUnit, String> {
    RateUnit::from_letter(s).ok_or_else(|| {
        format!(
            "'{s}' is not a unit: one of {} (bit/s in lower case, bytes/s in upper)",
            RateUnit::LETTERS.join(", ")
        )
    })
}

/// A comma-separated list of core numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreList(pub Vec<usize>);

pub fn parse_cores(s: &str) -> Result<CoreList, String> {
    s.split(',')
        .map(|c| {
            c.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{c}' is not a core number"))
        })
        .collect::<Result<_, _>>()
        .map(CoreList)
}

/// A list of sizes: `128K,32K`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByteList(pub Vec<Bytes>);

pub fn parse_byte_list(s: &str) -> Result<ByteList, String> {
    s.split(',')
        .map(|v| parse_bytes(v.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map(ByteList)
}

/// A list of DSCP values: `46,0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DscpList(pub Vec<u8>);

pub fn parse_dscp_list(s: &str) -> Result<DscpList, String> {
    s.split(',')
        .map(|v| match v.trim().parse::<u8>() {
            Ok(d) if d <= 63 => Ok(d),
            _ => Err(format!("'{v}' is not a DSCP (0-63)")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(DscpList)
}

/// `--engine`: `real` or `fake`, listed for completions.
pub fn engine() -> impl clap::builder::TypedValueParser<Value = netsonde_run::Engine> {
    use clap::builder::PossibleValue;
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new([
        PossibleValue::new("real").help("Real tests, over sockets"),
        PossibleValue::new("fake").help("The scripted engine's reports at once, no traffic"),
    ])
    .map(|s| match s.as_str() {
        "fake" => netsonde_run::Engine::Fake,
        _ => netsonde_run::Engine::Real,
    })
}
