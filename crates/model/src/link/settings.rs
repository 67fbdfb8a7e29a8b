//! [`LinkSettings`]: the link as a user writes it, on the command line or in
//! the `[link]` table of a lab or experiment file, and its validation into a
//! [`LinkSpec`].

use serde::{Deserialize, Serialize};

use super::{
    bad, parse_on_off, parse_percent, DirLink, LinkError, LinkSpec, Loss, Queue, SecondPath,
    ValueError, MAX_MTU, MIN_MTU,
};
use crate::units::{BitRate, Bytes, Nanos};

/// Link settings as a user writes them: on the command line (`--rate 100M`) or in
/// the `[link]` table of a lab or experiment file. Every value is either one value
/// for both directions or `UP/DOWN` (client→server / server→client).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSettings {
    /// MTU, 68 to 65535.
    #[serde(default, deserialize_with = "string_or_number")]
    pub mtu: Option<String>,
    /// Rate (decimal: `100M`, `1G`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub rate: Option<String>,
    /// One-way delay (`10ms`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub delay: Option<String>,
    /// Jitter (`1ms`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub jitter: Option<String>,
    /// Loss: `1%` or `gemodel:P,R[,BAD[,GOOD]]`.
    #[serde(default, deserialize_with = "string_or_number")]
    pub loss: Option<String>,
    /// Reordered share (`5%`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub reorder: Option<String>,
    /// Duplicated share (`1%`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub duplicate: Option<String>,
    /// Queue: `100p` or bytes (`256K`).
    #[serde(default, deserialize_with = "string_or_number")]
    pub queue: Option<String>,
    /// `tbf` or `htb`.
    pub shaper: Option<String>,
    /// `auto`, `kernel` or `emulator`.
    pub mechanism: Option<String>,
    /// Seed of the emulator's random source.
    pub seed: Option<u64>,
    /// A second path's rate, for MPTCP (`50M`, or `UP/DOWN`; `0` unshaped).
    #[serde(default, deserialize_with = "string_or_number")]
    pub second_path: Option<String>,
    /// Segmentation and receive offloads: `on` (the default) or `off`.
    pub offloads: Option<String>,
}

/// Splits `UP/DOWN` (or one value for both).
fn per_dir(s: &str) -> (&str, &str) {
    match s.split_once('/') {
        Some((a, b)) if !s.contains("bit/s") => (a, b),
        _ => (s, s),
    }
}

impl LinkSettings {
    /// Takes every value `other` sets (flags over a file).
    pub fn overlay(&mut self, other: &LinkSettings) {
        macro_rules! take {
            ($($f:ident),*) => {$( if other.$f.is_some() { self.$f = other.$f.clone(); } )*};
        }
        take!(
            mtu,
            rate,
            delay,
            jitter,
            loss,
            reorder,
            duplicate,
            queue,
            shaper,
            mechanism,
            seed,
            second_path,
            offloads
        );
    }

    /// The validated link.
    pub fn spec(&self) -> Result<LinkSpec, LinkError> {
        let mut s = LinkSpec::default();
        fn each<T>(
            key: &'static str,
            v: &Option<String>,
            s: &mut LinkSpec,
            parse: impl Fn(&str) -> Result<T, ValueError>,
            set: impl Fn(&mut DirLink, T),
        ) -> Result<(), LinkError> {
            if let Some(v) = v {
                let (a, b) = per_dir(v);
                set(&mut s.up, parse(a.trim()).map_err(|m| bad(key, m))?);
                set(&mut s.down, parse(b.trim()).map_err(|m| bad(key, m))?);
            }
            Ok(())
        }
        each("mtu", &self.mtu, &mut s, parse_mtu, |d, v| d.mtu = v)?;
        each(
            "rate",
            &self.rate,
            &mut s,
            |v| Ok(v.parse::<BitRate>()?),
            |d, v| d.rate = (v.bps() > 0.0).then_some(v),
        )?;
        each(
            "delay",
            &self.delay,
            &mut s,
            |v| Ok(v.parse::<Nanos>()?),
            |d, v| d.delay = v,
        )?;
        each(
            "jitter",
            &self.jitter,
            &mut s,
            |v| Ok(v.parse::<Nanos>()?),
            |d, v| d.jitter = v,
        )?;
        each("loss", &self.loss, &mut s, str::parse::<Loss>, |d, v| {
            d.loss = v
        })?;
        each("reorder", &self.reorder, &mut s, parse_percent, |d, v| {
            d.reorder = v
        })?;
        each(
            "duplicate",
            &self.duplicate,
            &mut s,
            parse_percent,
            |d, v| d.duplicate = v,
        )?;
        each("queue", &self.queue, &mut s, str::parse::<Queue>, |d, v| {
            d.queue = Some(v)
        })?;
        each("offloads", &self.offloads, &mut s, parse_on_off, |d, v| {
            d.offloads = v
        })?;
        if let Some(v) = &self.shaper {
            s.shaper = v.parse().map_err(|m| bad("shaper", m))?;
        }
        if let Some(v) = &self.mechanism {
            s.mechanism = v.parse().map_err(|m| bad("mechanism", m))?;
        }
        if let Some(v) = self.seed {
            s.seed = v;
        }
        if let Some(v) = &self.second_path {
            let (a, b) = per_dir(v);
            let rate = |v: &str| -> Result<Option<BitRate>, LinkError> {
                let r = v
                    .trim()
                    .parse::<BitRate>()
                    .map_err(|m| bad("second-path", m.into()))?;
                Ok((r.bps() > 0.0).then_some(r))
            };
            s.second = Some(SecondPath {
                up: rate(a)?,
                down: rate(b)?,
            });
        }
        s.validate()?;
        Ok(s)
    }
}

/// Parses an MTU: a plain number or a size (`9000`, `16K`); 68 to 65535.
pub fn parse_mtu(s: &str) -> Result<u32, ValueError> {
    let b = s.trim().parse::<Bytes>()?;
    if !(u64::from(MIN_MTU)..=u64::from(MAX_MTU)).contains(&b.0) {
        return Err(ValueError::Mtu(b.0));
    }
    Ok(b.0 as u32)
}

/// Accepts a string or a number (`mtu = 9000` and `mtu = "9000"` alike).
fn string_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum V {
        S(String),
        I(i64),
        F(f64),
    }
    Ok(Option::<V>::deserialize(d)?.map(|v| match v {
        V::S(s) => s,
        V::I(i) => i.to_string(),
        V::F(f) => f.to_string(),
    }))
}
