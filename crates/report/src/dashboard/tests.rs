use super::*;
use netsonde_model::watch::{Baseline, MetricWatch};

fn pair(src: &str, dst: &str, state: PairState, latest: f64) -> PairWatch {
    PairWatch {
        src: src.into(),
        dst: dst.into(),
        test: "tcp-stream".into(),
        state,
        why: "within its normal".into(),
        verdict: Some("link-bound".into()),
        metrics: vec![MetricWatch {
            metric: "goodput".into(),
            latest,
            baseline: Some(Baseline {
                median: 9.4e8,
                low: 9.3e8,
                high: 9.5e8,
                spread: 0.03e8,
                rounds: 5,
            }),
            change: None,
            worse: state == PairState::Degraded,
        }],
        change: Some(latest / 9.4e8 - 1.0),
        worse_ratio: Some(0.0),
        worse_of: (0, 3),
        run: 7,
        at_unix_s: 1_700_000_000,
    }
}

#[test]
fn the_grid_colours_each_pair_by_its_state_and_links_its_history() {
    let pairs = [
        pair("a", "b", PairState::Ok, 9.4e8),
        pair("b", "a", PairState::Degraded, 4.1e8),
        pair("a", "c", PairState::Failed, 0.0),
    ];
    let html = page(
        "pairs",
        &grids("monitor", &pairs, Some(1_700_000_000)),
        true,
    );
    assert_eq!(html.matches("class=\"cell degraded\"").count(), 1, "{html}");
    assert!(html.contains("data-src=\"b\" data-dst=\"a\" data-state=\"degraded\""));
    assert!(
        html.contains("href=\"/pair?monitor=monitor&amp;src=b&amp;dst=a&amp;test=tcp%2Dstream\"")
    );
    assert!(!html.contains("<script"));
    // The change against the normal in the cell, and the page reloads itself.
    assert!(
        html.contains("<span class=\"change\">-56%</span> degraded"),
        "{html}"
    );
    assert!(html.contains("<meta http-equiv=\"refresh\" content=\"60\">"));
    assert_eq!(when(1_700_000_000), "2023-11-14 22:13 UTC");
}

#[test]
fn a_pairs_history_plots_each_metric_with_its_band_and_marks_degraded_rounds() {
    let mut h = vec![
        pair("a", "b", PairState::Ok, 9.4e8),
        pair("a", "b", PairState::Ok, 9.5e8),
        pair("a", "b", PairState::Degraded, 4.0e8),
    ];
    let html = pair_history(&h);
    assert_eq!(html.matches("<svg").count(), 1);
    assert!(html.contains("degraded rounds"), "{html}");
    assert_eq!(html.matches("<tr data-state=").count(), 3);
    // Time on the x axis, the unit on the y axis.
    assert!(
        html.contains("time (UTC), from 2023-11-14 22:13 UTC"),
        "{html}"
    );
    assert!(html.contains("goodput (bit/s)"), "{html}");
    // A failed latest round keeps the plot, and is marked on it.
    let mut failed = pair("a", "b", PairState::Failed, 0.0);
    failed.metrics.clear();
    failed.at_unix_s += 600;
    h.push(failed);
    let html = pair_history(&h);
    assert_eq!(html.matches("<svg").count(), 1, "{html}");
    assert!(html.contains("failed rounds"), "{html}");
}

#[test]
fn the_agents_page_says_which_are_down_and_why() {
    let list = [
        AgentWatch {
            name: "h1".into(),
            up: true,
            failed_pairs: 0,
            why: None,
            last_seen_unix_s: Some(1_700_000_000),
        },
        AgentWatch {
            name: "h<2>".into(),
            up: false,
            failed_pairs: 6,
            why: Some("cannot connect".into()),
            last_seen_unix_s: None,
        },
    ];
    let html = agents("monitor", &list);
    assert!(
        html.contains("data-agent=\"h&lt;2&gt;\" data-state=\"down\""),
        "{html}"
    );
    assert!(html.contains("<td class=\"num\">6</td><td>never</td><td>cannot connect</td>"));
    assert!(html.contains("data-agent=\"h1\" data-state=\"up\""));
}
