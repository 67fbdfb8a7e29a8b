//! Plans: base options × axes × repetitions, expanded into points and a run order.
//!
//! In the lab, a plan may also vary the link ([`LinkAxes`]: MTU, rate, delay,
//! loss). Those axes are recorded in each point's axis map (`mtu`, `rate` in bit/s,
//! `delay` in ns, `loss` as written), where the runner reads them to ask the lab
//! for the link, and the run order keeps each link's points together within a
//! round so the lab rebuilds the link once per link per round.

use std::collections::BTreeMap;

use netsonde_model::link::{LinkSettings, Loss, Queue};
use netsonde_model::spec::{Direction, IoStrategy, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// A characterization run, before it runs. Stored with the run as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Options every point shares (duration, warm-up, interval, TCP options...);
    /// the axes overwrite test, direction, sizes, window and parallel.
    pub base: TestSpec,
    /// Test axis.
    pub tests: Vec<TestKind>,
    /// Direction axis (RR tests only run `out`).
    pub directions: Vec<Direction>,
    /// Message size axis: stream message size; for RR and CRR, the request and the
    /// response size (a ping-pong of `size` bytes each way, the latency cost model).
    pub sizes: Vec<Bytes>,
    /// Window axis (`None`: the kernel's default).
    pub windows: Vec<Option<Bytes>>,
    /// Parallel streams axis.
    pub parallel: Vec<u32>,
    /// Repetitions per point.
    pub repeat: u32,
    /// Seed of the run order's shuffle.
    pub seed: u64,
    /// Line rate for efficiency figures.
    pub line_rate: Option<BitRate>,
    /// I/O strategy axis (both ends; empty: the base spec's strategies).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io: Vec<IoStrategy>,
    /// The sender of every point of the I/O axis, so its receiving strategies are
    /// compared behind one sender (`search --tx-io batch --io copy,xdp`); `None`:
    /// each point sends with its own strategy, or `copy` where that only receives
    /// ([`IoStrategy::sides`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_io: Option<IoStrategy>,
    /// Pacing axis: each stream's rate (`0`: unpaced); stream tests only, on any
    /// path (the lab's link rate is `link_axes.rate`). Empty: the base spec's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pacing: Vec<BitRate>,
    /// Link axes (lab runs only).
    #[serde(default, skip_serializing_if = "LinkAxes::is_empty")]
    pub link_axes: LinkAxes,
    /// The lab link the experiment asks for (lab runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LinkSettings>,
    /// A mesh (`netsonde mesh`): every point once per ordered pair of agents,
    /// the pair in its `src` and `dst` axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<crate::mesh::Mesh>,
}

/// The most points a plan may have: far beyond any sweep one would run (at the
/// default 1 s per repetition and 3 repetitions, 100,000 points is three days), and
/// small enough that planning one stays quick and small.
pub const MAX_POINTS: usize = 100_000;

/// The link axes of a lab sweep; an empty axis is not varied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkAxes {
    /// MTUs.
    pub mtu: Vec<u32>,
    /// Rates (0: unlimited).
    pub rate: Vec<BitRate>,
    /// One-way delays, each way.
    pub delay: Vec<Nanos>,
    /// Losses, each way.
    pub loss: Vec<Loss>,
    /// Bottleneck queues, each way.
    #[serde(default)]
    pub queue: Vec<Queue>,
    /// Segmentation and receive offloads on or off, each way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offloads: Vec<bool>,
}

impl LinkAxes {
    /// Whether no link axis is given.
    pub fn is_empty(&self) -> bool {
        self.mtu.is_empty()
            && self.rate.is_empty()
            && self.delay.is_empty()
            && self.loss.is_empty()
            && self.queue.is_empty()
            && self.offloads.is_empty()
    }

    /// Whether some value needs delay or loss (and so a mechanism that has them).
    pub fn needs_impairment(&self) -> bool {
        self.delay.iter().any(|d| d.0 > 0) || self.loss.iter().any(|l| !l.is_none())
    }

    /// Every combination as axis entries (one empty combination without axes).
    pub fn combinations(&self) -> Vec<Vec<(&'static str, String)>> {
        let mut out: Vec<Vec<(&'static str, String)>> = vec![Vec::new()];
        let mut cross = |key: &'static str, vals: Vec<String>| {
            if vals.is_empty() {
                return;
            }
            out = out
                .iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((key, v.clone()));
                        c
                    })
                })
                .collect();
        };
        cross("mtu", self.mtu.iter().map(u32::to_string).collect());
        cross("rate", self.rate.iter().map(|r| r.0.to_string()).collect());
        cross(
            "delay",
            self.delay.iter().map(|d| d.0.to_string()).collect(),
        );
        cross("loss", self.loss.iter().map(Loss::to_string).collect());
        cross("queue", self.queue.iter().map(Queue::axis_value).collect());
        cross(
            "offloads",
            self.offloads
                .iter()
                .map(|&o| if o { "on" } else { "off" }.to_string())
                .collect(),
        );
        out
    }
}

/// The link axes' values of a point, as one key (empty without link axes).
pub fn link_key(axes: &BTreeMap<String, String>) -> String {
    ["mtu", "rate", "delay", "loss", "queue", "offloads"]
        .iter()
        .filter_map(|k| axes.get(*k).map(|v| format!("{k}={v}")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One configuration of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Its number within the plan.
    pub idx: u32,
    /// Axis values by axis name (`test`, `direction`, `size`, `window`, `parallel`).
    pub axes: BTreeMap<String, String>,
    /// The spec it runs.
    pub spec: TestSpec,
}

/// A combination that cannot run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Axis values.
    pub axes: BTreeMap<String, String>,
    /// Why.
    pub reason: String,
}

impl Plan {
    /// `netsonde sweep` with no arguments: a short characterization of this host's
    /// stack. Stream and RR tests at 64 B to 64 KiB (x4 steps), 3 repetitions of 1 s
    /// after a 250 ms warm-up: 36 measurements, well under a minute.
    pub fn default_characterization() -> Plan {
        let mut base = TestSpec::new(TestKind::TcpStream);
        base.duration = Nanos::from_secs(1);
        base.warmup = Nanos::from_millis(250);
        base.interval = Some(Nanos::from_millis(200));
        Plan {
            base,
            tests: vec![TestKind::TcpStream, TestKind::TcpRr],
            directions: vec![Direction::Out],
            sizes: crate::axes::parse_sizes("64..64K*4").expect("static axis"),
            windows: vec![None],
            parallel: vec![1],
            repeat: 3,
            seed: 1,
            line_rate: None,
            io: Vec::new(),
            tx_io: None,
            pacing: Vec::new(),
            link_axes: LinkAxes::default(),
            link: None,
            mesh: None,
        }
    }

    /// How many points (run or skipped) the axes make, at most: the product of the
    /// axes' lengths, saturating, before RR tests collapse their directions.
    pub fn size_bound(&self) -> usize {
        let l = &self.link_axes;
        [
            l.mtu.len(),
            l.rate.len(),
            l.delay.len(),
            l.loss.len(),
            l.queue.len(),
            self.tests.len(),
            self.directions.len(),
            self.sizes.len(),
            self.windows.len(),
            self.parallel.len(),
            self.io.len(),
            self.pacing.len(),
            self.mesh.as_ref().map_or(1, |m| m.pairs.len()),
        ]
        .into_iter()
        .fold(1usize, |n, k| n.saturating_mul(k.max(1)))
    }

    /// Expands the axes. Combinations whose spec is invalid (a UDP datagram over
    /// 64 KiB, say) are returned as skipped with the reason; RR tests collapse the
    /// direction axis to `out`.
    pub fn points(&self) -> (Vec<Point>, Vec<Skipped>) {
        let (points, skipped) = self.points_any_pair();
        let Some(mesh) = &self.mesh else {
            return (points, skipped);
        };
        // The mesh: every point once per pair, pair by pair.
        let mut out = Vec::with_capacity(points.len() * mesh.pairs.len());
        for (src, dst) in &mesh.pairs {
            for p in &points {
                let mut axes = p.axes.clone();
                axes.insert("src".to_string(), src.clone());
                axes.insert("dst".to_string(), dst.clone());
                out.push(Point {
                    idx: out.len() as u32,
                    axes,
                    spec: p.spec.clone(),
                });
            }
        }
        (out, skipped)
    }

    /// The points of every axis but the mesh's pairs.
    fn points_any_pair(&self) -> (Vec<Point>, Vec<Skipped>) {
        let (points, mut skipped) = self.points_one_io();
        let points = self.paced(points);
        if self.io.is_empty() {
            return (points, skipped);
        }
        // The I/O strategy axis: every point once per strategy; combinations a
        // strategy does not apply to are skipped with the reason.
        let mut out = Vec::new();
        for p in points {
            for &io in &self.io {
                let mut spec = p.spec.clone();
                (spec.tx_io, spec.rx_io) = io.sides(spec.test);
                if let Some(tx) = self.tx_io {
                    spec.tx_io = tx;
                }
                let mut axes = p.axes.clone();
                axes.insert("io".to_string(), io.name().to_string());
                match spec.validate() {
                    Ok(()) => out.push(Point {
                        idx: out.len() as u32,
                        axes,
                        spec,
                    }),
                    Err(e) => skipped.push(Skipped {
                        axes,
                        reason: e.to_string(),
                    }),
                }
            }
        }
        (out, skipped)
    }

    /// Each stream point once per pacing rate (request/response points, which are
    /// not paced, once); renumbered.
    fn paced(&self, points: Vec<Point>) -> Vec<Point> {
        if self.pacing.is_empty() {
            return points;
        }
        let mut out = Vec::new();
        for p in points {
            if p.spec.test.is_rr() {
                out.push(p);
                continue;
            }
            for &r in &self.pacing {
                let mut spec = p.spec.clone();
                spec.rate = netsonde_model::spec::pacing(r);
                let mut axes = p.axes.clone();
                axes.insert("pacing".to_string(), format!("{}", r.bps()));
                out.push(Point { idx: 0, axes, spec });
            }
        }
        for (i, p) in out.iter_mut().enumerate() {
            p.idx = i as u32;
        }
        out
    }

    /// The points of every axis but the I/O strategy and pacing.
    fn points_one_io(&self) -> (Vec<Point>, Vec<Skipped>) {
        let mut points = Vec::new();
        let mut skipped = Vec::new();
        for link in self.link_axes.combinations() {
            for &test in &self.tests {
                let dirs: Vec<Direction> = if test.is_rr() {
                    vec![Direction::Out]
                } else {
                    self.directions.clone()
                };
                for &direction in &dirs {
                    for &size in &self.sizes {
                        for &window in &self.windows {
                            for &parallel in &self.parallel {
                                let mut spec = self.base.clone();
                                spec.test = test;
                                spec.direction = direction;
                                if test.is_rr() {
                                    spec.request_size = size;
                                    spec.response_size = size;
                                    spec.nodelay = true;
                                    spec.rate = None;
                                } else {
                                    spec.size = size;
                                    if test == TestKind::UdpStream && spec.rate.is_none() {
                                        spec.rate = TestSpec::new(test).rate;
                                    }
                                }
                                if !test.is_tcp() {
                                    spec.mss = None;
                                    spec.congestion = None;
                                }
                                if !test.is_tls() {
                                    spec.tls_suite = None;
                                }
                                spec.window = window;
                                spec.parallel = parallel;
                                let mut axes = BTreeMap::new();
                                axes.insert("test".to_string(), test.name().to_string());
                                axes.insert("direction".to_string(), direction.name().to_string());
                                axes.insert("size".to_string(), size.0.to_string());
                                axes.insert(
                                    "window".to_string(),
                                    window
                                        .map(|w| w.0.to_string())
                                        .unwrap_or_else(|| "default".into()),
                                );
                                axes.insert("parallel".to_string(), parallel.to_string());
                                for (k, v) in &link {
                                    axes.insert(k.to_string(), v.clone());
                                }
                                match spec.validate() {
                                    Ok(()) => points.push(Point {
                                        idx: points.len() as u32,
                                        axes,
                                        spec,
                                    }),
                                    Err(e) => skipped.push(Skipped {
                                        axes,
                                        reason: e.to_string(),
                                    }),
                                }
                            }
                        }
                    }
                }
            }
        }
        (points, skipped)
    }

    /// The run order: `repeat` rounds; each round runs every point once in an order
    /// shuffled with this plan's seed and the round number. Returns (point, rep).
    ///
    /// With link axes, a round runs the links in a shuffled order and each link's
    /// points in a shuffled order, so the link changes once per link per round.
    pub fn order(&self, n_points: usize) -> Vec<(u32, u32)> {
        // Points grouped by link (one group without link axes), in plan order.
        let mut groups: Vec<(String, Vec<u32>)> = Vec::new();
        let keys: Vec<String> = if self.link_axes.is_empty() {
            Vec::new()
        } else {
            self.points().0.iter().map(|p| link_key(&p.axes)).collect()
        };
        for i in 0..n_points as u32 {
            let k = keys.get(i as usize).cloned().unwrap_or_default();
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, v)) => v.push(i),
                None => groups.push((k, vec![i])),
            }
        }
        let mut order = Vec::with_capacity(n_points * self.repeat as usize);
        for round in 0..self.repeat {
            let mut rng = rand::rngs::StdRng::seed_from_u64(self.seed ^ (u64::from(round) << 32));
            if groups.len() > 1 {
                groups.shuffle(&mut rng);
            }
            for (_, g) in &groups {
                let mut idx = g.clone();
                idx.shuffle(&mut rng);
                order.extend(idx.into_iter().map(|i| (i, round)));
            }
        }
        order
    }

    /// Seconds the plan measures (repetitions × (warm-up + time)), for ETAs.
    pub fn measured_secs(&self, n_points: usize) -> f64 {
        n_points as f64
            * f64::from(self.repeat)
            * (self.base.duration.as_secs_f64() + self.base.warmup.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacing_axis_multiplies_stream_points_only() {
        let mut p = Plan::default_characterization();
        p.sizes = vec![Bytes(1024)];
        p.pacing = vec![BitRate(1e8), BitRate(0.0)];
        let (pts, skipped) = p.points();
        assert!(skipped.is_empty());
        let stream: Vec<&Point> = pts
            .iter()
            .filter(|x| x.spec.test == TestKind::TcpStream)
            .collect();
        assert_eq!(stream.len(), 2);
        assert_eq!(stream[0].spec.rate, Some(BitRate(1e8)));
        assert_eq!(stream[0].axes["pacing"], "100000000");
        // 0 is unpaced.
        assert_eq!(stream[1].spec.rate, None);
        // Request/response is not paced: one point, no pacing key.
        let rr: Vec<&Point> = pts.iter().filter(|x| x.spec.test.is_rr()).collect();
        assert_eq!(rr.len(), 1);
        assert!(!rr[0].axes.contains_key("pacing"));
        // Dense indices.
        assert!(pts.iter().enumerate().all(|(i, x)| x.idx as usize == i));
    }

    #[test]
    fn default_plan_expands() {
        let p = Plan::default_characterization();
        let (pts, skipped) = p.points();
        assert_eq!(pts.len(), 12); // 2 tests x 6 sizes
        assert!(skipped.is_empty());
        let rr = pts.iter().find(|p| p.spec.test == TestKind::TcpRr).unwrap();
        assert_eq!(rr.spec.request_size, rr.spec.response_size);
        assert!(pts.iter().enumerate().all(|(i, p)| p.idx as usize == i));
    }

    #[test]
    fn invalid_combinations_are_skipped_with_reason() {
        let mut p = Plan::default_characterization();
        p.tests = vec![TestKind::UdpStream, TestKind::TcpRr];
        p.directions = vec![Direction::Out, Direction::Bidir];
        p.sizes = vec![Bytes(1024), Bytes(128 * 1024)];
        let (pts, skipped) = p.points();
        // UDP: 2 directions x 1 valid size; RR: only out, 2 sizes.
        assert_eq!(pts.len(), 4);
        assert_eq!(skipped.len(), 2);
        assert!(
            skipped[0].reason.contains("UDP datagram size"),
            "{:?}",
            skipped[0]
        );
    }

    #[test]
    fn order_is_interleaved_shuffled_and_reproducible() {
        let p = Plan::default_characterization();
        let o = p.order(12);
        assert_eq!(o.len(), 36);
        for round in 0..3u32 {
            let mut r: Vec<u32> = o.iter().filter(|x| x.1 == round).map(|x| x.0).collect();
            assert_eq!(r.len(), 12);
            r.sort();
            assert_eq!(r, (0..12).collect::<Vec<_>>());
        }
        // Shuffled: not the identity, and rounds differ.
        let r0: Vec<u32> = o[..12].iter().map(|x| x.0).collect();
        let r1: Vec<u32> = o[12..24].iter().map(|x| x.0).collect();
        assert_ne!(r0, (0..12).collect::<Vec<_>>());
        assert_ne!(r0, r1);
        assert_eq!(o, p.order(12));
    }

    #[test]
    fn link_axes_multiply_points_and_keep_links_together_in_a_round() {
        let mut p = Plan::default_characterization();
        p.link_axes.mtu = vec![1500, 9000];
        p.link_axes.delay = vec![Nanos::ZERO, Nanos::from_millis(10)];
        let (pts, _) = p.points();
        assert_eq!(pts.len(), 12 * 4);
        assert_eq!(pts[0].axes["mtu"], "1500");
        assert_eq!(pts[0].axes["delay"], "0");
        assert_eq!(pts[47].axes["delay"], "10000000");
        assert!(p.link_axes.needs_impairment());
        let o = p.order(pts.len());
        assert_eq!(o.len(), 48 * 3);
        // Within a round the link changes exactly 3 times (4 links).
        for round in o.chunks(48) {
            let keys: Vec<String> = round
                .iter()
                .map(|(i, _)| link_key(&pts[*i as usize].axes))
                .collect();
            let changes = keys.windows(2).filter(|w| w[0] != w[1]).count();
            assert_eq!(changes, 3);
        }
        // Plans without link axes serialize as before.
        let j = serde_json::to_string(&Plan::default_characterization()).unwrap();
        assert!(!j.contains("link"), "{j}");
    }
}
