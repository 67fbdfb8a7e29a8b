//! Draws a [`PlotSpec`] as a self-contained SVG (plotters' SVG backend: no fonts
//! are loaded, text is left to the viewer's `sans-serif`).
//!
//! Every figure follows the same rules, so none has to be checked by eye:
//! - ticks are chosen here, not by plotters, and written with SI prefixes (`2.5 G`,
//!   `50 µs`) or, for sizes, binary ones (`64 K`, `1 M`); a logarithmic axis of
//!   sizes ticks at powers of two, any other at 1-2-5 of each decade;
//! - tick labels that would touch are thinned until they do not;
//! - the legend sits below the plot, never on the data, and each series has its
//!   own colour, line style and marker (10 colours × 3 styles before one repeats);
//! - bands (an interval of the median) are clamped to what the quantity can be:
//!   never below zero, never above the axis's physical ceiling.

use plotters::coord::combinators::BindKeyPoints;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

pub use crate::figure::AxisUnit;
use crate::figure::{one_two_five, PlotSpec, Series, PALETTE};

/// Tick positions for a logarithmic axis over `[lo, hi]` (a linear axis takes
/// plotters' own round steps).
pub fn log_ticks(unit: AxisUnit, lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi.is_finite() && hi > lo) {
        return vec![lo];
    }
    if unit == AxisUnit::Bytes {
        let (e0, e1) = (lo.log2().floor() as i32, hi.log2().ceil() as i32);
        let all: Vec<i32> = (e0..=e1)
            .filter(|e| {
                let v = 2f64.powi(*e);
                v >= lo * 0.999 && v <= hi * 1.001
            })
            .collect();
        // Every k-th power, k the smallest that keeps at most 8 ticks.
        let k = all.len().div_ceil(8).max(1) as i32;
        return all
            .into_iter()
            .filter(|e| e.rem_euclid(k) == 0)
            .map(|e| 2f64.powi(e))
            .collect();
    }
    let t = one_two_five(lo, hi);
    if t.len() > 9 {
        let decades: Vec<f64> = t
            .iter()
            .copied()
            .filter(|v| (v.log10() - v.log10().round()).abs() < 1e-9)
            .collect();
        if decades.len() >= 2 {
            return decades;
        }
    }
    if t.len() >= 2 {
        t
    } else {
        vec![lo, hi]
    }
}

/// Drops ticks whose labels would touch on an axis `pixels` long: each label is
/// about 7 px per character at the tick font, and neighbours keep 8 px apart.
fn thin(unit: AxisUnit, lo: f64, hi: f64, pixels: f64, ticks: Vec<f64>) -> Vec<f64> {
    let pos = |v: f64| (v.ln() - lo.ln()) / (hi.ln() - lo.ln()) * pixels;
    let half = |v: f64| unit.tick(v).chars().count() as f64 * 3.5;
    let mut out: Vec<f64> = Vec::new();
    for t in ticks {
        match out.last() {
            Some(&prev) if pos(t) - half(t) < pos(prev) + half(prev) + 8.0 => {}
            _ => out.push(t),
        }
    }
    out
}

/// Width of every figure, and the plot's height above its legend.
const WIDTH: u32 = 860;
const CHART_HEIGHT: u32 = 430;
const LEGEND_ROW: u32 = 20;
/// The plotting area's width: the figure less the margins and the y labels.
const PLOT_WIDTH: f64 = (WIDTH - 2 * 12 - 78) as f64;
const PLOT_HEIGHT: f64 = (CHART_HEIGHT - 2 * 12 - 44 - 30) as f64;

/// A series' line style: solid, dashed or dotted; a fit line is always dashed.
#[derive(Clone, Copy, PartialEq)]
enum Dash {
    Solid,
    Dashed,
    Dotted,
}

#[derive(Clone, Copy, PartialEq)]
enum Marker {
    None,
    Circle,
    Triangle,
    Cross,
}

/// Series `i`'s colour, line and marker. Neighbours differ in all three, so
/// two series on the same figures (out and in on loopback) both show: the
/// line and marker cycle with the series, shifted once per round of the
/// palette, so no two of the first 30 look alike.
fn style(i: usize, s: &Series) -> (RGBColor, Dash, Marker) {
    let colour = PALETTE[i % PALETTE.len()];
    let variant = (i + i / PALETTE.len()) % 3;
    if s.dashed {
        return (colour, Dash::Dashed, Marker::None);
    }
    (
        colour,
        [Dash::Solid, Dash::Dashed, Dash::Dotted][variant],
        [Marker::Circle, Marker::Triangle, Marker::Cross][variant],
    )
}

/// The data's extent: `((x0, x1), (y0, y1))`, bands included after clamping.
fn bounds(spec: &PlotSpec) -> Option<((f64, f64), (f64, f64))> {
    let finite = |p: &(f64, f64)| {
        p.0.is_finite()
            && p.1.is_finite()
            && (!spec.log_x || p.0 > 0.0)
            && (!spec.log_y || p.1 > 0.0)
    };
    let pts: Vec<(f64, f64)> = spec
        .series
        .iter()
        .flat_map(|s| s.points.iter().copied())
        .filter(finite)
        .collect();
    if pts.is_empty() {
        return None;
    }
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in &pts {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    for s in &spec.series {
        for (_, lo, hi) in clamped_band(spec, s) {
            y0 = y0.min(lo);
            y1 = y1.max(hi);
        }
    }
    if x1 <= x0 {
        (x0, x1) = if spec.log_x {
            (x0 / 2.0, x1 * 2.0)
        } else {
            (x0 - 1.0, x1 + 1.0)
        };
    }
    if spec.log_x {
        (x0, x1) = snap(spec.x_unit, x0, x1);
    }
    let (y0, y1) = if spec.log_y {
        snap(spec.y_unit, y0, y1)
    } else {
        let top = if y1 <= 0.0 { 1.0 } else { y1 * 1.08 };
        let top = spec.y_max.map_or(top, |m| top.min(m.max(y1)));
        (0f64.min(y0), if top > 0.0 { top } else { 1.0 })
    };
    Some(((x0, x1), (y0, y1)))
}

/// A logarithmic range widened to the tick grid around it (powers of two for
/// sizes, 1-2-5 of each decade otherwise), so both ends carry a label.
fn snap(unit: AxisUnit, lo: f64, hi: f64) -> (f64, f64) {
    if unit == AxisUnit::Bytes {
        return (2f64.powf(lo.log2().floor()), 2f64.powf(hi.log2().ceil()));
    }
    let grid = |v: f64| {
        let d = 10f64.powf(v.log10().floor());
        [1.0, 2.0, 5.0, 10.0].map(|m| m * d)
    };
    let down = grid(lo)
        .into_iter()
        .rev()
        .find(|g| *g <= lo * 1.000_001)
        .unwrap_or(lo);
    let up = grid(hi)
        .into_iter()
        .find(|g| *g >= hi * 0.999_999)
        .unwrap_or(hi);
    (down, up)
}

/// A series' band, clamped to `[0, y_max]` (an interval of a non-negative
/// quantity never reaches below zero, nor a fraction above one).
fn clamped_band(spec: &PlotSpec, s: &Series) -> Vec<(f64, f64, f64)> {
    s.band
        .iter()
        .filter(|b| b.0.is_finite() && b.1.is_finite() && b.2.is_finite())
        .map(|&(x, lo, hi)| {
            let top = spec.y_max.unwrap_or(f64::INFINITY);
            (x, lo.clamp(0.0, top), hi.clamp(0.0, top))
        })
        .filter(|b| !spec.log_y || b.1 > 0.0)
        .collect()
}

/// Renders the plot as SVG text; a plot with no points renders a note instead.
pub fn svg(spec: &PlotSpec) -> String {
    let rows = spec.series.len().div_ceil(2) as u32;
    let height = CHART_HEIGHT + rows * LEGEND_ROW + 10;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, height)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let (chart, legend_area) = root.split_vertically(CHART_HEIGHT);
        let _ = draw(&chart, spec);
        let _ = legend(&legend_area, spec);
        let _ = root.present();
    }
    out
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// A logarithmic axis's ticks, thinned so that no two labels touch: across,
/// by their width; up, 16 px apart.
fn log_axis(unit: AxisUnit, lo: f64, hi: f64, pixels: f64, horizontal: bool) -> Vec<f64> {
    let t = log_ticks(unit, lo, hi);
    if horizontal {
        return thin(unit, lo, hi, pixels, t);
    }
    let pos = |v: f64| (v.ln() - lo.ln()) / (hi.ln() - lo.ln()) * pixels;
    let mut out: Vec<f64> = Vec::new();
    for v in t {
        if out.last().is_none_or(|&p| pos(v) - pos(p) >= 16.0) {
            out.push(v);
        }
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let Some(((x0, x1), (y0, y1))) = bounds(spec) else {
        root.draw(&Text::new(
            format!("{}: no data", spec.title),
            (40, 200),
            ("sans-serif", 16),
        ))?;
        return Ok(());
    };
    let mut b = ChartBuilder::on(root);
    b.caption(&spec.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(78);
    // A logarithmic axis ticks where `ticks` says; a linear one takes plotters'
    // own round steps (about six), written the same way.
    let n = |log: bool| if log { 50 } else { 6 };
    let counts = (n(spec.log_x), n(spec.log_y));
    let (xr, yr) = (x0..x1, y0..y1);
    let xt = || log_axis(spec.x_unit, x0, x1, PLOT_WIDTH, true);
    let yt = || log_axis(spec.y_unit, y0, y1, PLOT_HEIGHT, false);
    match (spec.log_x, spec.log_y) {
        (false, false) => chart(&mut b, spec, xr, yr, counts),
        (true, false) => chart(
            &mut b,
            spec,
            xr.log_scale().with_key_points(xt()),
            yr,
            counts,
        ),
        (false, true) => chart(
            &mut b,
            spec,
            xr,
            yr.log_scale().with_key_points(yt()),
            counts,
        ),
        (true, true) => chart(
            &mut b,
            spec,
            xr.log_scale().with_key_points(xt()),
            yr.log_scale().with_key_points(yt()),
            counts,
        ),
    }
}

fn chart<'a, DB, X, Y>(
    b: &mut ChartBuilder<'a, 'a, DB>,
    spec: &PlotSpec,
    x: X,
    y: Y,
    (x_labels, y_labels): (usize, usize),
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut c = b.build_cartesian_2d(x, y)?;
    let (xu, yu) = (spec.x_unit, spec.y_unit);
    let xf = move |v: &f64| xu.tick(*v);
    let yf = move |v: &f64| yu.tick(*v);
    c.configure_mesh()
        .x_desc(&spec.x_label)
        .y_desc(&spec.y_label)
        .x_labels(x_labels)
        .y_labels(y_labels)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(TRANSPARENT)
        .draw()?;
    for (i, s) in spec.series.iter().enumerate() {
        let (colour, dash, marker) = style(i, s);
        let band = clamped_band(spec, s);
        if band.len() >= 2 {
            let mut poly: Vec<(f64, f64)> = band.iter().map(|b| (b.0, b.2)).collect();
            poly.extend(band.iter().rev().map(|b| (b.0, b.1)));
            c.draw_series(std::iter::once(Polygon::new(
                poly,
                colour.mix(0.15).filled(),
            )))?;
        }
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .copied()
            .filter(|p| {
                p.0.is_finite()
                    && p.1.is_finite()
                    && (!spec.log_x || p.0 > 0.0)
                    && (!spec.log_y || p.1 > 0.0)
            })
            .collect();
        let line = ShapeStyle::from(&colour).stroke_width(2);
        match dash {
            Dash::Solid => {
                c.draw_series(LineSeries::new(pts.iter().copied(), line))?;
            }
            Dash::Dashed => {
                c.draw_series(DashedLineSeries::new(pts.iter().copied(), 8, 5, line))?;
            }
            Dash::Dotted => {
                c.draw_series(DashedLineSeries::new(pts.iter().copied(), 2, 4, line))?;
            }
        }
        match marker {
            Marker::None => {}
            Marker::Circle => {
                c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
            }
            Marker::Triangle => {
                c.draw_series(
                    pts.iter()
                        .map(|&p| TriangleMarker::new(p, 4, colour.filled())),
                )?;
            }
            Marker::Cross => {
                c.draw_series(
                    pts.iter()
                        .map(|&p| Cross::new(p, 4, colour.stroke_width(2))),
                )?;
            }
        }
    }
    Ok(())
}

/// The legend, below the plot: two columns, each entry its series' colour, line
/// style and marker, then its name.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    spec: &PlotSpec,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let col = (WIDTH as i32 - 40) / 2;
    for (i, s) in spec.series.iter().enumerate() {
        let (colour, dash, marker) = style(i, s);
        let x = 20 + (i as i32 % 2) * col;
        let y = 10 + (i as i32 / 2) * LEGEND_ROW as i32;
        let line = ShapeStyle::from(&colour).stroke_width(2);
        let seg = [(x, y), (x + 30, y)];
        match dash {
            Dash::Solid => area.draw(&PathElement::new(seg.to_vec(), line))?,
            Dash::Dashed => {
                for k in 0..3 {
                    let a = x + k * 11;
                    area.draw(&PathElement::new(vec![(a, y), (a + 7, y)], line))?;
                }
            }
            Dash::Dotted => {
                for k in 0..6 {
                    let a = x + k * 6;
                    area.draw(&PathElement::new(vec![(a, y), (a + 2, y)], line))?;
                }
            }
        }
        let m = (x + 15, y);
        match marker {
            Marker::None => {}
            Marker::Circle => area.draw(&Circle::new(m, 3, colour.filled()))?,
            Marker::Triangle => area.draw(&TriangleMarker::new(m, 4, colour.filled()))?,
            Marker::Cross => area.draw(&Cross::new(m, 4, colour.stroke_width(2)))?,
        }
        let mut name = s.name.clone();
        if name.chars().count() > 56 {
            name = name.chars().take(55).collect::<String>() + "…";
        }
        area.draw(&Text::new(
            name,
            (x + 38, y - 7),
            ("sans-serif", 13).into_font().color(&BLACK),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_written_with_prefixes() {
        assert_eq!(AxisUnit::Bytes.tick(65536.0), "64 K");
        assert_eq!(AxisUnit::Bytes.tick(1024.0), "1 K");
        assert_eq!(AxisUnit::Bytes.tick(1048576.0), "1 M");
        assert_eq!(AxisUnit::Bytes.tick(64.0), "64");
        assert_eq!(AxisUnit::Bytes.tick(20_000.0), "20 k");
        assert_eq!(AxisUnit::BitRate.tick(10e9), "10 G");
        assert_eq!(AxisUnit::BitRate.tick(2.5e9), "2.5 G");
        assert_eq!(AxisUnit::BitRate.tick(0.0), "0");
        assert_eq!(AxisUnit::Seconds.tick(50e-6), "50 us");
        assert_eq!(AxisUnit::Seconds.tick(0.002), "2 ms");
        assert_eq!(AxisUnit::Fraction.tick(0.25), "0.25");
        assert_eq!(AxisUnit::Plain.tick(1500.0), "1.5 k");
        assert_eq!(AxisUnit::Clock.tick(1_795_000_000.0), "11:06");
    }

    #[test]
    fn log_size_ticks_are_powers_of_two_and_never_more_than_eight() {
        let t = log_ticks(AxisUnit::Bytes, 64.0, 65536.0);
        assert!(t.len() <= 8 && t.len() >= 4, "{t:?}");
        assert!(t.iter().all(|v| v.log2().fract() == 0.0));
        assert_eq!(t.last(), Some(&65536.0));
        let t = log_ticks(AxisUnit::Seconds, 20e-6, 3e-3);
        assert_eq!(t.first(), Some(&20e-6));
        assert_eq!(t.last(), Some(&2e-3));
    }

    #[test]
    fn thinned_labels_never_touch() {
        // Every power of two from 1 B to 1 GiB on a 300 px axis.
        let all: Vec<f64> = (0..=30).map(|e| 2f64.powi(e)).collect();
        let t = thin(AxisUnit::Bytes, 1.0, 2f64.powi(30), 300.0, all);
        assert!(t.len() >= 3 && t.len() < 31, "{t:?}");
    }
}
