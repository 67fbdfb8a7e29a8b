//! Meshes: a plan measured between many hosts. Each host runs `netsonde agent`;
//! a pattern says which ordered pairs (source, destination) are measured, and
//! every point of the plan runs once per pair, the pair recorded in the point's
//! axes (`src`, `dst`). Pure: the controller (`netsonde mesh`) sends each point
//! to its source agent as a job.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// The most agents a mesh may name: an all-to-all of 1,000 is a million pairs,
/// which the plan's point limit refuses anyway; this bounds the list itself.
pub const MAX_AGENTS: usize = 10_000;

/// One agent: a name for reports and where its control port is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// Its name (`h1`, a node name); unique within the mesh.
    pub name: String,
    /// Host name or address, as the controller and the other agents reach it.
    pub host: String,
    /// Control port.
    pub port: u16,
}

impl Agent {
    /// Parses `NAME=HOST[:PORT]` or `HOST[:PORT]` (the name is then the host);
    /// an IPv6 address with a port is written `[::1]:5300`.
    pub fn parse(s: &str, default_port: u16) -> Result<Agent, String> {
        let s = s.trim();
        let (name, addr) = match s.split_once('=') {
            Some((n, a)) => (Some(n.trim()), a.trim()),
            None => (None, s),
        };
        let (host, port) = split_port(addr, default_port)
            .ok_or_else(|| format!("agent '{s}': expected NAME=HOST[:PORT]"))?;
        let name = name.unwrap_or(host).to_string();
        let ok_name = |c: char| c.is_ascii_alphanumeric() || "-_.:".contains(c);
        if name.is_empty() || !name.chars().all(ok_name) || name.len() > 64 {
            return Err(format!(
                "agent '{s}': a name is 1-64 letters, digits, '-', '_', '.' or ':'"
            ));
        }
        if host.is_empty() {
            return Err(format!("agent '{s}': no host"));
        }
        Ok(Agent {
            name,
            host: host.to_string(),
            port,
        })
    }
}

fn split_port(addr: &str, default_port: u16) -> Option<(&str, u16)> {
    if let Some(rest) = addr.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            Some(p) => Some((host, p.parse().ok().filter(|&p| p > 0)?)),
            None if after.is_empty() => Some((host, default_port)),
            None => None,
        };
    }
    match addr.rsplit_once(':') {
        // A bare IPv6 address has several colons and no port.
        Some((h, p)) if !h.contains(':') => Some((h, p.parse().ok().filter(|&p| p > 0)?)),
        _ => Some((addr, default_port)),
    }
}

/// Which ordered pairs a mesh measures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind", deny_unknown_fields)]
pub enum Pattern {
    /// Every agent to every other: n(n-1) pairs.
    AllToAll,
    /// Each agent to the next in the list, the last to the first: n pairs.
    Ring,
    /// Every other agent to `center` (N clients, one server): n-1 pairs.
    Star {
        /// The server's name.
        center: String,
    },
    /// The pairs listed, by name.
    Pairs {
        /// (source, destination).
        pairs: Vec<(String, String)>,
    },
}

impl Pattern {
    /// Parses `all-to-all`, `ring`, `star:NAME` or `pairs:A-B,C-D`.
    pub fn parse(s: &str) -> Result<Pattern, String> {
        let s = s.trim();
        match s.split_once(':') {
            None if s == "all-to-all" => Ok(Pattern::AllToAll),
            None if s == "ring" => Ok(Pattern::Ring),
            Some(("star", c)) if !c.is_empty() => Ok(Pattern::Star {
                center: c.to_string(),
            }),
            Some(("pairs", list)) => {
                let pairs = list
                    .split(',')
                    .map(|p| {
                        p.split_once('>')
                            .or_else(|| p.split_once('-'))
                            .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
                            .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                            .ok_or_else(|| format!("pair '{p}': expected SRC-DST"))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Pattern::Pairs { pairs })
            }
            _ => Err(format!(
                "unknown pattern '{s}': all-to-all, ring, star:NAME or pairs:SRC-DST,..."
            )),
        }
    }

    /// Its name as a user writes it.
    pub fn name(&self) -> String {
        match self {
            Pattern::AllToAll => "all-to-all".into(),
            Pattern::Ring => "ring".into(),
            Pattern::Star { center } => format!("star:{center}"),
            Pattern::Pairs { pairs } => format!(
                "pairs:{}",
                pairs
                    .iter()
                    .map(|(a, b)| format!("{a}-{b}"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        }
    }
}

/// A mesh: its agents and the ordered pairs measured between them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mesh {
    /// The agents, in the order given.
    pub agents: Vec<Agent>,
    /// How the pairs were chosen.
    pub pattern: Pattern,
    /// (source, destination) names, in pattern order.
    pub pairs: Vec<(String, String)>,
}

impl Mesh {
    /// The pattern's pairs over `agents`; refuses duplicate names, too few
    /// agents and pairs naming an agent not listed.
    pub fn new(agents: Vec<Agent>, pattern: Pattern) -> Result<Mesh, String> {
        if agents.len() > MAX_AGENTS {
            return Err(format!("{} agents: at most {MAX_AGENTS}", agents.len()));
        }
        let mut names = BTreeSet::new();
        for a in &agents {
            if !names.insert(a.name.as_str()) {
                return Err(format!("agent name '{}' is given twice", a.name));
            }
        }
        let known = |n: &str| -> Result<(), String> {
            if names.contains(n) {
                Ok(())
            } else {
                Err(format!(
                    "unknown agent '{n}' (agents: {})",
                    names.iter().copied().collect::<Vec<_>>().join(", ")
                ))
            }
        };
        let n: Vec<&str> = agents.iter().map(|a| a.name.as_str()).collect();
        let pairs: Vec<(String, String)> = match &pattern {
            Pattern::AllToAll => n
                .iter()
                .flat_map(|a| n.iter().filter(move |b| *b != a).map(move |b| (*a, *b)))
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            Pattern::Ring if n.len() == 2 => vec![
                (n[0].to_string(), n[1].to_string()),
                (n[1].to_string(), n[0].to_string()),
            ],
            Pattern::Ring => (0..n.len())
                .map(|i| (n[i].to_string(), n[(i + 1) % n.len()].to_string()))
                .collect(),
            Pattern::Star { center } => {
                known(center)?;
                n.iter()
                    .filter(|a| **a != center)
                    .map(|a| (a.to_string(), center.clone()))
                    .collect()
            }
            Pattern::Pairs { pairs } => {
                for (a, b) in pairs {
                    known(a)?;
                    known(b)?;
                    if a == b {
                        return Err(format!("pair {a}-{b}: an agent does not test itself"));
                    }
                }
                pairs.clone()
            }
        };
        if pairs.is_empty() {
            return Err(format!(
                "pattern {} over {} agent(s) makes no pair: a mesh needs at least two agents",
                pattern.name(),
                agents.len()
            ));
        }
        Ok(Mesh {
            agents,
            pattern,
            pairs,
        })
    }

    /// An agent by name.
    pub fn agent(&self, name: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Each agent's place in the list, by name (for matrices).
    pub fn order(&self) -> BTreeMap<&str, usize> {
        self.agents
            .iter()
            .enumerate()
            .map(|(i, a)| (a.name.as_str(), i))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agents(n: usize) -> Vec<Agent> {
        (1..=n)
            .map(|i| Agent::parse(&format!("h{i}=10.0.0.{i}"), 5300).unwrap())
            .collect()
    }

    #[test]
    fn patterns_make_their_pairs() {
        let m = Mesh::new(agents(5), Pattern::AllToAll).unwrap();
        assert_eq!(m.pairs.len(), 20);
        assert!(!m.pairs.iter().any(|(a, b)| a == b));
        let distinct: BTreeSet<_> = m.pairs.iter().collect();
        assert_eq!(distinct.len(), 20);
        let m = Mesh::new(agents(4), Pattern::parse("ring").unwrap()).unwrap();
        assert_eq!(m.pairs.last().unwrap(), &("h4".into(), "h1".into()));
        let m = Mesh::new(agents(4), Pattern::parse("star:h2").unwrap()).unwrap();
        assert_eq!(m.pairs.len(), 3);
        assert!(m.pairs.iter().all(|(_, b)| b == "h2"));
        let m = Mesh::new(agents(3), Pattern::parse("pairs:h1-h3,h3>h2").unwrap()).unwrap();
        assert_eq!(
            m.pairs,
            vec![("h1".into(), "h3".into()), ("h3".into(), "h2".into())]
        );
    }

    #[test]
    fn bad_meshes_say_why() {
        let e = Mesh::new(agents(3), Pattern::parse("pairs:h1-h9").unwrap()).unwrap_err();
        assert!(e.contains("unknown agent 'h9'"), "{e}");
        let e = Mesh::new(agents(1), Pattern::AllToAll).unwrap_err();
        assert!(e.contains("at least two agents"), "{e}");
        let mut twice = agents(2);
        twice.push(twice[0].clone());
        assert!(Mesh::new(twice, Pattern::Ring)
            .unwrap_err()
            .contains("twice"));
        assert!(Pattern::parse("mesh")
            .unwrap_err()
            .contains("unknown pattern"));
        assert!(Pattern::parse("pairs:h1").unwrap_err().contains("SRC-DST"));
        let e = Mesh::new(agents(2), Pattern::parse("pairs:h1-h1").unwrap()).unwrap_err();
        assert!(e.contains("itself"), "{e}");
    }

    #[test]
    fn agents_parse_with_and_without_names_and_ports() {
        let a = Agent::parse("db1=10.1.2.3:6000", 5300).unwrap();
        assert_eq!(
            (a.name.as_str(), a.host.as_str(), a.port),
            ("db1", "10.1.2.3", 6000)
        );
        let a = Agent::parse("node-7.example", 5300).unwrap();
        assert_eq!((a.name.as_str(), a.port), ("node-7.example", 5300));
        let a = Agent::parse("v6=[fd00::1]:7000", 5300).unwrap();
        assert_eq!((a.host.as_str(), a.port), ("fd00::1", 7000));
        let a = Agent::parse("fd00::2", 5300).unwrap();
        assert_eq!((a.host.as_str(), a.port), ("fd00::2", 5300));
        assert!(Agent::parse("x=h:0", 5300).is_err());
        assert!(Agent::parse("x=h:port", 5300).is_err());
        assert!(Agent::parse("bad name=h", 5300).is_err());
    }
}
