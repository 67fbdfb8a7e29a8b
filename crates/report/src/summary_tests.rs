//! The summary's golden texts (a sweep, a search and a mesh, at a terminal's
//! 80 columns and wider) and its rules.

use super::*;
use crate::fixture;

fn summary(view: &RunView) -> Summary {
    let mut s = Summary::of(view);
    s.report = Some(format!("netsonde-report-{}/report.html", s.run));
    s.store = Some("/home/user/.local/share/netsonde/netsonde.db".into());
    s
}

/// No line is wider than the terminal.
fn fits(text: &str, width: usize) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= width,
            "{} columns: {l}",
            l.chars().count()
        );
    }
}

#[test]
fn sweep_golden() {
    let s = summary(&fixture::sweep());
    let t = text(&s, WIDTH);
    fits(&t, WIDTH);
    insta::assert_snapshot!("sweep_80", t);
    let wide = text(&s, 132);
    fits(&wide, 132);
    insta::assert_snapshot!("sweep_132", wide);
}

#[test]
fn search_golden() {
    let s = summary(&fixture::search());
    assert_eq!(s.kind, Kind::Search);
    let t = text(&s, WIDTH);
    fits(&t, WIDTH);
    insta::assert_snapshot!("search_80", t);
}

#[test]
fn mesh_golden() {
    let s = summary(&fixture::mesh());
    assert_eq!(s.kind, Kind::Mesh);
    let t = text(&s, WIDTH);
    fits(&t, WIDTH);
    insta::assert_snapshot!("mesh_80", t);
}

/// Issue 52: a reason too long for its row is said whole under the table,
/// never cut with "…".
#[test]
fn a_long_reason_is_said_whole_under_the_table() {
    let mut s = summary(&fixture::mesh());
    let long = "agent c did not answer within 10 s: its host refused the connection \
                (os error 111), twice, and no further try was made";
    for r in s.points.iter_mut().filter(|r| r.status != "done") {
        r.reason = Some(long.into());
    }
    let t = text(&s, WIDTH);
    fits(&t, WIDTH);
    assert!(!t.contains('…') || !t.contains("no further"), "{t}");
    assert!(t.contains("failed (why: below)"), "{t}");
    let joined = t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(joined.contains(&format!("point 8: failed: {long}")), "{t}");
}

#[test]
fn the_json_document_is_the_same_summary() {
    let s = summary(&fixture::search());
    let doc = serde_json::to_value(&s).unwrap();
    // The search's own fields, as `search --json` gave them before.
    for k in [
        "schema_version",
        "run",
        "config",
        "trial",
        "warmup",
        "searches",
    ] {
        assert!(doc.get(k).is_some(), "{k}: {doc}");
    }
    assert_eq!(doc["points"].as_array().unwrap().len(), s.points.len());
    assert_eq!(doc["report"], "netsonde-report-9/report.html");
    let s = summary(&fixture::sweep());
    let doc = serde_json::to_value(&s).unwrap();
    assert!(doc.get("searches").is_none(), "{doc}");
    let p = &doc["points"][0];
    assert_eq!(p["figure"]["metric"], "goodput");
    assert_eq!(p["cpu"]["unit"], "us/KiB");
    assert!(p["figure"]["low"].as_f64().unwrap() <= p["figure"]["median"].as_f64().unwrap());
}

#[test]
fn a_warning_is_said_once_with_every_point_it_concerns() {
    let mut v = fixture::sweep();
    v.warnings = (0..5)
        .map(|i| {
            (
                i,
                String::new(),
                Quality::HighVariance {
                    metric: "goodput".into(),
                    cv: 0.05 * f64::from(i + 1),
                    need: 3 * (i as usize + 1),
                },
                String::new(),
            )
        })
        .chain([(
            9,
            String::new(),
            Quality::NotSteady { cv: 0.2 },
            String::new(),
        )])
        .collect();
    let s = Summary::of(&v);
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert_eq!(w.points, vec![0, 1, 2, 3, 4]);
    // The worst case speaks for them.
    assert!(w.what.contains("CV 25.0%"), "{}", w.what);
    assert!(w.advice.contains("--repeat 15"), "{}", w.advice);
    let t = text(&s, WIDTH);
    assert_eq!(t.matches("high variance in goodput").count(), 1, "{t}");
    assert!(t.contains("at 5 points (0–4)"), "{t}");
    fits(&t, WIDTH);
}

#[test]
fn point_ranges() {
    assert_eq!(ranges(&[5, 0, 1, 2, 7, 8, 11]), "0–2, 5, 7, 8, 11");
}

#[test]
fn too_few_repetitions_show_n_not_an_interval() {
    let f = Figure {
        metric: "goodput",
        unit: "bit/s",
        median: 9.41e9,
        low: None,
        high: None,
        coverage: None,
        n: 1,
    };
    assert_eq!(figure_cell(&f), "9.41 Gbit/s (n = 1)");
    let f = Figure {
        metric: "transactions_per_sec",
        median: 50_123.0,
        low: Some(49_600.0),
        high: Some(50_500.0),
        coverage: Some(0.75),
        n: 3,
        unit: "1/s",
    };
    assert_eq!(figure_cell(&f), "50.1 k trans/s [49.6–50.5]");
}

/// Issue 54: a sweep mixing transports says each encrypted point's median
/// against plain TCP's at the same size (and only there), in its own column.
#[test]
fn an_encrypted_point_is_given_its_ratio_to_tcp_at_the_same_size() {
    let point = |i: u32, test: &str, size: &str, median: f64| Row {
        point: i,
        label: format!("{test} {size}"),
        axes: [("test", test), ("size", size)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        status: "done".into(),
        reason: None,
        figure: Some(Figure {
            metric: "goodput",
            unit: "bit/s",
            median,
            low: Some(median * 0.99),
            high: Some(median * 1.01),
            coverage: Some(0.75),
            n: 3,
        }),
        cpu: None,
        verdict: None,
        to_tcp: None,
        rr: false,
    };
    let mut rows = vec![
        point(0, "tcp-stream", "16KiB", 20e9),
        point(1, "tls-stream", "16KiB", 10e9),
        point(2, "quic-stream", "16KiB", 5e9),
        point(3, "tcp-stream", "128KiB", 40e9),
        point(4, "tls-stream", "128KiB", 24e9),
        point(5, "quic-stream", "1KiB", 1e9),
    ];
    ratios_to_tcp(&mut rows);
    let r: Vec<Option<f64>> = rows.iter().map(|r| r.to_tcp).collect();
    assert_eq!(r, [None, Some(0.5), Some(0.25), None, Some(0.6), None]);
    let refs: Vec<&Row> = rows.iter().collect();
    let t = point_table(&refs, "goodput", "us/KiB", WIDTH);
    assert!(t.lines().next().unwrap().contains("of TCP"), "{t}");
    assert!(t.contains("0.50") && t.contains("0.60"), "{t}");
    fits(&t, WIDTH);
}
