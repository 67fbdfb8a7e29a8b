//! Golden tests of the sweep renderers over the scripted-engine fixture.

use crate::fixture;

#[test]
fn markdown_golden() {
    insta::assert_snapshot!(crate::markdown::render(&fixture::study()));
}

#[test]
fn csv_golden() {
    let csv = crate::csv::render(&fixture::study());
    let cols = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == cols));
    insta::assert_snapshot!(csv);
}

#[test]
fn plot_specs_golden() {
    let s = fixture::study();
    let ids: Vec<&str> = s.plots.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "throughput-size",
            "cpu-size",
            "service-demand-size",
            "latency-size",
            "throughput-window",
            "latency-cdf"
        ]
    );
    insta::assert_json_snapshot!(s.plots);
}

#[test]
fn fit_recovers_the_scripted_model() {
    let s = fixture::study();
    let f = s
        .fit
        .as_ref()
        .expect("an RR line over four sizes is fitted");
    // The fake engine's round trip is 2*(0.4 ns/B * B + 10 us) with ±2% noise: one way
    // is 0.4 ns/B * B + 10 us.
    assert!((f.fit.slope - 0.4).abs() < 0.05, "{:?}", f.fit);
    assert!((f.fit.intercept - 10_000.0).abs() < 400.0, "{:?}", f.fit);
    assert!(f.fit.r2 > 0.95);
    assert!(f
        .rows
        .iter()
        .all(|r| r.measured_bps.is_some() && r.predicted_bps.is_some()));
}

#[test]
fn html_is_self_contained_and_has_every_plot() {
    let s = fixture::study();
    let html = crate::html::render(&s);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg").count(), s.plots.len());
    for banned in ["<script", "<link", "http://", "https://", "@import", "url("] {
        // SVG's xmlns is the one allowed URL: a namespace name, not a fetch.
        let hits = html.matches(banned).count();
        let allowed = if banned == "http://" {
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        } else {
            0
        };
        assert_eq!(hits, allowed, "{banned}");
    }
    for t in [
        "Outbound, inbound and bidirectional",
        "Latency model",
        "Knees",
        "Efficiency and bottlenecks",
    ] {
        assert!(html.contains(t), "{t}");
    }
}

/// A drawn text: where it is anchored, its font size and what it says.
#[derive(Debug)]
struct SvgText {
    x: f64,
    y: f64,
    size: f64,
    anchor: String,
    text: String,
}

fn svg_texts(svg: &str) -> Vec<SvgText> {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let k = format!(" {name}=\"");
        let i = tag.find(&k)? + k.len();
        Some(tag[i..].split('"').next()?.to_string())
    };
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let (tag, rest) = t.split_once('>')?;
            let text = rest.split("</text>").next()?.trim().to_string();
            Some(SvgText {
                x: attr(tag, "x")?.parse().ok()?,
                y: attr(tag, "y")?.parse().ok()?,
                size: attr(tag, "font-size")?.parse().ok()?,
                anchor: attr(tag, "text-anchor").unwrap_or_else(|| "start".into()),
                text,
            })
        })
        .collect()
}

/// The horizontal extent of a text, at about 0.6 em per character.
fn extent(t: &SvgText) -> (f64, f64) {
    let w = t.text.chars().count() as f64 * t.size * 0.6;
    match t.anchor.as_str() {
        "middle" => (t.x - w / 2.0, t.x + w / 2.0),
        "end" => (t.x - w, t.x),
        _ => (t.x, t.x + w),
    }
}

/// Every figure of the fixture has labelled ticks on both axes, and no two texts
/// on one line overlap.
#[test]
fn every_figure_has_tick_labels_that_do_not_overlap() {
    for p in &fixture::study().plots {
        let svg = crate::plot::svg(p);
        let texts = svg_texts(&svg);
        // x ticks: centred texts in one row below the plot (above the axis label).
        let mut rows: std::collections::BTreeMap<i64, Vec<&SvgText>> = Default::default();
        for t in &texts {
            rows.entry(t.y.round() as i64).or_default().push(t);
        }
        let x_ticks = rows
            .values()
            .filter(|r| r.len() >= 2 && r.iter().all(|t| t.anchor == "middle"))
            .map(|r| r.len())
            .max()
            .unwrap_or(0);
        assert!(x_ticks >= 3, "{}: {x_ticks} x tick labels", p.id);
        let y_ticks = texts.iter().filter(|t| t.anchor == "end").count();
        assert!(y_ticks >= 3, "{}: {y_ticks} y tick labels", p.id);
        for t in &texts {
            assert!(!t.text.is_empty(), "{}: an empty label", p.id);
            assert!(
                !t.text.contains(".0") || t.text.contains("/"),
                "{}: '{}'",
                p.id,
                t.text
            );
        }
        for row in rows.values() {
            let mut spans: Vec<(f64, f64)> = row.iter().map(|t| extent(t)).collect();
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            for w in spans.windows(2) {
                assert!(w[0].1 <= w[1].0, "{}: labels overlap in {row:?}", p.id);
            }
        }
        insta::assert_snapshot!(format!("svg_{}", p.id), svg);
    }
}

/// Beyond ten series, colours come round again with another line style and
/// marker; the legend lists every series below the plot; a band never goes
/// below zero.
#[test]
fn many_series_stay_distinguishable_and_bands_stay_physical() {
    use crate::plot::AxisUnit;
    use crate::view::{PlotSpec, Series};
    let series = (0..12)
        .map(|i| Series {
            name: format!("series {i}"),
            points: (0..5)
                .map(|k| (f64::from(1u32 << (6 + 2 * k)), f64::from(i + k) * 1e8))
                .collect(),
            band: (0..5)
                .map(|k| {
                    let x = f64::from(1u32 << (6 + 2 * k));
                    (x, -5e8, f64::from(i + k) * 1.1e8)
                })
                .collect(),
            dashed: false,
        })
        .collect();
    let spec = PlotSpec {
        id: "many".into(),
        title: "twelve series".into(),
        x_label: "message size (bytes)".into(),
        y_label: "goodput (bit/s)".into(),
        x_unit: AxisUnit::Bytes,
        y_unit: AxisUnit::BitRate,
        log_x: true,
        log_y: false,
        y_max: None,
        series,
    };
    let svg = crate::plot::svg(&spec);
    let texts = svg_texts(&svg);
    for i in 0..12 {
        let legend = texts
            .iter()
            .find(|t| t.text == format!("series {i}"))
            .expect("every series in the legend");
        assert!(legend.y > 430.0, "legend entry inside the plot");
    }
    // Neighbours differ in line style as well as colour (dashed and dotted
    // lines among them), so series on the same figures both show.
    assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 12);
    // No y tick below zero: the band is clamped.
    assert!(!texts.iter().any(|t| t.text.starts_with('-')), "{texts:?}");
    insta::assert_snapshot!("svg_many_series", svg);
    let empty = PlotSpec {
        series: vec![],
        ..spec
    };
    assert!(crate::plot::svg(&empty).contains("no data"));
}

/// Issue 52: the quality warnings are a row per kind of warning and advice,
/// naming the points it hit, not the same hint down the table per point.
#[test]
fn quality_warnings_are_grouped_by_kind() {
    use netsonde_model::sweep::Quality;
    let mut s = fixture::study();
    let few = |n| Quality::TooFewRepetitions { n, need: 5 };
    s.warnings = (1..=6)
        .map(|i| (i, format!("cfg {}", i % 2), few(1), few(1).hint()))
        .chain([(
            2,
            "cfg 0".to_string(),
            Quality::NotSteady { cv: 0.3 },
            "settle".to_string(),
        )])
        .collect();
    let tables = crate::tables::tables(&s);
    let t = tables
        .iter()
        .find(|t| t.title == "Quality warnings")
        .unwrap();
    assert_eq!(t.rows.len(), 2, "{:?}", t.rows);
    assert_eq!(t.rows[0][0], "1, 2, 3, 4, 5, 6");
    assert_eq!(t.rows[0][1], "cfg 1; cfg 0");
    assert!(
        t.rows[0][2].ends_with("(and 5 more like it)"),
        "{:?}",
        t.rows[0]
    );
    assert_eq!(t.rows[1][0], "2");
}

/// Issue 54: tls-stream and quic-stream share tcp-stream's throughput panel,
/// on one y axis, so what encryption costs shows at each size; a paced
/// udp-stream keeps a panel of its own.
#[test]
fn encrypted_streams_share_tcps_throughput_panel() {
    let view = crate::fixture::transports();
    let ids: Vec<&str> = view
        .plots
        .iter()
        .filter(|p| p.id.starts_with("throughput-size"))
        .map(|p| p.id.as_str())
        .collect();
    assert_eq!(
        ids,
        ["throughput-size-tcp-stream", "throughput-size-udp-stream"]
    );
    let tcp = &view.plots[0];
    assert_eq!(tcp.series.len(), 3, "{:?}", tcp.series);
    assert!(
        tcp.title.contains("tls-stream") && tcp.title.contains("quic-stream"),
        "{}",
        tcp.title
    );
}
