//! A load-latency test's figure as one self-contained SVG (`client --probe --plot
//! FILE.svg`): latency over time with the load's phases shaded, each loaded
//! flow's goodput over time, and the latency distribution idle against loaded.

use plotters::prelude::*;

use crate::figure::{one_two_five, PALETTE};

use netsonde_model::load::{LoadLatency, Phase, ProbeKind};
use netsonde_model::result::TestReport;

const KINDS: [(ProbeKind, RGBColor); 3] = [
    (ProbeKind::Tcp, PALETTE[0]),
    (ProbeKind::Udp, PALETTE[1]),
    (ProbeKind::Connect, PALETTE[2]),
];

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The figure, or `None` for a test without probes.
pub fn svg(r: &TestReport) -> Option<String> {
    let load = r.load.as_ref()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 1200)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let panels = root.split_evenly((3, 1));
        let _ = latency_over_time(&panels[0], load);
        let _ = goodput_over_time(&panels[1], r, load);
        let _ = cdf(&panels[2], load);
        let _ = root.present();
    }
    Some(out)
}

fn secs(n: netsonde_model::units::Nanos) -> f64 {
    n.0 as f64 / 1e9
}

fn ms_of(n: netsonde_model::units::Nanos) -> f64 {
    n.0 as f64 / 1e6
}

/// Each probe's round trip (a new connection: its handshake) against when it was
/// sent, with the ramp, the loaded interval and the drain shaded.
fn latency_over_time<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    load: &LoadLatency,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let end = secs(load.phases.end).max(0.1);
    let values = |k: ProbeKind| {
        load.probes
            .iter()
            .filter(move |s| s.kind == k)
            .filter_map(move |s| {
                let v = if k == ProbeKind::Connect {
                    s.connect
                } else {
                    s.rtt
                };
                v.map(|v| (secs(s.t), ms_of(v)))
            })
    };
    let top = KINDS
        .iter()
        .flat_map(|(k, _)| values(*k).map(|p| p.1))
        .fold(0.0f64, f64::max)
        .max(0.01)
        * 1.1;
    let mut c = frame(area, "round trip over time (phases shaded)")
        .build_cartesian_2d(0.0..end, 0.0..top)?;
    c.configure_mesh()
        .x_desc("time since the first probe (s)")
        .y_desc("round trip (ms)")
        .draw()?;
    let ph = load.phases;
    for (from, to, colour, name) in [
        (
            ph.load_start,
            ph.measured_start,
            RGBColor(255, 224, 178),
            "ramp",
        ),
        (
            ph.measured_start,
            ph.measured_end,
            RGBColor(255, 204, 204),
            "loaded",
        ),
        (
            ph.measured_end,
            ph.load_end,
            RGBColor(230, 230, 230),
            "drain",
        ),
    ] {
        if to > from {
            c.draw_series(std::iter::once(Rectangle::new(
                [(secs(from), 0.0), (secs(to), top)],
                colour.mix(0.6).filled(),
            )))?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], colour.filled()));
        }
    }
    for (k, colour) in KINDS {
        c.draw_series(values(k).map(|p| Circle::new(p, 2, colour.filled())))?
            .label(format!("{} probe", k.name()))
            .legend(move |(x, y)| Circle::new((x + 7, y), 4, colour.filled()));
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// Each loaded TCP flow's goodput (acknowledged bytes) per reading interval.
fn goodput_over_time<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    r: &TestReport,
    load: &LoadLatency,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let Some(summary) = &load.summary else {
        return Ok(());
    };
    let start = secs(load.phases.load_start);
    let end = secs(load.phases.end).max(0.1);
    let top = summary
        .flows
        .iter()
        .flat_map(|f| f.goodput.iter().map(|g| g.0 / 1e6))
        .fold(0.0f64, f64::max)
        .max(0.001)
        * 1.1;
    let mut c =
        frame(area, "goodput of each loaded flow").build_cartesian_2d(0.0..end, 0.0..top)?;
    c.configure_mesh()
        .x_desc("time since the first probe (s)")
        .y_desc("goodput (Mbit/s)")
        .draw()?;
    if summary.flows.is_empty() {
        let why = if r.spec.test.is_tcp() {
            "no TCP_INFO readings"
        } else {
            "UDP load: no per-flow acknowledgements to read"
        };
        area.draw(&Text::new(why, (330, 200), ("sans-serif", 16)))?;
        return Ok(());
    }
    for (i, f) in summary.flows.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let pts: Vec<(f64, f64)> =
            f.t.iter()
                .zip(&f.goodput)
                .map(|(t, g)| (start + secs(*t), g.0 / 1e6))
                .collect();
        let name = format!("flow {} {}", f.flow, f.dir.name());
        // Beyond the palette, dashes tell the flows apart.
        line(&mut c, pts, colour, i >= PALETTE.len(), name)?;
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// A panel's frame: its title, margins and room for the axis labels.
fn frame<'a, 'b, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, plotters::coord::Shift>,
    title: &'b str,
) -> ChartBuilder<'a, 'b, DB> {
    let mut b = ChartBuilder::on(area);
    b.caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60);
    b
}

/// One labelled line, solid or dashed.
fn line<'a, DB: DrawingBackend + 'a, X: Ranged<ValueType = f64>, Y: Ranged<ValueType = f64>>(
    c: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    pts: Vec<(f64, f64)>,
    colour: RGBColor,
    dashed: bool,
    name: String,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let style = ShapeStyle::from(&colour).stroke_width(2);
    let legend = move |(x, y): (i32, i32)| PathElement::new(vec![(x, y), (x + 18, y)], colour);
    if dashed {
        c.draw_series(DashedLineSeries::new(pts, 6, 4, style))?
            .label(name)
            .legend(legend);
    } else {
        c.draw_series(LineSeries::new(pts, style))?
            .label(name)
            .legend(legend);
    }
    Ok(())
}

/// The share of round trips at or below each latency, idle against loaded, per
/// probe kind, on a logarithmic latency axis.
fn cdf<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    load: &LoadLatency,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let of = |k: ProbeKind, phase: Phase| {
        let mut v: Vec<f64> = load
            .probes
            .iter()
            .filter(|s| s.kind == k && load.phases.at(s.t) == phase)
            .filter_map(|s| {
                if k == ProbeKind::Connect {
                    s.connect
                } else {
                    s.rtt
                }
            })
            .map(ms_of)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let all: Vec<f64> = KINDS
        .iter()
        .flat_map(|(k, _)| [of(*k, Phase::Idle), of(*k, Phase::Loaded)])
        .flatten()
        .collect();
    let lo = all.iter().copied().fold(f64::MAX, f64::min).max(1e-3);
    let hi = all.iter().copied().fold(0.0f64, f64::max).max(lo * 10.0);
    let mut c = frame(area, "round trip distribution: idle (dashed) and loaded")
        .build_cartesian_2d(
            (lo * 0.8..hi * 1.25)
                .log_scale()
                .with_key_points(one_two_five(lo * 0.8, hi * 1.25)),
            0.0..1.0,
        )?;
    c.configure_mesh()
        .x_desc("round trip (ms, logarithmic)")
        .y_desc("share of probes at or below")
        .draw()?;
    for (k, colour) in KINDS {
        for (phase, dashed) in [(Phase::Idle, true), (Phase::Loaded, false)] {
            let v = of(k, phase);
            if v.is_empty() {
                continue;
            }
            let n = v.len() as f64;
            let pts: Vec<(f64, f64)> = v
                .iter()
                .enumerate()
                .map(|(i, x)| (*x, (i + 1) as f64 / n))
                .collect();
            line(
                &mut c,
                pts,
                colour,
                dashed,
                format!("{} {}", k.name(), phase.name()),
            )?;
        }
    }
    c.configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_ticks_are_one_two_five_within_the_span() {
        assert_eq!(one_two_five(16.0, 250.0), vec![20.0, 50.0, 100.0, 200.0]);
        assert_eq!(one_two_five(0.01, 0.2), vec![0.01, 0.02, 0.05, 0.1, 0.2]);
        assert!(one_two_five(5.0, 1.0).is_empty());
    }

    #[test]
    fn a_load_test_draws_three_labelled_panels() {
        let r = crate::fixture::load_report();
        let figure = svg(&r).expect("a load test has a figure");
        for text in [
            "round trip over time",
            "goodput of each loaded flow",
            "round trip distribution",
            "round trip (ms, logarithmic)",
            "loaded",
            "flow 0 client-&gt;server",
        ] {
            assert!(figure.contains(text), "no '{text}' in the figure");
        }
        // Tick labels on the logarithmic axis: 1-2-5 values, not just decades.
        let texts: Vec<&str> = figure
            .split("</text>")
            .filter_map(|t| t.rsplit_once('>').map(|(_, v)| v.trim()))
            .collect();
        for tick in ["20.0", "50.0", "100.0", "200.0"] {
            assert!(texts.contains(&tick), "no tick label {tick}: {texts:?}");
        }
        assert!(svg(&crate::fixture::stream_report()).is_none());
    }
}
