//! A cluster lab (`netsonde lab mesh`): hosts `h1`...`hN`, each in a namespace of
//! its own (`sonde-NAME-hI`, interface `e0`, address 10.78.0.I/24), joined by
//! one bridge in another namespace (`sonde-NAME-br`, where the controller runs
//! at 10.78.0.254). Each host's egress may be shaped by htb: a base rate for
//! everything it sends, and slower classes for chosen destinations (a u32 filter
//! on the destination address), so one pair's link can be slow among fast ones.
//!
//! It keeps the same state file as a two-host lab ([`crate::state`]): written
//! before anything is made, its namespaces and processes recorded, so a drop, a
//! panic or `lab clean` after a SIGKILL removes exactly what it made.

use std::net::Ipv4Addr;
use std::process::{Child, Command};

use netsonde_model::link::{DirLink, LinkRecord, LinkSpec, Mechanism, Shaper};
use netsonde_model::units::BitRate;
use serde::{Deserialize, Serialize};

use crate::cmd::{ip, ip_in, tc_in};
use crate::error::{LabError, Result};
use crate::qdisc::WIRE_EXTRA;
use crate::state::{Kind, LabState, StateDir};
use crate::topology::{claim, spawn_recorded, teardown, Spawn, PREFIX};

/// The most hosts a cluster lab makes.
pub const MAX_HOSTS: usize = 64;
/// Interface of each host.
pub const HOST_DEV: &str = "e0";

/// Host `i`'s address (1-based); 254 is the controller on the bridge.
pub fn host_addr(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 78, 0, i as u8)
}

/// The bridge's (the controller's) address.
pub const BRIDGE_ADDR: Ipv4Addr = Ipv4Addr::new(10, 78, 0, 254);

/// How `lab mesh` tells the controller it runs the cluster: the
/// [`ClusterSpec`] as JSON (so each pair's report records its link).
pub const ENV_CLUSTER: &str = "NETSONDE_LAB_CLUSTER";

/// Whether `addr` is a cluster lab host's address (10.78.0.0/24): a run that
/// names one was measured in a cluster lab and resumes only inside one.
pub fn is_cluster_addr(addr: &str) -> bool {
    addr.parse::<Ipv4Addr>()
        .is_ok_and(|a| a.octets()[..3] == [10, 78, 0])
}

/// A slower link between two hosts, each way.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SlowPair {
    /// One host, 1-based.
    pub a: usize,
    /// The other.
    pub b: usize,
    /// Its rate each way (counted as an Ethernet line: 38 B per frame).
    pub rate: BitRate,
    /// Slowed only this long after the lab's invocation starts (`=RATE@AFTER`):
    /// until then the pair runs at the base rate, so a monitor sees a link
    /// get worse between its rounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<netsonde_model::units::Nanos>,
    /// When that is, Unix seconds (set by the lab as it starts the invocation),
    /// so the controller records each pair's link as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_unix_s: Option<u64>,
}

impl SlowPair {
    /// Parses `hA-hB=RATE` (`h2-h4=100M`), or `hA-hB=RATE@AFTER` for a pair
    /// slowed that long after the invocation starts (`h2-h4=100M@30s`).
    pub fn parse(s: &str) -> std::result::Result<SlowPair, String> {
        let bad = || format!("--slow '{s}': expected hA-hB=RATE[@AFTER], e.g. h2-h4=100M");
        let (pair, rate) = s.split_once('=').ok_or_else(bad)?;
        let (rate, after) = match rate.split_once('@') {
            Some((r, t)) => (
                r,
                Some(
                    t.trim()
                        .parse::<netsonde_model::units::Nanos>()
                        .map_err(|e| format!("--slow '{s}': {e}"))?,
                ),
            ),
            None => (rate, None),
        };
        let (a, b) = pair.split_once('-').ok_or_else(bad)?;
        let host = |h: &str| {
            h.trim()
                .strip_prefix('h')
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n >= 1)
                .ok_or_else(bad)
        };
        let rate: BitRate = rate
            .trim()
            .parse()
            .map_err(|e| format!("--slow '{s}': {e}"))?;
        if rate.0 <= 0.0 {
            return Err(format!("--slow '{s}': the rate must be above 0"));
        }
        let (a, b) = (host(a)?, host(b)?);
        if a == b {
            return Err(format!("--slow '{s}': a host has no link to itself"));
        }
        Ok(SlowPair {
            a,
            b,
            rate,
            after,
            from_unix_s: None,
        })
    }
}

/// What a cluster lab is made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSpec {
    /// Hosts, 2 to [`MAX_HOSTS`].
    pub hosts: usize,
    /// Every host's egress rate (`None`: unshaped, as fast as the veth goes).
    pub rate: Option<BitRate>,
    /// Slower pairs.
    pub slow: Vec<SlowPair>,
}

impl ClusterSpec {
    /// Refuses too few or too many hosts and slow pairs naming a host beyond them.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !(2..=MAX_HOSTS).contains(&self.hosts) {
            return Err(format!("--hosts {}: 2 to {MAX_HOSTS}", self.hosts));
        }
        for s in &self.slow {
            if s.a > self.hosts || s.b > self.hosts {
                return Err(format!(
                    "--slow h{}-h{}: the cluster has hosts h1 to h{}",
                    s.a, s.b, self.hosts
                ));
            }
        }
        Ok(())
    }

    /// The link between hosts `a` and `b` (1-based) as a lab records one: the
    /// slow pair's rate each way, else the base rate, shaped by htb on veth;
    /// `None` when that path is unshaped.
    pub fn link(&self, a: usize, b: usize) -> Option<LinkRecord> {
        self.link_at(a, b, u64::MAX)
    }

    /// [`ClusterSpec::link`] as it was at `unix_s`: a pair slowed later runs
    /// at the base rate before its time.
    pub fn link_at(&self, a: usize, b: usize, unix_s: u64) -> Option<LinkRecord> {
        let rate = self
            .slow
            .iter()
            .find(|s| (s.a, s.b) == (a, b) || (s.a, s.b) == (b, a))
            .filter(|s| s.from_unix_s.is_none_or(|t| unix_s >= t))
            .map(|s| s.rate)
            .or(self.rate)?;
        let dir = DirLink {
            rate: Some(rate),
            ..DirLink::default()
        };
        Some(LinkRecord {
            spec: LinkSpec {
                up: dir,
                down: dir,
                shaper: Shaper::Htb,
                ..LinkSpec::default()
            },
            mechanism: Mechanism::Veth,
            detail: format!(
                "cluster lab h{a}-h{b}: veth to a bridge, htb rate {rate} each way on each \
                 host's egress (overhead charged once per GSO packet)"
            ),
        })
    }

    /// The `tc` commands that shape host `i`'s egress: none when nothing is
    /// shaped; else htb with a default class at the base rate (100 Gbit/s when
    /// unshaped) and a class per slower destination.
    pub fn shaping(&self, i: usize) -> Vec<Vec<String>> {
        let bits = |r: BitRate| format!("{}bit", r.0.round() as u64);
        let base = self.rate.map_or_else(|| "100gbit".to_string(), bits);
        // A pair slowed later starts at the base rate, in a class of its own.
        let slow: Vec<(usize, String)> = self
            .slow_of(i)
            .into_iter()
            .map(|(dst, s)| {
                (
                    dst,
                    if s.after.is_some() {
                        base.clone()
                    } else {
                        bits(s.rate)
                    },
                )
            })
            .collect();
        if self.rate.is_none() && slow.is_empty() {
            return Vec::new();
        }
        let overhead = WIRE_EXTRA.to_string();
        let mut cmds: Vec<Vec<String>> = vec![
            words(&[
                "qdisc", "add", "dev", HOST_DEV, "root", "handle", "1:", "htb", "default", "1",
            ]),
            words(&[
                "class", "add", "dev", HOST_DEV, "parent", "1:", "classid", "1:1", "htb", "rate",
            ])
            .into_iter()
            .chain([base, "overhead".into(), overhead.clone()])
            .collect(),
        ];
        for (k, (dst, rate)) in slow.iter().enumerate() {
            let class = format!("1:{}", 10 + k);
            cmds.push(
                words(&["class", "add", "dev", HOST_DEV, "parent", "1:", "classid"])
                    .into_iter()
                    .chain([class.clone(), "htb".into(), "rate".into(), rate.clone()])
                    .chain(["overhead".into(), overhead.clone()])
                    .collect(),
            );
            cmds.push(
                words(&[
                    "filter", "add", "dev", HOST_DEV, "parent", "1:", "protocol", "ip",
                ])
                .into_iter()
                .chain(words(&["prio", "1", "u32", "match", "ip", "dst"]))
                .chain([format!("{}/32", host_addr(*dst)), "flowid".into(), class])
                .collect(),
            );
        }
        cmds
    }
}

impl ClusterSpec {
    /// Host `i`'s slower destinations, in the order its classes are numbered.
    fn slow_of(&self, i: usize) -> Vec<(usize, &SlowPair)> {
        self.slow
            .iter()
            .filter_map(|s| match (s.a == i, s.b == i) {
                (true, _) => Some((s.b, s)),
                (_, true) => Some((s.a, s)),
                _ => None,
            })
            .collect()
    }

    /// The `tc` changes that slow host `i`'s later pairs, each with how long
    /// after the invocation starts it is due.
    pub fn later(&self, i: usize) -> Vec<(netsonde_model::units::Nanos, Vec<String>)> {
        self.slow_of(i)
            .into_iter()
            .enumerate()
            .filter_map(|(k, (_, s))| {
                let cmd = words(&[
                    "class", "change", "dev", HOST_DEV, "parent", "1:", "classid",
                ])
                .into_iter()
                .chain([
                    format!("1:{}", 10 + k),
                    "htb".into(),
                    "rate".into(),
                    format!("{}bit", s.rate.0.round() as u64),
                    "overhead".into(),
                    WIRE_EXTRA.to_string(),
                ])
                .collect();
                Some((s.after?, cmd))
            })
            .collect()
    }
}

/// Runs one of [`ClusterSpec::later`]'s changes in the host namespace `ns`.
pub fn change(ns: &str, cmd: &[String]) -> Result<()> {
    tc_in(ns, cmd).map(|_| ())
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// A cluster lab; torn down on drop.
#[derive(Debug)]
pub struct Cluster {
    dir: StateDir,
    state: LabState,
    hosts: usize,
    done: bool,
}

impl Cluster {
    /// Makes cluster lab `name` as `spec` says: the state file first, then the
    /// namespaces, the bridge, each host's link and its shaping.
    pub fn create(dir: &StateDir, name: &str, spec: &ClusterSpec) -> Result<Cluster> {
        spec.validate().map_err(LabError::BadCluster)?;
        let mut names: Vec<String> = (1..=spec.hosts)
            .map(|i| format!("{PREFIX}{name}-h{i}"))
            .collect();
        names.push(format!("{PREFIX}{name}-br"));
        let (state, _lock) = claim(dir, name, Kind::Run, names)?;
        let c = Cluster {
            dir: dir.clone(),
            state,
            hosts: spec.hosts,
            done: false,
        };
        c.build(spec)?;
        Ok(c)
    }

    fn build(&self, spec: &ClusterSpec) -> Result<()> {
        let br = self.bridge_namespace();
        ip(&["netns", "add", br])?;
        ip_in(br, &["link", "set", "lo", "up"])?;
        ip_in(br, &["link", "add", "br0", "type", "bridge"])?;
        ip_in(br, &["link", "set", "br0", "up"])?;
        ip_in(
            br,
            &["addr", "add", &format!("{BRIDGE_ADDR}/24"), "dev", "br0"],
        )?;
        for i in 1..=self.hosts {
            let ns = self.host_namespace(i);
            let port = format!("p{i}");
            ip(&["netns", "add", ns])?;
            ip_in(ns, &["link", "set", "lo", "up"])?;
            ip(&[
                "link", "add", HOST_DEV, "netns", ns, "type", "veth", "peer", "name", &port,
                "netns", br,
            ])?;
            ip_in(br, &["link", "set", &port, "master", "br0", "up"])?;
            ip_in(
                ns,
                &[
                    "addr",
                    "add",
                    &format!("{}/24", host_addr(i)),
                    "dev",
                    HOST_DEV,
                ],
            )?;
            ip_in(ns, &["link", "set", HOST_DEV, "up"])?;
            for cmd in spec.shaping(i) {
                tc_in(ns, &cmd)?;
            }
        }
        Ok(())
    }

    /// Host `i`'s namespace (1-based).
    pub fn host_namespace(&self, i: usize) -> &str {
        &self.state.namespaces[i - 1]
    }

    /// The bridge's namespace, where the controller runs.
    pub fn bridge_namespace(&self) -> &str {
        &self.state.namespaces[self.hosts]
    }

    /// Starts a netsonde command line in namespace `ns` (one of this lab's)
    /// with `env` added, recorded so that the teardown stops it; it dies with
    /// this process.
    pub fn spawn(
        &mut self,
        ns: &str,
        role: &str,
        args: &[String],
        env: &[(String, String)],
        configure: impl FnOnce(&mut Command),
    ) -> Result<Child> {
        let ns = ns.to_string();
        let how = Spawn {
            role,
            args,
            env,
            daemon: false,
        };
        spawn_recorded(&self.dir, &mut self.state, &ns, how, configure)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.done {
            self.done = true;
            if let Err(e) = teardown(&self.dir, &self.state) {
                eprintln!("netsonde lab: tearing down '{}': {e}", self.state.name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_pairs_parse_and_shape_both_ends() {
        let s = SlowPair::parse("h2-h4=100M").unwrap();
        assert_eq!((s.a, s.b, s.rate.0), (2, 4, 100e6));
        assert!(SlowPair::parse("h2-h2=1M").unwrap_err().contains("itself"));
        assert!(SlowPair::parse("2-4=1M").is_err());
        assert!(SlowPair::parse("h2-h4").is_err());
        let spec = ClusterSpec {
            hosts: 5,
            rate: None,
            slow: vec![s],
        };
        assert!(spec.validate().is_ok());
        assert!(spec.shaping(1).is_empty());
        let h2: Vec<String> = spec.shaping(2).iter().map(|c| c.join(" ")).collect();
        assert_eq!(h2.len(), 4);
        assert!(
            h2[2].contains("classid 1:10 htb rate 100000000bit overhead 24"),
            "{h2:?}"
        );
        assert!(
            h2[3].ends_with("match ip dst 10.78.0.4/32 flowid 1:10"),
            "{h2:?}"
        );
        let h4 = spec.shaping(4);
        assert!(h4[3].join(" ").contains("10.78.0.2/32"));
        let bad = ClusterSpec {
            hosts: 3,
            rate: None,
            slow: vec![s],
        };
        assert!(bad.validate().unwrap_err().contains("h1 to h3"));
        assert!(ClusterSpec {
            hosts: 1,
            rate: None,
            slow: vec![]
        }
        .validate()
        .is_err());
    }

    /// Issue 38: a pair slowed later starts at the base rate in its own
    /// class, changed to its rate when due; its link is recorded as it was.
    #[test]
    fn a_pair_slowed_later_starts_at_the_base_rate_and_changes_when_due() {
        let mut s = SlowPair::parse("h1-h3=50M@20s").unwrap();
        assert_eq!(s.after, Some(netsonde_model::units::Nanos::from_secs(20)));
        assert!(SlowPair::parse("h1-h3=50M@soon").is_err());
        s.from_unix_s = Some(1_000);
        let spec = ClusterSpec {
            hosts: 3,
            rate: Some(BitRate(500e6)),
            slow: vec![s],
        };
        let h1: Vec<String> = spec.shaping(1).iter().map(|c| c.join(" ")).collect();
        assert!(
            h1[2].contains("classid 1:10 htb rate 500000000bit"),
            "{h1:?}"
        );
        let later = spec.later(1);
        assert_eq!(later.len(), 1);
        assert_eq!(later[0].0, netsonde_model::units::Nanos::from_secs(20));
        assert!(later[0]
            .1
            .join(" ")
            .contains("class change dev e0 parent 1: classid 1:10 htb rate 50000000bit"));
        assert!(spec.later(2).is_empty());
        let rate = |t| {
            spec.link_at(1, 3, t)
                .and_then(|l| l.spec.up.rate)
                .map(|r| r.0)
        };
        assert_eq!(rate(999), Some(500e6));
        assert_eq!(rate(1_000), Some(50e6));
    }
}
