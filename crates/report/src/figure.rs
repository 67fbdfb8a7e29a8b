//! What every figure shares: a plot as data ([`PlotSpec`], [`Series`]), what an
//! axis measures and how its ticks are written ([`AxisUnit`]), the palette and
//! the 1-2-5 ticks of a logarithmic axis. `plot` draws a `PlotSpec`, `load_plot`
//! a load-latency test's figure, `study` builds the specs of a run.

use plotters::style::RGBColor;
use serde::Serialize;

/// Ten distinguishable colours (Tableau 10), for every figure.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// What an axis measures, which decides how its ticks are placed and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AxisUnit {
    /// Bytes: binary prefixes (`64 K` is 65,536), powers of two on a log axis;
    /// a linear axis's round decimal steps keep decimal ones (`20 k`).
    Bytes,
    /// Bits per second: SI prefixes (`500 M`, `2.5 G`); the label names the unit.
    BitRate,
    /// Seconds: written with a prefixed unit (`50 µs`, `2 ms`).
    Seconds,
    /// A fraction between 0 and 1.
    Fraction,
    /// A plain quantity: SI prefixes past a thousand.
    Plain,
    /// A moment, as Unix seconds: written as its UTC time of day (`14:05`),
    /// the label giving the day.
    Clock,
}

/// Unix seconds as `HH:MM` UTC.
fn clock(v: f64) -> String {
    let fmt = time::macros::format_description!("[hour]:[minute]");
    time::OffsetDateTime::from_unix_timestamp(v as i64)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| format!("{v:.0}"))
}

impl AxisUnit {
    /// A tick's text.
    pub fn tick(self, v: f64) -> String {
        match self {
            AxisUnit::Bytes => bytes(v),
            AxisUnit::BitRate | AxisUnit::Plain => si(v, ""),
            AxisUnit::Seconds => seconds(v),
            AxisUnit::Fraction => short(v),
            AxisUnit::Clock => clock(v),
        }
    }
}

/// Up to three significant digits, no trailing zeros.
fn short(v: f64) -> String {
    let s = crate::layout::sig3(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn si(v: f64, unit: &str) -> String {
    let a = v.abs();
    let (d, p) = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
        .into_iter()
        .find(|(d, _)| a >= *d)
        .unwrap_or((1.0, ""));
    let sep = if p.is_empty() && unit.is_empty() {
        ""
    } else {
        " "
    };
    format!("{}{sep}{p}{unit}", short(v / d))
}

/// Binary prefixes (`64 K`) for multiples of 1024, as sizes are given; decimal
/// ones (`20 k`) for the round steps of a linear axis.
fn bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 && a % 1024.0 != 0.0 {
        return si(v, "");
    }
    let (d, p) = [
        (1u64 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ]
    .into_iter()
    .map(|(d, p)| (d as f64, p))
    .find(|(d, _)| a >= *d)
    .unwrap_or((1.0, ""));
    if p.is_empty() {
        short(v)
    } else {
        format!("{} {p}", short(v / d))
    }
}

fn seconds(v: f64) -> String {
    let a = v.abs();
    let (d, u) = [(1.0, "s"), (1e-3, "ms"), (1e-6, "us")]
        .into_iter()
        .find(|(d, _)| a >= *d)
        .unwrap_or((1e-9, "ns"));
    format!("{} {u}", short(v / d))
}

/// One line of a plot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    /// Legend.
    pub name: String,
    /// Points, x ascending.
    pub points: Vec<(f64, f64)>,
    /// Confidence band: (x, low, high).
    pub band: Vec<(f64, f64, f64)>,
    /// Drawn dashed (a model rather than a measurement).
    pub dashed: bool,
}

/// A plot, independent of how it is drawn (golden-tested as data).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlotSpec {
    /// File-name stem.
    pub id: String,
    /// Title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// What the x axis measures (its ticks follow).
    pub x_unit: AxisUnit,
    /// What the y axis measures.
    pub y_unit: AxisUnit,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The most the y quantity can physically be (1 for a fraction), where there
    /// is such a bound: bands are clamped to it.
    pub y_max: Option<f64>,
    /// Lines.
    pub series: Vec<Series>,
}

/// The 1-2-5 values of each decade within `[lo, hi]`: labelled ticks on a
/// logarithmic axis, however narrow its span.
pub fn one_two_five(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    if !(lo > 0.0 && hi > lo) {
        return out;
    }
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi && out.len() < 64 {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
        decade *= 10.0;
    }
    out
}
