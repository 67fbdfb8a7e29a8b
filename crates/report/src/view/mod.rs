//! The analysed view of a stored run: what every sweep renderer (HTML, Markdown,
//! CSV, JSON) shows. Built by [`RunView::build`], a pure function of the run's metadata
//! and points; renderers only format it.
//!
//! Configurations: points are grouped into lines by their axis values other than the
//! one on the x axis; a label names only the axes that vary in the run.

mod group;
mod plots;
mod rows;
mod types;

pub use crate::figure::{PlotSpec, Series};
pub(crate) use group::axis_num;
pub use group::search_key;
pub use types::*;

use group::groups;
pub(crate) use group::Labeler;
use std::collections::BTreeMap;

impl RunView {
    /// Analyses a run.
    pub fn build(run: RunMeta, points: Vec<PointView>) -> RunView {
        let lab = Labeler::new(&points);
        let done: Vec<&PointView> = points.iter().filter(|p| p.summary.is_some()).collect();
        let streams: Vec<&PointView> = done
            .iter()
            .copied()
            .filter(|p| !p.spec.test.is_rr())
            .collect();
        let rrs: Vec<&PointView> = done
            .iter()
            .copied()
            .filter(|p| p.spec.test.is_rr())
            .collect();
        // The client's interface, else the server's (a client that names its
        // server, as in the lab, records its facts before any connection).
        let mtu = [&run.client_host, &run.server_host]
            .into_iter()
            .filter_map(|h| h.as_ref()?.interface.as_ref())
            .map(|i| u64::from(i.mtu))
            .find(|&m| m > 0);
        let timestamps = run
            .client_host
            .as_ref()
            .and_then(|h| h.sysctls.get("net.ipv4.tcp_timestamps"))
            .is_none_or(|v| v != "0");

        let by_cfg = groups(streams.iter().copied(), &lab, &["size"]);
        let by_win = groups(
            streams
                .iter()
                .copied()
                .filter(|p| axis_num(p, "window").is_some()),
            &lab,
            &["window"],
        );
        let mut plots = plots::against_size(&by_cfg, &run);
        let model = plots::latency_model(&groups(rrs.iter().copied(), &lab, &["size"]), &streams);
        let fit = model.map(|(fit, plot)| {
            plots.push(plot);
            fit
        });
        plots.extend(plots::against_window(&by_win));
        plots.extend(plots::latency_cdf(&rrs, &lab));
        plots.extend(plots::search_plots(&points));

        let line = rows::Line {
            run: &run,
            mtu,
            timestamps,
        };
        let efficiency = streams
            .iter()
            .filter_map(|p| rows::efficiency(p, &lab, &line))
            .collect();
        let directions = rows::directions(&groups(streams.iter().copied(), &lab, &["direction"]));
        let knees = rows::knees(&by_cfg, &by_win);
        let warnings = rows::warnings(&done, &lab);
        RunView {
            run,
            points,
            mtu,
            directions,
            fit,
            knees,
            efficiency,
            warnings,
            plots,
        }
    }

    /// How the points were measured, for the report's header: repetitions, or a
    /// loss-free rate search (whose trials are not repetitions of one setting).
    pub fn measured_as(&self) -> String {
        if self.points.iter().any(|p| p.search.is_some()) {
            "each point searched for its loss-free rate".into()
        } else {
            match self.run.repeat {
                1 => "1 repetition per point".into(),
                n => format!("{n} repetitions per point"),
            }
        }
    }

    /// A point's label with every varying axis.
    pub fn label(&self, p: &PointView) -> String {
        Labeler::new(&self.points).label(p, &[])
    }

    /// A point's label with the varying axes but `skip` (a mesh's test
    /// without its pair: `skip` `src` and `dst`).
    pub fn label_without(&self, p: &PointView, skip: &[&str]) -> String {
        Labeler::new(&self.points).label(p, skip)
    }
}

/// A mesh point's test as a monitor names it, from its own axes but the
/// pair and those at their defaults (out, the default window, one stream):
/// `tcp-stream 128K`, the same in every round and in every figure the
/// monitor serves, whatever else the round measured.
pub fn pair_test_label(axes: &BTreeMap<String, String>) -> String {
    let shown: BTreeMap<String, String> = axes
        .iter()
        .filter(|(k, v)| {
            !matches!(
                (k.as_str(), v.as_str()),
                ("src" | "dst", _)
                    | ("direction", "out")
                    | ("window", "default")
                    | ("parallel", "1")
            )
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Labeler::every_axis(&shown).label_axes(&shown, &[])
}
