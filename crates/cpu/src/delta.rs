//! Turning two snapshots into a [`CpuReport`]. Pure: no clock, no files.
//!
//! Each core's shares are taken against that core's own total jiffy delta rather than
//! against wall time times `USER_HZ`, so the result does not depend on `USER_HZ` and
//! each core's fields add up to 100% even when tick accounting drifts a little.

use netsonde_model::cpu::{CoreUsage, CpuReport, ProcessUsage};
use netsonde_model::units::{Nanos, Percent};

use crate::rusage::RusageSnapshot;
use crate::stat::{CpuTimes, StatSnapshot};

/// Computes the CPU report for the interval between two snapshots.
///
/// - Per core: every field is a share of that core's total jiffy delta. A core with
///   no ticks at all in the interval reports 100% idle.
/// - Cores present in only one snapshot (hotplugged in or out) are skipped.
/// - `total` comes from the aggregate `cpu` line, so it is the average over cores.
/// - `busy_cores` is the sum over cores of [`CoreUsage::busy`] / 100.
/// - `process` is `proc_after - proc_before`, saturating at zero.
/// - `elapsed` is copied in; the caller owns the clock.
pub fn cpu_delta(
    before: &StatSnapshot,
    after: &StatSnapshot,
    proc_before: &RusageSnapshot,
    proc_after: &RusageSnapshot,
    elapsed: Nanos,
) -> CpuReport {
    let cores: Vec<CoreUsage> = after
        .cores
        .iter()
        .filter_map(|(&core, now)| {
            let then = before.cores.get(&core)?;
            Some(shares(Some(core), &now.saturating_sub(then)))
        })
        .collect();
    let busy_cores = cores.iter().map(|c| c.busy().0 / 100.0).sum();
    CpuReport {
        elapsed,
        total: shares(None, &after.total.saturating_sub(&before.total)),
        cores,
        busy_cores,
        process: process_delta(proc_before, proc_after),
        threads: None,
        others: None,
        pid: 0,
        udp_drops: None,
        flow_threads: Vec::new(),
        nic: None,
        ..CpuReport::default()
    }
}

/// One core's (or the aggregate's) jiffy deltas as shares of their sum.
fn shares(core: Option<u32>, d: &CpuTimes) -> CoreUsage {
    let total = d.total();
    if total == 0 {
        return CoreUsage {
            core,
            idle: Percent(100.0),
            ..CoreUsage::default()
        };
    }
    let pct = |part: u64| Percent::of(part as f64, total as f64);
    CoreUsage {
        core,
        user: pct(d.user),
        nice: pct(d.nice),
        sys: pct(d.system),
        irq: pct(d.irq),
        softirq: pct(d.softirq),
        iowait: pct(d.iowait),
        steal: pct(d.steal),
        idle: pct(d.idle),
    }
}

fn process_delta(before: &RusageSnapshot, after: &RusageSnapshot) -> ProcessUsage {
    ProcessUsage {
        user: after.user.saturating_sub(before.user),
        sys: after.sys.saturating_sub(before.sys),
        voluntary_ctxsw: after.voluntary_ctxsw.saturating_sub(before.voluntary_ctxsw),
        involuntary_ctxsw: after
            .involuntary_ctxsw
            .saturating_sub(before.involuntary_ctxsw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stat::parse_proc_stat;

    const BEFORE: &str = include_str!("../tests/fixtures/proc_stat_before.txt");
    const AFTER: &str = include_str!("../tests/fixtures/proc_stat_after.txt");
    const EPS: f64 = 1e-9;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < EPS
    }

    fn assert_shares(c: &CoreUsage, expect: [f64; 8]) {
        let got = [
            c.user.0,
            c.nice.0,
            c.sys.0,
            c.idle.0,
            c.iowait.0,
            c.irq.0,
            c.softirq.0,
            c.steal.0,
        ];
        for (i, (g, e)) in got.iter().zip(expect).enumerate() {
            assert!(
                close(*g, e),
                "core {:?} field {i}: got {g}, want {e}",
                c.core
            );
        }
    }

    fn report(before: &StatSnapshot, after: &StatSnapshot) -> CpuReport {
        let r = RusageSnapshot::default();
        cpu_delta(before, after, &r, &r, Nanos::from_secs(1))
    }

    #[test]
    fn per_core_shares_from_fixture_deltas() {
        let r = report(
            &parse_proc_stat(BEFORE).unwrap(),
            &parse_proc_stat(AFTER).unwrap(),
        );
        assert_eq!(r.cores.len(), 2);
        assert_eq!(r.cores[0].core, Some(0));
        assert_eq!(r.cores[1].core, Some(1));
        // Deltas core0: user 50 nice 0 sys 20 idle 15 iowait 0 irq 5 softirq 10 steal 0.
        //    (guest went up by 30 but is inside user already.)
        //        core1: user 10 nice 5 sys 5 idle 78 iowait 2, rest 0. Both sum to 100.
        //   [user, nice, sys, idle, iowait, irq, softirq, steal]
        assert_shares(&r.cores[0], [50.0, 0.0, 20.0, 15.0, 0.0, 5.0, 10.0, 0.0]);
        assert_shares(&r.cores[1], [10.0, 5.0, 5.0, 78.0, 2.0, 0.0, 0.0, 0.0]);
        assert!(close(r.cores[0].busy().0, 85.0));
        assert!(close(r.cores[1].busy().0, 20.0));
        assert!(close(r.busy_cores, 1.05), "busy_cores {}", r.busy_cores);
    }

    #[test]
    fn total_is_the_average_over_cores() {
        let r = report(
            &parse_proc_stat(BEFORE).unwrap(),
            &parse_proc_stat(AFTER).unwrap(),
        );
        assert_eq!(r.total.core, None);
        // Aggregate deltas: user 60 nice 5 sys 25 idle 93 iowait 2 irq 5 softirq 10 of 200.
        assert_shares(&r.total, [30.0, 2.5, 12.5, 46.5, 1.0, 2.5, 5.0, 0.0]);
        assert!(close(r.total.busy().0 * 2.0 / 100.0, r.busy_cores));
        assert_eq!(r.elapsed, Nanos::from_secs(1));
    }

    #[test]
    fn shares_do_not_depend_on_user_hz() {
        // The same interval at USER_HZ 1000 instead of 100: ten times the ticks.
        let scale = |s: &StatSnapshot| {
            let mut s = s.clone();
            for t in s.cores.values_mut().chain(std::iter::once(&mut s.total)) {
                *t = CpuTimes {
                    user: t.user * 10,
                    nice: t.nice * 10,
                    system: t.system * 10,
                    idle: t.idle * 10,
                    iowait: t.iowait * 10,
                    irq: t.irq * 10,
                    softirq: t.softirq * 10,
                    steal: t.steal * 10,
                };
            }
            s
        };
        let before = parse_proc_stat(BEFORE).unwrap();
        let after = parse_proc_stat(AFTER).unwrap();
        let a = report(&before, &after);
        let b = report(&scale(&before), &scale(&after));
        assert_shares(&b.cores[0], [50.0, 0.0, 20.0, 15.0, 0.0, 5.0, 10.0, 0.0]);
        assert!(close(a.busy_cores, b.busy_cores));
    }

    #[test]
    fn hotplugged_cores_are_skipped() {
        let before = parse_proc_stat(BEFORE).unwrap();
        let mut after = parse_proc_stat(AFTER).unwrap();
        // core 1 went offline, core 2 came online during the interval.
        let core1 = after.cores.remove(&1).unwrap();
        after.cores.insert(2, core1);
        let r = report(&before, &after);
        assert_eq!(r.cores.len(), 1);
        assert_eq!(r.cores[0].core, Some(0));
        assert!(close(r.busy_cores, 0.85));
    }

    #[test]
    fn zero_delta_is_all_idle() {
        let s = parse_proc_stat(BEFORE).unwrap();
        let r = report(&s, &s);
        for c in r.cores.iter().chain(std::iter::once(&r.total)) {
            assert_shares(c, [0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 0.0, 0.0]);
        }
        assert_eq!(r.busy_cores, 0.0);
    }

    #[test]
    fn counters_going_backwards_do_not_underflow() {
        let before = parse_proc_stat(AFTER).unwrap();
        let after = parse_proc_stat(BEFORE).unwrap();
        let r = report(&before, &after);
        assert_eq!(r.busy_cores, 0.0);
        assert_eq!(r.cores[0].idle, Percent(100.0));
    }

    #[test]
    fn process_usage_is_after_minus_before_saturating() {
        let s = StatSnapshot::default();
        let before = RusageSnapshot {
            user: Nanos::from_millis(10),
            sys: Nanos::from_millis(5),
            voluntary_ctxsw: 100,
            involuntary_ctxsw: 7,
        };
        let after = RusageSnapshot {
            user: Nanos::from_millis(35),
            sys: Nanos::from_millis(25),
            voluntary_ctxsw: 140,
            involuntary_ctxsw: 3, // impossible, but must not wrap
        };
        let r = cpu_delta(&s, &s, &before, &after, Nanos::from_millis(100));
        assert_eq!(
            r.process,
            ProcessUsage {
                user: Nanos::from_millis(25),
                sys: Nanos::from_millis(20),
                voluntary_ctxsw: 40,
                involuntary_ctxsw: 0,
            }
        );
        assert!(close(r.process_percent().0, 45.0));
        assert_eq!(r.elapsed, Nanos::from_millis(100));
    }
}
