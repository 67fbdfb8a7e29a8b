//! Axis value syntax, shared by the command line and experiment files.
//!
//! ```text
//! list    = item ("," item)*
//! item    = value | range
//! range   = value ".." value [step]      ; inclusive of both ends when reached
//! step    = "*" factor                   ; geometric (default "*2")
//!         | "+" value                    ; linear
//! ```
//!
//! Sizes use `netsonde_model::units::Bytes` syntax (`64`, `1K` = 1024, `64kB` =
//! 64,000). `64,256,1K..64K` is 64, 256, 1 KiB, 2 KiB, ..., 64 KiB. `1K..1M*4` is 1,
//! 4, 16, 64, 256 KiB and 1 MiB; `1K..4K+1K` is 1, 2, 3, 4 KiB. Duplicates are removed
//! and the order is ascending.

use netsonde_model::units::{Bytes, UnitError};

/// Why an axis did not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AxisError {
    /// A value inside it.
    #[error("'{item}': {source}")]
    Value {
        /// The item.
        item: String,
        /// Why.
        #[source]
        source: UnitError,
    },
    /// A range whose end is below its start, or whose step does not advance.
    #[error("'{0}': a range must go up, with a factor above 1 or a positive step")]
    BadRange(String),
    /// More values than anyone would run.
    #[error("'{0}' expands to more than 1000 values")]
    TooMany(String),
    /// Nothing at all.
    #[error("empty axis")]
    Empty,
}

fn bytes(item: &str, s: &str) -> Result<Bytes, AxisError> {
    s.trim()
        .parse::<Bytes>()
        .map_err(|source| AxisError::Value {
            item: item.to_string(),
            source,
        })
}

/// Parses a size axis.
pub fn parse_sizes(s: &str) -> Result<Vec<Bytes>, AxisError> {
    let mut out = Vec::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        if let Some((from, rest)) = item.split_once("..") {
            let from = bytes(item, from)?;
            let (to, step) = match rest.find(['*', '+']) {
                Some(i) => (&rest[..i], Some(&rest[i..])),
                None => (rest, None),
            };
            let to = bytes(item, to)?;
            if to < from || from.0 == 0 {
                return Err(AxisError::BadRange(item.to_string()));
            }
            let mut v = from.0;
            let next: Box<dyn Fn(u64) -> u64> = match step {
                None => Box::new(|v| v * 2),
                Some(st) if st.starts_with('*') => {
                    let f: u64 = st[1..]
                        .trim()
                        .parse()
                        .map_err(|_| AxisError::BadRange(item.to_string()))?;
                    if f < 2 {
                        return Err(AxisError::BadRange(item.to_string()));
                    }
                    Box::new(move |v| v.saturating_mul(f))
                }
                Some(st) => {
                    let d = bytes(item, &st[1..])?.0;
                    if d == 0 {
                        return Err(AxisError::BadRange(item.to_string()));
                    }
                    Box::new(move |v| v.saturating_add(d))
                }
            };
            while v <= to.0 {
                out.push(Bytes(v));
                if out.len() > 1000 {
                    return Err(AxisError::TooMany(item.to_string()));
                }
                v = next(v);
            }
        } else {
            out.push(bytes(item, item)?);
        }
    }
    if out.is_empty() {
        return Err(AxisError::Empty);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Parses a comma-separated list with `f`.
pub fn parse_list<T, E: std::fmt::Display>(
    s: &str,
    f: impl Fn(&str) -> Result<T, E>,
) -> Result<Vec<T>, String> {
    let v: Vec<T> = s
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .map(|i| f(i).map_err(|e| format!("'{i}': {e}")))
        .collect::<Result<_, _>>()?;
    if v.is_empty() {
        return Err("empty list".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: &[u64]) -> Vec<Bytes> {
        v.iter().map(|&x| Bytes(x)).collect()
    }

    #[test]
    fn lists_ranges_and_steps() {
        assert_eq!(
            parse_sizes("64,256,1K..8K").unwrap(),
            b(&[64, 256, 1024, 2048, 4096, 8192])
        );
        assert_eq!(
            parse_sizes("1K..1M*4").unwrap(),
            b(&[1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20])
        );
        assert_eq!(
            parse_sizes("1K..4K+1K").unwrap(),
            b(&[1024, 2048, 3072, 4096])
        );
        assert_eq!(parse_sizes("64..200").unwrap(), b(&[64, 128]));
        assert_eq!(parse_sizes("4K, 64, 4K").unwrap(), b(&[64, 4096]));
    }

    #[test]
    fn bad_axes() {
        assert!(matches!(parse_sizes("8K..1K"), Err(AxisError::BadRange(_))));
        assert!(matches!(
            parse_sizes("1K..8K*1"),
            Err(AxisError::BadRange(_))
        ));
        assert!(matches!(
            parse_sizes("1..100000+1"),
            Err(AxisError::TooMany(_))
        ));
        assert!(matches!(parse_sizes("12Q"), Err(AxisError::Value { .. })));
        assert!(matches!(parse_sizes(" , "), Err(AxisError::Empty)));
    }
}
