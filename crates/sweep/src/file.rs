//! Experiment files: a declarative sweep (`netsonde run FILE.toml`). The command
//! line's `netsonde sweep` flags fill the same [`Experiment`] fields, so both paths
//! build plans in one place. Unknown keys are errors. Every key is optional; what is
//! missing comes from the default characterization.
//!
//! ```toml
//! label = "window study"        # shown in `runs list`
//! host = "192.0.2.10"           # omit for the embedded loopback server
//! port = 5300
//! tests = ["tcp-stream", "tcp-rr"]
//! directions = ["out", "in", "bidir"]
//! sizes = "64,256,1K..64K"      # axis syntax, see netsonde_sweep::axes
//! windows = ["default", "64K", "256K"]
//! parallel = [1, 2]
//! repeat = 5
//! time = "2s"
//! warmup = "500ms"
//! interval = "250ms"
//! seed = 1
//! line_rate = "10G"
//! # In the lab only (`netsonde lab run FILE`): link axes.
//! mtus = [1500, 9000, 65535]
//! rates = ["100M", "1G"]        # 0 is unlimited
//! delays = ["0", "10ms"]        # one-way, each way
//! queues = ["10p", "1000p"]     # bottleneck queue: packets, bytes or time at the rate
//! losses = ["0", "1%", "gemodel:1%,30%"]
//! offloads = ["off", "on"]      # TSO/GSO and GRO on the veth link, each way
//!
//! [options]                     # fixed for every point
//! nodelay = true
//! congestion = "cubic"
//! mss = 1448
//! rate = "1G"                   # pacing per stream
//! affinity = [0]
//! server_affinity = [1]
//! no_gso = true                 # UDP batch without GSO/GRO: a packet a datagram
//! samples = true                # TCP_INFO over time: a report page per point
//!
//! [link]                        # lab only: the base link, netsonde_model::link
//! rate = "1G"
//! delay = "114ms"
//! ```

use netsonde_model::link::{parse_mtu, parse_on_off, LinkSettings, Loss, Queue};
use netsonde_model::spec::{Direction, TestKind};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use serde::{Deserialize, Serialize};

use crate::axes::{parse_list, parse_sizes};
use crate::plan::{LinkAxes, Plan};

/// Why an experiment could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FileError {
    /// TOML syntax or an unknown key.
    #[error("{0}")]
    Toml(String),
    /// A value that does not parse.
    #[error("{key}: {message}")]
    Value {
        /// The key.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Fixed options for every point.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// `TCP_NODELAY`.
    pub nodelay: Option<bool>,
    /// Congestion control.
    pub congestion: Option<String>,
    /// MSS.
    pub mss: Option<u32>,
    /// Pacing per stream.
    pub rate: Option<String>,
    /// Client cores.
    pub affinity: Option<Vec<usize>>,
    /// Server cores.
    pub server_affinity: Option<Vec<usize>>,
    /// UDP segmentation and receive offload off (`--no-gso`): `batch` moves
    /// datagrams with sendmmsg/recvmmsg, one packet each, not GSO's
    /// super-datagrams.
    pub no_gso: Option<bool>,
    /// Every TCP sender's `TCP_INFO` over time (`sweep --samples`): the
    /// report's page per point.
    pub samples: Option<bool>,
}

/// An experiment: what the file (or the flags) say.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// Label.
    pub label: Option<String>,
    /// Server host.
    pub host: Option<String>,
    /// Server port.
    pub port: Option<u16>,
    /// Tests.
    pub tests: Option<Vec<String>>,
    /// Directions.
    pub directions: Option<Vec<String>>,
    /// Size axis.
    pub sizes: Option<String>,
    /// Window axis (`default` for the kernel's).
    pub windows: Option<Vec<String>>,
    /// Parallel axis.
    pub parallel: Option<Vec<u32>>,
    /// I/O strategy axis (`copy`, `batch`, ...; both ends).
    pub io: Option<Vec<String>>,
    /// Pacing axis, per stream (`["100M", "1G", "0"]`; `0` is unpaced).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub pacing: Option<Vec<String>>,
    /// Repetitions.
    pub repeat: Option<u32>,
    /// Measured time per repetition.
    pub time: Option<String>,
    /// Warm-up per repetition.
    pub warmup: Option<String>,
    /// Interval sampling period (steadiness).
    pub interval: Option<String>,
    /// Shuffle seed.
    pub seed: Option<u64>,
    /// Line rate.
    pub line_rate: Option<String>,
    /// Fixed options.
    pub options: Option<Options>,
    /// Lab link axis: MTUs (`[1500, 9000, 65535]`).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub mtus: Option<Vec<String>>,
    /// Lab link axis: rates (`["100M", "1G"]`; `0` is unlimited).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub rates: Option<Vec<String>>,
    /// Lab link axis: one-way delays, each way (`["0", "10ms", "100ms"]`).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub delays: Option<Vec<String>>,
    /// Lab link axis: losses, each way (`["0", "1%", "gemodel:1%,30%"]`).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub losses: Option<Vec<String>>,
    /// Lab link axis: bottleneck queues, each way (`["10p", "1000p", "64K", "50ms"]`).
    #[serde(default, deserialize_with = "strings_or_numbers")]
    pub queues: Option<Vec<String>>,
    /// Lab link axis: segmentation and receive offloads (`["off", "on"]`).
    #[serde(default)]
    pub offloads: Option<Vec<String>>,
    /// The lab's link (`netsonde lab run FILE`), see `netsonde_model::link`.
    pub link: Option<LinkSettings>,
}

/// Accepts a list of strings or numbers (`mtus = [1500, 9000]`).
fn strings_or_numbers<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum V {
        S(String),
        I(i64),
        F(f64),
    }
    Ok(Option::<Vec<V>>::deserialize(d)?.map(|v| {
        v.into_iter()
            .map(|v| match v {
                V::S(s) => s,
                V::I(i) => i.to_string(),
                V::F(f) => f.to_string(),
            })
            .collect()
    }))
}

fn val<T, E: std::fmt::Display>(key: &'static str, r: Result<T, E>) -> Result<T, FileError> {
    r.map_err(|e| FileError::Value {
        key,
        message: e.to_string(),
    })
}

impl Experiment {
    /// Parses a TOML experiment file.
    pub fn parse(text: &str) -> Result<Experiment, FileError> {
        toml::from_str(text).map_err(|e| FileError::Toml(e.to_string().trim().replace('\n', " ")))
    }

    /// The plan: the default characterization with this experiment's values.
    pub fn plan(&self) -> Result<Plan, FileError> {
        let mut p = Plan::default_characterization();
        if let Some(t) = &self.tests {
            p.tests = val("tests", t.iter().map(|s| s.parse::<TestKind>()).collect())?;
        }
        if let Some(d) = &self.directions {
            p.directions = val(
                "directions",
                d.iter()
                    .map(|s| match s.as_str() {
                        "out" => Ok(Direction::Out),
                        "in" => Ok(Direction::In),
                        "bidir" => Ok(Direction::Bidir),
                        o => Err(format!("unknown direction '{o}' (out, in, bidir)")),
                    })
                    .collect(),
            )?;
        }
        if let Some(s) = &self.sizes {
            p.sizes = val("sizes", parse_sizes(s))?;
        }
        if let Some(w) = &self.windows {
            p.windows = val(
                "windows",
                w.iter()
                    .map(|s| {
                        if s == "default" {
                            Ok(None)
                        } else {
                            s.parse::<Bytes>().map(Some)
                        }
                    })
                    .collect(),
            )?;
        }
        if let Some(n) = &self.parallel {
            p.parallel = n.clone();
        }
        if let Some(io) = &self.io {
            p.io = val(
                "io",
                io.iter()
                    .map(|s| s.parse::<netsonde_model::spec::IoStrategy>())
                    .collect(),
            )?;
        }
        if let Some(rates) = &self.pacing {
            if rates.is_empty() {
                return Err(FileError::Value {
                    key: "pacing",
                    message: "an axis needs at least one value".into(),
                });
            }
            p.pacing = rates
                .iter()
                .map(|s| val("pacing", s.parse::<BitRate>()))
                .collect::<Result<_, _>>()?;
        }
        if let Some(r) = self.repeat {
            if r == 0 || r > 1000 {
                return Err(FileError::Value {
                    key: "repeat",
                    message: format!("must be 1 to 1000, got {r}"),
                });
            }
            p.repeat = r;
        }
        if let Some(t) = &self.time {
            p.base.duration = val("time", t.parse::<Nanos>())?;
        }
        if let Some(t) = &self.warmup {
            p.base.warmup = val("warmup", t.parse::<Nanos>())?;
        }
        if let Some(t) = &self.interval {
            p.base.interval = Some(val("interval", t.parse::<Nanos>())?);
        }
        if let Some(s) = self.seed {
            p.seed = s;
        }
        if let Some(l) = &self.line_rate {
            p.line_rate = Some(val("line_rate", l.parse::<BitRate>())?);
        }
        if let Some(o) = &self.options {
            p.base.nodelay = o.nodelay.unwrap_or(p.base.nodelay);
            p.base.no_gso = o.no_gso.unwrap_or(p.base.no_gso);
            p.base.samples = o.samples.unwrap_or(p.base.samples);
            p.base.congestion = o.congestion.clone();
            p.base.mss = o.mss;
            if let Some(r) = &o.rate {
                p.base.rate =
                    netsonde_model::spec::pacing(val("options.rate", r.parse::<BitRate>())?);
            }
            p.base.client_affinity = o.affinity.clone().unwrap_or_default();
            p.base.server_affinity = o.server_affinity.clone().unwrap_or_default();
        }
        p.link_axes = self.link_axes()?;
        p.link = self.link.clone();
        if let Some(l) = &self.link {
            val("link", l.spec())?;
        }
        if p.tests.is_empty()
            || p.directions.is_empty()
            || p.windows.is_empty()
            || p.parallel.is_empty()
        {
            return Err(FileError::Value {
                key: "axes",
                message: "every axis needs at least one value".into(),
            });
        }
        // Validate the shared options once, on a representative spec, so that a bad
        // duration is one error and not one skipped point per combination.
        let mut probe = p.base.clone();
        let defaults = netsonde_model::spec::TestSpec::new(p.tests[0]);
        probe.test = p.tests[0];
        probe.size = defaults.size;
        if probe.test.is_rr() {
            probe.rate = None;
        }
        val("options", probe.validate())?;
        let n = p.size_bound();
        if n > crate::plan::MAX_POINTS {
            return Err(FileError::Value {
                key: "axes",
                message: format!(
                    "the axes make {n} points, more than the {} a plan may have",
                    crate::plan::MAX_POINTS
                ),
            });
        }
        Ok(p)
    }
}

impl Experiment {
    /// The lab link axes (`mtus`, `rates`, `delays`, `losses`); empty when none is
    /// given.
    pub fn link_axes(&self) -> Result<LinkAxes, FileError> {
        fn each<T, E: std::fmt::Display>(
            key: &'static str,
            v: &Option<Vec<String>>,
            f: impl Fn(&str) -> Result<T, E>,
        ) -> Result<Vec<T>, FileError> {
            match v {
                None => Ok(Vec::new()),
                Some(v) if v.is_empty() => Err(FileError::Value {
                    key,
                    message: "an axis needs at least one value".into(),
                }),
                Some(v) => v.iter().map(|s| val(key, f(s))).collect(),
            }
        }
        Ok(LinkAxes {
            mtu: each("mtus", &self.mtus, parse_mtu)?,
            rate: each("rates", &self.rates, str::parse::<BitRate>)?,
            delay: each("delays", &self.delays, str::parse::<Nanos>)?,
            loss: each("losses", &self.losses, str::parse::<Loss>)?,
            queue: each("queues", &self.queues, str::parse::<Queue>)?,
            offloads: each("offloads", &self.offloads, parse_on_off)?,
        })
    }
}

/// Parses a comma-separated flag value into strings (for building an
/// [`Experiment`] from the command line).
pub fn strings(s: &str) -> Result<Vec<String>, String> {
    parse_list(s, |i| Ok::<_, String>(i.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_file_parses() {
        let e = Experiment::parse(
            r#"
            label = "windows"
            tests = ["tcp-stream", "tcp-rr"]
            directions = ["out", "bidir"]
            sizes = "1K..4K"
            windows = ["default", "64K"]
            parallel = [1, 2]
            repeat = 5
            time = "2s"
            warmup = "500ms"
            line_rate = "10G"
            [options]
            congestion = "cubic"
            "#,
        )
        .unwrap();
        let p = e.plan().unwrap();
        let udp = "tests = [\"udp-stream\"]\n[options]\nno_gso = true\n";
        assert!(Experiment::parse(udp).unwrap().plan().unwrap().base.no_gso);
        assert_eq!(p.repeat, 5);
        assert_eq!(p.sizes, vec![Bytes(1024), Bytes(2048), Bytes(4096)]);
        assert_eq!(p.windows, vec![None, Some(Bytes(65536))]);
        assert_eq!(p.base.duration, Nanos::from_secs(2));
        assert_eq!(p.line_rate, Some(BitRate(1e10)));
        assert_eq!(p.base.congestion.as_deref(), Some("cubic"));
        // stream: 2 dirs x 3 sizes x 2 windows x 2 parallel; rr: 1 dir x 3 x 2 x 2
        assert_eq!(p.points().0.len(), 24 + 12);
    }

    #[test]
    fn lab_keys_parse() {
        let e = Experiment::parse(
            r#"
            mtus = [1500, "9000", 65535]
            delays = ["0", "10ms"]
            losses = ["0", "gemodel:1%,30%"]
            rates = ["0", "100M"]
            [link]
            rate = "1G"
            mtu = 9000
            "#,
        )
        .unwrap();
        let p = e.plan().unwrap();
        assert_eq!(p.link_axes.mtu, vec![1500, 9000, 65535]);
        assert_eq!(p.link_axes.rate, vec![BitRate(0.0), BitRate(1e8)]);
        assert_eq!(p.link.as_ref().unwrap().mtu.as_deref(), Some("9000"));
        assert_eq!(p.points().0.len(), 12 * 3 * 2 * 2 * 2);
        let e = Experiment::parse("mtus = [64]")
            .unwrap()
            .plan()
            .unwrap_err();
        assert!(e.to_string().starts_with("mtus:"), "{e}");
        let e = Experiment::parse("[link]\nmtu = 1\n")
            .unwrap()
            .plan()
            .unwrap_err();
        assert!(e.to_string().contains("mtu"), "{e}");
        let e = Experiment::parse("[link]\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
    }

    #[test]
    fn unknown_keys_and_bad_values_are_errors() {
        let e = Experiment::parse("sizes = \"1K\"\nbogus = 1\n").unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = Experiment::parse("[options]\nnodelayy = true\n").unwrap_err();
        assert!(e.to_string().contains("nodelayy"), "{e}");
        let e = Experiment::parse("tests = [\"tcp-x\"]")
            .unwrap()
            .plan()
            .unwrap_err();
        assert!(e.to_string().contains("unknown test 'tcp-x'"), "{e}");
        let e = Experiment::parse("time = \"0\"")
            .unwrap()
            .plan()
            .unwrap_err();
        assert!(e.to_string().contains("--time"), "{e}");
        let e = Experiment::parse("repeat = 0").unwrap().plan().unwrap_err();
        assert!(e.to_string().contains("repeat"), "{e}");
    }
}
