//! Unit tests of `auto.rs`.

use super::*;

/// Runs a race where candidate `i` moves `rates[i] * drift(round)` bytes per window.
fn run(race: &mut Race, rates: &[f64], cpu: &[f64]) -> Verdict {
    for w in 0..1000 {
        let c = race.current();
        // Conditions swing by 2x from window to window; the race must see through it.
        let drift = if (w / 3) % 2 == 0 { 1.0 } else { 0.5 };
        let bytes = (rates[c] * drift * 1e6) as u64;
        if let Some(v) = race.record(bytes, 0.01, cpu[c] * bytes as f64) {
            return v;
        }
    }
    panic!("the race never ended");
}

#[test]
fn fastest_wins_through_drift_and_slow_ones_drop_early() {
    let mut r = Race::new(vec![0, 1, 2, 3], FINAL);
    let v = run(&mut r, &[10.0, 30.0, 12.0, 20.0], &[1.0; 4]);
    assert_eq!(v.pick, 1);
    assert_eq!(v.why, Why::Fastest);
    assert_eq!(v.finalists, vec![1]);
    assert_eq!(
        r.round, FINAL.min_rounds,
        "clear losers drop after the minimum rounds"
    );
}

#[test]
fn a_tie_goes_to_the_lowest_cpu_per_byte() {
    let mut r = Race::new(vec![0, 1, 2], FINAL);
    let v = run(&mut r, &[20.0, 19.5, 5.0], &[3.0, 1.0, 0.1]);
    assert_eq!(v.pick, 1);
    assert_eq!(v.why, Why::Cheapest);
    assert_eq!(v.finalists, vec![0, 1]);
    assert_eq!(r.round, FINAL.max_rounds, "close rivals race to the end");
}

#[test]
fn a_disqualified_candidate_leaves_but_the_last_one_stays() {
    let mut r = Race::new(vec![0, 1, 2], FINAL);
    // Candidate 0 is the fastest but is disqualified after its first window.
    assert_eq!(r.current(), 0);
    r.disqualify(0);
    let v = run(&mut r, &[50.0, 20.0, 19.0], &[1.0; 3]);
    assert_ne!(v.pick, 0);
    assert!(!v.finalists.contains(&0), "{v:?}");
    let mut r = Race::new(vec![4], SCREEN);
    r.disqualify(4);
    assert_eq!(r.record(1, 0.01, 0.0).map(|v| v.pick), Some(4));
    assert!(r.score_of(4) > 0.99 && r.score_of(7) == 0.0);
}

#[test]
fn entrants_are_candidate_indices_and_order_rotates() {
    let mut r = Race::new(
        vec![2, 5],
        Heat {
            min_rounds: 2,
            max_rounds: 2,
            ..RECHECK
        },
    );
    let mut seen = Vec::new();
    loop {
        let c = r.current();
        seen.push(c);
        if let Some(v) = r.record(if c == 5 { 100 } else { 50 }, 0.01, 0.0) {
            assert_eq!(v.pick, 5);
            break;
        }
    }
    assert_eq!(seen, vec![2, 5, 5, 2]);
}

#[test]
fn one_candidate_is_decided_after_one_round_and_zero_rates_do_not_divide() {
    let mut r = Race::new(vec![0], SCREEN);
    assert_eq!(r.record(0, 0.0, 0.0).map(|v| v.why), Some(Why::Alone));
    let mut r = Race::new(
        vec![0, 1],
        Heat {
            min_rounds: 1,
            max_rounds: 1,
            ..FINAL
        },
    );
    assert!(r.record(0, 0.01, 0.0).is_none());
    let v = r.record(0, 0.01, 0.0).unwrap();
    assert!(v.pick == 0 || v.pick == 1);
}
