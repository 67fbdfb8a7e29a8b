//! Points into labelled lines: the axes that vary name a configuration, and a
//! configuration's points become a plot's series.

use std::collections::BTreeMap;

use super::{PointView, Series};

/// A searched point's frame size (RFC 2544's: payload, UDP, IPv4 and Ethernet)
/// and strategy.
pub fn search_key(p: &PointView) -> (u32, String) {
    (
        netsonde_model::search::frame_of(&p.spec) as u32,
        p.spec.rx_io.to_string(),
    )
}

pub(crate) fn human_size(v: &str) -> String {
    v.parse::<u64>()
        .map(|b| netsonde_model::units::Bytes(b).to_string().replace(' ', ""))
        .unwrap_or_else(|_| v.to_string())
}

/// Labels points by the axes that vary, leaving out `skip`.
pub(crate) struct Labeler {
    varying: Vec<String>,
}

impl Labeler {
    pub(crate) fn new(points: &[PointView]) -> Labeler {
        let mut values: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
        for p in points {
            for (k, v) in &p.axes {
                values.entry(k).or_default().insert(v);
            }
        }
        Labeler {
            varying: values
                .into_iter()
                .filter(|(k, v)| v.len() > 1 || *k == "test")
                .map(|(k, _)| k.to_string())
                .collect(),
        }
    }

    /// A labeler that names every axis a point has (not only those that vary
    /// among the points of a run).
    pub(crate) fn every_axis(axes: &BTreeMap<String, String>) -> Labeler {
        Labeler {
            varying: axes.keys().cloned().collect(),
        }
    }

    pub(crate) fn label(&self, p: &PointView, skip: &[&str]) -> String {
        self.label_axes(&p.axes, skip)
    }

    pub(crate) fn label_axes(&self, axes: &BTreeMap<String, String>, skip: &[&str]) -> String {
        let mut parts = Vec::new();
        let varies = |k: &str| !skip.contains(&k) && self.varying.iter().any(|v| v == k);
        // A mesh's pair first, as `a→b`.
        if varies("src") || varies("dst") {
            let get = |k: &str| axes.get(k).map(String::as_str).unwrap_or("?");
            parts.push(format!("{}→{}", get("src"), get("dst")));
        }
        // The core axes in a fixed order, then any other axis (io, link axes) by name.
        const CORE: [&str; 5] = ["test", "direction", "size", "window", "parallel"];
        let others = self
            .varying
            .iter()
            .map(String::as_str)
            .filter(|k| !CORE.contains(k) && !["src", "dst"].contains(k));
        for k in CORE.into_iter().chain(others) {
            if !varies(k) {
                continue;
            }
            let v = axes.get(k).map(String::as_str).unwrap_or("?");
            parts.push(match k {
                "size" => human_size(v),
                "window" if v == "default" => "w=default".into(),
                "window" => format!("w={}", human_size(v)),
                "parallel" => format!("P={v}"),
                "test" | "direction" | "io" => v.to_string(),
                // Lab link axes: rate in bit/s, delay in ns.
                "rate" if v == "0" => "rate=unlimited".into(),
                "rate" => v.parse::<f64>().map_or_else(
                    |_| format!("rate={v}"),
                    |r| format!("rate={}", netsonde_model::units::BitRate(r)).replace(' ', ""),
                ),
                "delay" => v.parse::<u64>().map_or_else(
                    |_| format!("delay={v}"),
                    |d| format!("delay={}", netsonde_model::units::Nanos(d)).replace(' ', ""),
                ),
                _ => format!("{k}={v}"),
            });
        }
        if parts.is_empty() {
            "all".into()
        } else {
            parts.join(" ")
        }
    }
}

/// Groups points into lines by label, in the order the labels first appear (the
/// plan's order: axis values ascending).
pub(crate) fn groups<'a>(
    pts: impl Iterator<Item = &'a PointView>,
    lab: &Labeler,
    skip: &[&str],
) -> Vec<(String, Vec<&'a PointView>)> {
    let mut g: Vec<(String, Vec<&PointView>)> = Vec::new();
    for p in pts {
        let l = lab.label(p, skip);
        match g.iter_mut().find(|(k, _)| *k == l) {
            Some((_, v)) => v.push(p),
            None => g.push((l, vec![p])),
        }
    }
    g
}

pub(crate) fn axis_num(p: &PointView, axis: &str) -> Option<f64> {
    p.axes.get(axis)?.parse().ok()
}

pub(crate) fn series(
    name: String,
    pts: &[&PointView],
    x_axis: &str,
    metric: &str,
    scale: f64,
) -> Series {
    let mut points: Vec<(f64, f64)> = Vec::new();
    let mut band = Vec::new();
    for p in pts {
        if let (Some(x), Some(y)) = (axis_num(p, x_axis), p.median(metric)) {
            points.push((x, y * scale));
            if let Some((lo, hi)) = p.ci(metric) {
                band.push((x, lo * scale, hi * scale));
            }
        }
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    band.sort_by(|a, b| a.0.total_cmp(&b.0));
    Series {
        name,
        points,
        band,
        dashed: false,
    }
}
