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
