//! The lab's link: what the path between the client host and the server host does
//! to packets, per direction, and which mechanism does it. Pure data and parsing;
//! `netsonde-lab` builds it.
//!
//! - [`LinkSpec`]: both directions ([`DirLink`]: MTU, rate, delay, jitter,
//!   [`Loss`], reordering, duplication, [`Queue`]), the rate [`Shaper`] and the seed
//!   of the emulator's random source.
//! - [`LinkSettings`]: the same as a user writes it (flags, or the `[link]` table of
//!   a lab file): strings, each either one value for both directions or `UP/DOWN`
//!   (`--delay 10ms/30ms`: 10 ms client→server, 30 ms server→client).
//! - [`LinkPoint`]: the link axes of a sweep point (`mtu`, `rate`, `delay`, `loss`),
//!   applied to both directions over the lab's base link.
//! - [`Mechanism`] and [`LinkRecord`]: what was actually built, stored with every
//!   result of a lab run.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::units::{BitRate, Bytes, Nanos, UnitError};

mod settings;
pub use settings::{parse_mtu, LinkSettings};

/// Smallest MTU the lab accepts (IPv4's minimum).
pub const MIN_MTU: u32 = 68;
/// Largest MTU the lab accepts (the IPv4 total length field; veth and TUN allow it).
pub const MAX_MTU: u32 = 65535;
/// MTU when none is given.
pub const DEFAULT_MTU: u32 = 1500;

/// Why link settings are not usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// A value did not parse, or is out of range.
    #[error("--{key}: {source}")]
    Value {
        /// The setting (`mtu`, `rate`, ...).
        key: &'static str,
        /// What is wrong.
        source: ValueError,
    },
    /// Values that parse but do not go together.
    #[error("{0}")]
    Inconsistent(String),
}

/// Why one link value is not usable.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// Not a percentage.
    #[error("'{0}' is not a percentage (1%, 0.5%)")]
    NotPercent(String),
    /// A percentage outside 0-100.
    #[error("'{0}' is not between 0% and 100%")]
    PercentRange(String),
    /// A Gilbert-Elliott model with too few or too many values.
    #[error("'{0}': gemodel takes P,R[,BAD[,GOOD]] (transition and loss percentages)")]
    GeModel(String),
    /// Not a packet count.
    #[error("'{0}' is not a packet count (100p)")]
    NotPackets(String),
    /// A queue of nothing.
    #[error("'{0}': a queue holds at least one packet")]
    EmptyQueue(String),
    /// A size, rate or time that did not parse.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// Not a number.
    #[error("'{0}' is not a number")]
    NotNumber(String),
    /// An MTU outside 68..65535.
    #[error("MTU {0} is outside {MIN_MTU}..{MAX_MTU} (write 65535 for the largest)")]
    Mtu(u64),
    /// An unknown shaper.
    #[error("unknown shaper '{0}' (tbf, htb)")]
    UnknownShaper(String),
    /// An unknown mechanism.
    #[error("unknown mechanism '{0}' (auto, kernel, emulator)")]
    UnknownMechanism(String),
    /// Not `on` or `off`.
    #[error("'{0}' is not on or off")]
    NotOnOff(String),
    /// A value outside what the lab can build (the direction and the limit).
    #[error("{0}")]
    Range(String),
}

fn bad(key: &'static str, source: ValueError) -> LinkError {
    LinkError::Value { key, source }
}

/// Packet loss on one direction.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "kebab-case")]
pub enum Loss {
    /// No loss.
    #[default]
    None,
    /// Each packet is lost independently with this probability (percent).
    Random {
        /// Loss probability, percent.
        percent: f64,
    },
    /// Losses in bursts: the Gilbert-Elliott model (netem's `gemodel`). A packet
    /// first moves the chain (good→bad with `p`, bad→good with `r`), then is lost
    /// with `bad` percent in the bad state and `good` percent in the good state.
    GilbertElliott {
        /// Good→bad transition probability, percent.
        p: f64,
        /// Bad→good transition probability, percent.
        r: f64,
        /// Loss in the bad state (netem's 1-h), percent.
        bad: f64,
        /// Loss in the good state (netem's 1-k), percent.
        good: f64,
    },
}

impl Loss {
    /// Whether any packet can be lost.
    pub fn is_none(&self) -> bool {
        match *self {
            Loss::None => true,
            Loss::Random { percent } => percent == 0.0,
            Loss::GilbertElliott { bad, good, .. } => bad == 0.0 && good == 0.0,
        }
    }

    /// The long-run loss rate, percent.
    pub fn mean_percent(&self) -> f64 {
        match *self {
            Loss::None => 0.0,
            Loss::Random { percent } => percent,
            Loss::GilbertElliott { p, r, bad, good } => {
                if p + r == 0.0 {
                    good
                } else {
                    // Stationary share of the bad state is p / (p + r).
                    let pi_bad = p / (p + r);
                    pi_bad * bad + (1.0 - pi_bad) * good
                }
            }
        }
    }
}

/// Parses a percentage: `1%`, `0.5%`, or a bare number meaning percent.
pub fn parse_percent(s: &str) -> Result<f64, ValueError> {
    let t = s.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    let v: f64 = n.parse().map_err(|_| ValueError::NotPercent(s.into()))?;
    if !(0.0..=100.0).contains(&v) {
        return Err(ValueError::PercentRange(s.into()));
    }
    Ok(v)
}

impl std::str::FromStr for Loss {
    type Err = ValueError;
    /// `0`, `1%` (random), or `gemodel:P,R[,BAD[,GOOD]]` (Gilbert-Elliott; BAD
    /// defaults to 100%, GOOD to 0%).
    fn from_str(s: &str) -> Result<Loss, ValueError> {
        let t = s.trim();
        if let Some(rest) = t.strip_prefix("gemodel:").or_else(|| t.strip_prefix("ge:")) {
            let v: Vec<f64> = rest
                .split(',')
                .map(parse_percent)
                .collect::<Result<_, _>>()?;
            if v.len() < 2 || v.len() > 4 {
                return Err(ValueError::GeModel(s.into()));
            }
            return Ok(Loss::GilbertElliott {
                p: v[0],
                r: v[1],
                bad: v.get(2).copied().unwrap_or(100.0),
                good: v.get(3).copied().unwrap_or(0.0),
            });
        }
        let p = parse_percent(t)?;
        Ok(if p == 0.0 {
            Loss::None
        } else {
            Loss::Random { percent: p }
        })
    }
}

impl fmt::Display for Loss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Loss::None => f.write_str("0%"),
            Loss::Random { percent } => write!(f, "{percent}%"),
            Loss::GilbertElliott { p, r, bad, good } => {
                write!(f, "gemodel:{p}%,{r}%,{bad}%,{good}%")
            }
        }
    }
}

/// How much a direction's bottleneck queue holds before it drops at the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Queue {
    /// At most this many bytes.
    Bytes(u64),
    /// At most this many packets.
    Packets(u32),
    /// At most this long to drain at the direction's rate (bytes: rate × time).
    Time(Nanos),
}

impl std::str::FromStr for Queue {
    type Err = ValueError;
    /// `100p` (packets), a size (`64K`, `1MB`) or a time at the rate (`50ms`).
    fn from_str(s: &str) -> Result<Queue, ValueError> {
        let t = s.trim();
        let q = if t.ends_with('s') {
            Queue::Time(t.parse::<Nanos>()?)
        } else if let Some(n) = t
            .strip_suffix("packets")
            .or_else(|| t.strip_suffix("pkts"))
            .or_else(|| t.strip_suffix('p'))
        {
            Queue::Packets(
                n.trim()
                    .parse()
                    .map_err(|_| ValueError::NotPackets(s.into()))?,
            )
        } else {
            Queue::Bytes(t.parse::<Bytes>()?.0)
        };
        if matches!(
            q,
            Queue::Bytes(0) | Queue::Packets(0) | Queue::Time(Nanos::ZERO)
        ) {
            return Err(ValueError::EmptyQueue(s.into()));
        }
        Ok(q)
    }
}

impl Queue {
    /// The form a sweep axis stores, which parses back to the same queue:
    /// `100p`, `65536` (bytes), `50000000ns`.
    pub fn axis_value(&self) -> String {
        match *self {
            Queue::Bytes(b) => b.to_string(),
            Queue::Packets(p) => format!("{p}p"),
            Queue::Time(t) => format!("{}ns", t.0),
        }
    }
}

impl fmt::Display for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Queue::Bytes(b) => write!(f, "{}", Bytes(b)),
            Queue::Packets(p) => write!(f, "{p} packets"),
            Queue::Time(t) => write!(f, "{t} at the rate"),
        }
    }
}

/// The kernel qdisc that limits the rate on a veth link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shaper {
    /// Token bucket filter.
    #[default]
    Tbf,
    /// Hierarchical token bucket, one class.
    Htb,
}

impl std::str::FromStr for Shaper {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Shaper, ValueError> {
        match s.trim() {
            "tbf" => Ok(Shaper::Tbf),
            "htb" => Ok(Shaper::Htb),
            o => Err(ValueError::UnknownShaper(o.into())),
        }
    }
}

impl fmt::Display for Shaper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Shaper::Tbf => "tbf",
            Shaper::Htb => "htb",
        })
    }
}

/// What one direction of the link does.
///
/// A packet is serialized at `rate` behind the packets queued before it (tail drop
/// beyond `queue`), then travels for `delay` ± `jitter` unless it is one of the
/// `reorder` percent that skip the delay; `loss` and `duplicate` apply per packet.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DirLink {
    /// MTU of the sending interface.
    pub mtu: u32,
    /// Line rate; `None` is unlimited. Counts every frame with 38 bytes of Ethernet
    /// overhead beyond the IP packet, as a real Ethernet line does.
    pub rate: Option<BitRate>,
    /// One-way delay.
    pub delay: Nanos,
    /// Uniform jitter: the delay varies within `delay ± jitter`.
    pub jitter: Nanos,
    /// Loss.
    pub loss: Loss,
    /// Share of packets sent ahead without the delay (reordered), percent.
    pub reorder: f64,
    /// Share of packets delivered twice, percent.
    pub duplicate: f64,
    /// Bottleneck queue; `None` is the lab's default (see `netsonde-lab`).
    pub queue: Option<Queue>,
    /// Segmentation and receive offloads in this direction: the sending
    /// interface's TSO and GSO, the receiving one's GRO (`--offloads off`: every
    /// packet through the stack one by one, at most an MTU each).
    #[serde(default = "on", skip_serializing_if = "is_on")]
    pub offloads: bool,
}

fn on() -> bool {
    true
}

fn is_on(b: &bool) -> bool {
    *b
}

/// Parses `on` or `off`.
pub fn parse_on_off(s: &str) -> Result<bool, ValueError> {
    match s.trim() {
        "on" => Ok(true),
        "off" => Ok(false),
        o => Err(ValueError::NotOnOff(o.into())),
    }
}

impl Default for DirLink {
    fn default() -> DirLink {
        DirLink {
            mtu: DEFAULT_MTU,
            rate: None,
            delay: Nanos::ZERO,
            jitter: Nanos::ZERO,
            loss: Loss::None,
            reorder: 0.0,
            duplicate: 0.0,
            queue: None,
            offloads: true,
        }
    }
}

impl DirLink {
    /// Whether the direction needs more than a plain link and a rate limiter: delay,
    /// jitter, loss, reordering or duplication.
    pub fn impaired(&self) -> bool {
        self.delay > Nanos::ZERO
            || self.jitter > Nanos::ZERO
            || !self.loss.is_none()
            || self.reorder > 0.0
            || self.duplicate > 0.0
    }

    fn validate(&self, dir: &str) -> Result<(), LinkError> {
        if !(MIN_MTU..=MAX_MTU).contains(&self.mtu) {
            return Err(bad(
                "mtu",
                ValueError::Range(format!(
                    "{dir}: {} is outside {MIN_MTU}..{MAX_MTU}",
                    self.mtu
                )),
            ));
        }
        if let Some(r) = self.rate {
            if !(r.bps() >= 8_000.0 && r.bps() <= 1e12) {
                return Err(bad(
                    "rate",
                    ValueError::Range(format!("{dir}: {r} is outside 8 kbit/s..1 Tbit/s")),
                ));
            }
        }
        if self.delay > Nanos::from_secs(10) || self.jitter > Nanos::from_secs(10) {
            return Err(bad(
                "delay",
                ValueError::Range(format!("{dir}: at most 10 s of delay or jitter")),
            ));
        }
        if matches!(self.queue, Some(Queue::Time(_))) && self.rate.is_none() {
            return Err(LinkError::Inconsistent(format!(
                "a queue given as a time needs a --rate on the {dir} direction: it holds that long at the rate"
            )));
        }
        if self.reorder > 0.0 && self.delay == Nanos::ZERO {
            return Err(LinkError::Inconsistent(format!(
                "--reorder needs a --delay on the {dir} direction: reordered packets skip the delay"
            )));
        }
        if let Loss::GilbertElliott { p, r, .. } = self.loss {
            if p > 0.0 && r == 0.0 {
                return Err(bad(
                    "loss",
                    ValueError::Range(format!(
                        "{dir}: gemodel with R = 0 never leaves the bad state"
                    )),
                ));
            }
        }
        Ok(())
    }
}

impl fmt::Display for DirLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mtu {}", self.mtu)?;
        if let Some(r) = self.rate {
            write!(f, ", rate {r}")?;
        }
        if self.delay > Nanos::ZERO || self.jitter > Nanos::ZERO {
            write!(f, ", delay {}", self.delay)?;
            if self.jitter > Nanos::ZERO {
                write!(f, " ± {}", self.jitter)?;
            }
        }
        if !self.loss.is_none() {
            write!(f, ", loss {}", self.loss)?;
        }
        if self.reorder > 0.0 {
            write!(f, ", reorder {}%", self.reorder)?;
        }
        if self.duplicate > 0.0 {
            write!(f, ", duplicate {}%", self.duplicate)?;
        }
        if let Some(q) = self.queue {
            write!(f, ", queue {q}")?;
        }
        Ok(())
    }
}

/// Which mechanism the user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MechanismChoice {
    /// veth and a kernel shaper for MTU and rate; for delay, jitter, loss,
    /// reordering or duplication, netem when the kernel has it, else the userspace
    /// emulator.
    #[default]
    Auto,
    /// Kernel only (veth, tbf/htb, netem); an error if netem is needed and missing.
    Kernel,
    /// The userspace emulator (TUN devices) even for a plain link.
    Emulator,
}

impl std::str::FromStr for MechanismChoice {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<MechanismChoice, ValueError> {
        match s.trim() {
            "auto" => Ok(MechanismChoice::Auto),
            "kernel" => Ok(MechanismChoice::Kernel),
            "emulator" => Ok(MechanismChoice::Emulator),
            o => Err(ValueError::UnknownMechanism(o.into())),
        }
    }
}

/// The whole link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSpec {
    /// Client → server.
    pub up: DirLink,
    /// Server → client.
    pub down: DirLink,
    /// Rate limiter on veth links.
    pub shaper: Shaper,
    /// Mechanism requested.
    pub mechanism: MechanismChoice,
    /// Seed of the emulator's random source (loss, duplication, reordering, jitter).
    pub seed: u64,
    /// A second path between the hosts, for MPTCP (`--second-path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second: Option<SecondPath>,
}

/// A second path between the two hosts, for MPTCP to add to the first: a veth
/// pair of its own (10.77.1.0/30), rate-limited by the link's shaper, with the
/// first path's MTU and no impairments. Plain TCP and UDP keep to the first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SecondPath {
    /// Client → server rate; `None` is unshaped.
    pub up: Option<BitRate>,
    /// Server → client rate; `None` is unshaped.
    pub down: Option<BitRate>,
}

impl fmt::Display for SecondPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let rate = |r: Option<BitRate>| r.map_or_else(|| "unshaped".to_string(), |r| r.to_string());
        if self.up == self.down {
            write!(f, "{} each way", rate(self.up))
        } else {
            write!(
                f,
                "client->server {}; server->client {}",
                rate(self.up),
                rate(self.down)
            )
        }
    }
}

impl Default for LinkSpec {
    fn default() -> LinkSpec {
        LinkSpec {
            up: DirLink::default(),
            down: DirLink::default(),
            shaper: Shaper::Tbf,
            mechanism: MechanismChoice::Auto,
            seed: 1,
            second: None,
        }
    }
}

impl LinkSpec {
    /// Whether either direction needs delay, jitter, loss, reordering or
    /// duplication.
    pub fn impaired(&self) -> bool {
        self.up.impaired() || self.down.impaired()
    }

    /// Checks ranges and combinations.
    pub fn validate(&self) -> Result<(), LinkError> {
        self.up.validate("client->server")?;
        self.down.validate("server->client")
    }

    /// This link with a sweep point's link axes applied to both directions.
    pub fn with_point(&self, p: &LinkPoint) -> LinkSpec {
        let mut s = self.clone();
        for d in [&mut s.up, &mut s.down] {
            if let Some(m) = p.mtu {
                d.mtu = m;
            }
            if let Some(r) = p.rate {
                d.rate = (r.bps() > 0.0).then_some(r);
            }
            if let Some(delay) = p.delay {
                d.delay = delay;
            }
            if let Some(l) = p.loss {
                d.loss = l;
            }
            if let Some(q) = p.queue {
                d.queue = Some(q);
            }
            if let Some(o) = p.offloads {
                d.offloads = o;
            }
        }
        s
    }
}

impl fmt::Display for LinkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.up == self.down {
            write!(f, "{} each way", self.up)?;
        } else {
            write!(
                f,
                "client->server {}; server->client {}",
                self.up, self.down
            )?;
        }
        if let Some(p) = &self.second {
            write!(f, "; second path {p}")?;
        }
        Ok(())
    }
}

/// What the lab built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// A veth pair; rate by the kernel shaper.
    Veth,
    /// A veth pair with netem (and the shaper's rate folded into netem).
    Netem,
    /// A TUN device in each namespace, joined by netsonde's userspace emulator.
    Emulator,
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mechanism::Veth => "veth (kernel)",
            Mechanism::Netem => "veth + netem (kernel)",
            Mechanism::Emulator => "TUN + userspace emulator",
        })
    }
}

/// The link a result was measured over: stored with every result of a lab run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The link.
    pub spec: LinkSpec,
    /// How it was built.
    pub mechanism: Mechanism,
    /// One line: the mechanism and its parts (`veth, tbf rate 100 Mbit/s ...`).
    pub detail: String,
}

impl LinkRecord {
    /// The link's rate, the slower direction's, bit/s; `None` when unlimited.
    pub fn rate_bps(&self) -> Option<f64> {
        [self.spec.up.rate, self.spec.down.rate]
            .into_iter()
            .flatten()
            .map(|r| r.bps())
            .reduce(f64::min)
    }

    /// The rate a test's traffic can use, bit/s: the first path's
    /// ([`LinkRecord::rate_bps`]), plus the second path's slower direction for
    /// an MPTCP test when the lab has one. `None` when a path it uses is
    /// unlimited.
    pub fn rate_bps_over(&self, mptcp: bool) -> Option<f64> {
        let first = self.rate_bps()?;
        match self.spec.second {
            Some(p) if mptcp => {
                let second = [p.up?, p.down?].map(|r| r.bps());
                Some(first + second[0].min(second[1]))
            }
            _ => Some(first),
        }
    }
}

/// A sweep point's link axes; `None` keeps the lab's base value.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkPoint {
    /// MTU of both interfaces.
    pub mtu: Option<u32>,
    /// Rate; zero means unlimited.
    pub rate: Option<BitRate>,
    /// One-way delay, each way.
    pub delay: Option<Nanos>,
    /// Loss, each way.
    pub loss: Option<Loss>,
    /// Bottleneck queue, each way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Queue>,
    /// Segmentation and receive offloads, each way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offloads: Option<bool>,
}

impl LinkPoint {
    /// Whether no axis is set.
    pub fn is_empty(&self) -> bool {
        *self == LinkPoint::default()
    }

    /// Reads the link axes from a point's axis map (`mtu`, `rate` in bit/s, `delay`
    /// in ns, `loss` as written).
    pub fn from_axes(
        axes: &std::collections::BTreeMap<String, String>,
    ) -> Result<LinkPoint, LinkError> {
        let get = |k: &str| axes.get(k).map(String::as_str);
        let num = |key: &'static str, v: &str| {
            v.parse::<f64>()
                .map_err(|_| bad(key, ValueError::NotNumber(v.into())))
        };
        Ok(LinkPoint {
            mtu: get("mtu")
                .map(|v| {
                    v.parse::<u32>()
                        .map_err(|_| bad("mtu", ValueError::NotNumber(v.into())))
                })
                .transpose()?,
            rate: get("rate")
                .map(|v| num("rate", v).map(BitRate))
                .transpose()?,
            delay: get("delay")
                .map(|v| {
                    v.parse::<u64>()
                        .map(Nanos)
                        .map_err(|_| bad("delay", ValueError::NotNumber(v.into())))
                })
                .transpose()?,
            loss: get("loss")
                .map(|v| v.parse::<Loss>().map_err(|e| bad("loss", e)))
                .transpose()?,
            queue: get("queue")
                .map(|v| v.parse::<Queue>().map_err(|e| bad("queue", e)))
                .transpose()?,
            offloads: get("offloads")
                .map(|v| parse_on_off(v).map_err(|e| bad("offloads", e)))
                .transpose()?,
        })
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
