//! Latency under load: a load-latency test's probes and its flows' `TCP_INFO`
//! become latency per phase, the latency the load added, one-way delays,
//! responsiveness (draft-ietf-ippm-responsiveness-08) and fairness.
//!
//! Responsiveness follows the draft's TCP-only formula (§5.3.1.2):
//! `Foreign = 60000 / ((TM(tcp_f) + TM(http_f)) / 2)`, `Loaded = 60000 / TM(http_l)`,
//! `RPM = (Foreign + Loaded) / 2`, each TM a 95% trimmed mean (the top 5% cut).
//! netsonde has no HTTP: `tcp_f` is the new connection's handshake, `http_f` one
//! byte each way on it, and `http_l` the loaded connections' own smoothed RTT
//! (`TCP_INFO`), the stand-in the draft allows when requests cannot be multiplexed
//! onto the load (§5.3). Stability (§5.4): the figure of each 1 s interval (ID)
//! over the last 4 (MAD); stable when the standard deviation of the last MAD
//! figures is within 5% (SDT) of the last. Confidence (§5.4.1): Low with fewer than
//! MAD intervals, Medium when not stable, High when stable.

use netsonde_model::load::{
    Added, Confidence, Fairness, FlowSeries, LoadLatency, LoadSummary, OneWay, Phase, PhaseLatency,
    ProbeKind, ProbeSample, Responsiveness, TcpSample,
};
use netsonde_model::result::{Role, TestReport};
use netsonde_model::spec::FlowDir;
use netsonde_model::units::{BitRate, Bytes, Nanos};

/// The draft's moving average distance: intervals a figure is averaged over.
pub const MAD: usize = 4;
/// The draft's interval duration.
pub const ID: Nanos = Nanos::from_secs(1);
/// The draft's standard deviation tolerance.
pub const SDT: f64 = 0.05;
/// The draft's trimmed mean: the share kept.
pub const TMP: f64 = 0.95;
/// Fewer answered probes than this in a phase make its figures a caveat.
const FEW: usize = 10;

/// The mean of the lowest [`TMP`] of `v` (the top 5% cut, at least one kept);
/// `None` when empty.
pub fn trimmed_mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let keep = ((s.len() as f64 * TMP).ceil() as usize).clamp(1, s.len());
    Some(s[..keep].iter().sum::<f64>() / keep as f64)
}

/// Round trips per minute of a latency in ms.
pub fn rpm(ms: f64) -> f64 {
    60_000.0 / ms
}

/// The draft's responsiveness from handshake, request and self latencies (ms):
/// `None` when any is missing or not positive.
pub fn responsiveness(connect: &[f64], request: &[f64], selfs: &[f64]) -> Option<(f64, f64, f64)> {
    let (c, r, s) = (
        trimmed_mean(connect)?,
        trimmed_mean(request)?,
        trimmed_mean(selfs)?,
    );
    if c + r <= 0.0 || s <= 0.0 {
        return None;
    }
    let foreign = rpm((c + r) / 2.0);
    let loaded = rpm(s);
    Some(((foreign + loaded) / 2.0, foreign, loaded))
}

/// The draft's rating of an RPM figure (§1.2).
pub fn rating(rpm: f64) -> &'static str {
    if rpm < 300.0 {
        "Poor"
    } else if rpm < 1000.0 {
        "Fair"
    } else if rpm < 6000.0 {
        "Good"
    } else {
        "Excellent"
    }
}

/// Whether the last [`MAD`] figures are within [`SDT`] of the last (their
/// population standard deviation), and the confidence that gives.
pub fn stability(figures: &[f64]) -> (bool, Confidence) {
    if figures.len() < MAD {
        return (false, Confidence::Low);
    }
    let last = &figures[figures.len() - MAD..];
    let mean = last.iter().sum::<f64>() / MAD as f64;
    let sd = (last.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / MAD as f64).sqrt();
    let current = figures[figures.len() - 1];
    let stable = sd <= SDT * current.abs();
    (
        stable,
        if stable {
            Confidence::High
        } else {
            Confidence::Medium
        },
    )
}

/// Jain's fairness index: `(Σx)² / (n Σx²)`; 1 when all are equal, `1/n` when one
/// has everything. `None` when empty or all zero.
pub fn jain(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    (!x.is_empty() && sq > 0.0).then(|| sum * sum / (x.len() as f64 * sq))
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
fn percentile(sorted: &[Nanos], p: f64) -> Option<Nanos> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn ms(n: Nanos) -> f64 {
    n.0 as f64 / 1e6
}

/// The latency a probe kind is tabled by: the round trip, or for a new
/// connection its handshake.
fn value(s: &ProbeSample) -> Option<Nanos> {
    match s.kind {
        ProbeKind::Connect => s.connect,
        _ => s.rtt,
    }
}

/// A sending flow's readings with their times moved to the client's timeline.
struct Sent<'a> {
    flow: u32,
    dir: FlowDir,
    samples: &'a [TcpSample],
}

fn sent_flows(r: &TestReport) -> Vec<Sent<'_>> {
    let flows = r.spec.flows();
    r.client
        .tcp_samples
        .iter()
        .chain(&r.server.tcp_samples)
        .filter_map(|f| {
            let dir = flows.iter().find(|(id, _)| *id == f.flow)?.1;
            Some(Sent {
                flow: f.flow,
                dir,
                samples: &f.samples,
            })
        })
        .collect()
}

/// Analyses a load-latency test; `None` for a test without probes.
pub fn summarize(r: &TestReport) -> Option<LoadSummary> {
    let load = r.load.as_ref()?;
    let mut caveats = Vec::new();
    let phases = phase_table(load, &mut caveats);
    let added = ProbeKind::ALL
        .into_iter()
        .filter_map(|kind| {
            let get = |ph| phases.iter().find(|p| p.kind == kind && p.phase == ph);
            let (i, l) = (get(Phase::Idle)?, get(Phase::Loaded)?);
            Some(Added {
                kind,
                p50_ms: ms(l.p50?) - ms(i.p50?),
                p90_ms: ms(l.p90?) - ms(i.p90?),
            })
        })
        .collect();
    let sent = sent_flows(r);
    let flows = series(&sent);
    let fairness = fairness(r, &flows);
    if sent.is_empty() && r.spec.test.is_tcp() {
        caveats.push(
            "no TCP_INFO readings of the loaded flows: no self probe, no flows over time".into(),
        );
    }
    let responsiveness = respond(load, &sent, &mut caveats);
    Some(LoadSummary {
        phases,
        added,
        one_way: one_way(load, &mut caveats),
        responsiveness,
        fairness,
        flows,
        caveats,
    })
}

fn phase_table(load: &LoadLatency, caveats: &mut Vec<String>) -> Vec<PhaseLatency> {
    let mut out = Vec::new();
    for phase in [Phase::Idle, Phase::Ramp, Phase::Loaded, Phase::After] {
        for kind in ProbeKind::ALL {
            let of: Vec<&ProbeSample> = load
                .probes
                .iter()
                .filter(|s| s.kind == kind && load.phases.at(s.t) == phase)
                .collect();
            if of.is_empty() {
                continue;
            }
            let mut v: Vec<Nanos> = of.iter().filter_map(|s| value(s)).collect();
            v.sort_unstable();
            if v.len() < FEW && matches!(phase, Phase::Idle | Phase::Loaded) {
                caveats.push(format!(
                    "{} {} probes: only {} answered; their percentiles are rough",
                    phase.name(),
                    kind.name(),
                    v.len()
                ));
            }
            out.push(PhaseLatency {
                phase,
                kind,
                answered: v.len() as u64,
                lost: (of.len() - v.len()) as u64,
                min: v.first().copied(),
                p50: percentile(&v, 50.0),
                p90: percentile(&v, 90.0),
                p99: (v.len() >= 100).then(|| percentile(&v, 99.0)).flatten(),
            });
        }
    }
    out
}

fn one_way(load: &LoadLatency, caveats: &mut Vec<String>) -> Option<OneWay> {
    let udp: Vec<&ProbeSample> = load
        .probes
        .iter()
        .filter(|s| {
            s.kind == ProbeKind::Udp && s.up.is_some() && s.down.is_some() && s.rtt.is_some()
        })
        .collect();
    if udp.is_empty() {
        return None;
    }
    // The server's clock is the client's plus `offset`. With one clock it is 0;
    // otherwise the idle probe with the least round trip bounds it best: with
    // equal one-way delays, offset = (up - down) / 2, off by at most half its
    // round trip.
    let (clock, offset, uncertainty) = if load.same_clock {
        ("exact", 0i64, 0i64)
    } else {
        let best = udp
            .iter()
            .filter(|s| load.phases.at(s.t) == Phase::Idle)
            .min_by_key(|s| s.rtt)?;
        let (up, down) = (best.up?, best.down?);
        caveats.push(
            "one-way delays across hosts rest on a clock offset estimated from the idle UDP probes, assuming equal delays each way"
                .into(),
        );
        ("estimated", (up - down) / 2, best.rtt?.0 as i64 / 2)
    };
    let median = |phase: Phase, up: bool| -> Option<f64> {
        let mut v: Vec<i64> = udp
            .iter()
            .filter(|s| load.phases.at(s.t) == phase)
            .filter_map(|s| {
                if up {
                    s.up.map(|u| u - offset)
                } else {
                    s.down.map(|d| d + offset)
                }
            })
            .collect();
        v.sort_unstable();
        (!v.is_empty()).then(|| v[(v.len() - 1) / 2] as f64 / 1e6)
    };
    Some(OneWay {
        clock: clock.into(),
        offset_ns: offset,
        uncertainty_ns: uncertainty,
        up_idle_ms: median(Phase::Idle, true),
        up_loaded_ms: median(Phase::Loaded, true),
        down_idle_ms: median(Phase::Idle, false),
        down_loaded_ms: median(Phase::Loaded, false),
    })
}

/// Handshake, request and self latencies (ms) within `[from, to)` of the
/// client's timeline.
fn inputs(
    load: &LoadLatency,
    sent: &[Sent<'_>],
    from: Nanos,
    to: Nanos,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let inside = |t: Nanos| t >= from && t < to;
    let conn: Vec<&ProbeSample> = load
        .probes
        .iter()
        .filter(|s| s.kind == ProbeKind::Connect && inside(s.t))
        .collect();
    let connect = conn.iter().filter_map(|s| s.connect.map(ms)).collect();
    let request = conn.iter().filter_map(|s| s.rtt.map(ms)).collect();
    let selfs = sent
        .iter()
        .flat_map(|f| f.samples.iter())
        .filter(|s| inside(load.phases.load_start.saturating_add(s.t)) && s.srtt.0 > 0)
        .map(|s| ms(s.srtt))
        .collect();
    (connect, request, selfs)
}

fn respond(
    load: &LoadLatency,
    sent: &[Sent<'_>],
    caveats: &mut Vec<String>,
) -> Option<Responsiveness> {
    if sent.is_empty() {
        return None;
    }
    let ph = load.phases;
    let (connect, request, selfs) = inputs(load, sent, ph.measured_start, ph.measured_end);
    let Some((rpm_all, foreign, loaded)) = responsiveness(&connect, &request, &selfs) else {
        caveats.push("no responsiveness: the loaded phase had no answered new-connection probe or no self reading".into());
        return None;
    };
    // The figure of each interval over the last MAD intervals, in the loaded phase.
    let n = ((ph.measured_end.0.saturating_sub(ph.measured_start.0)) / ID.0) as usize;
    let mut figures = Vec::new();
    for last in MAD..=n {
        let from = Nanos(ph.measured_start.0 + (last - MAD) as u64 * ID.0);
        let to = Nanos(ph.measured_start.0 + last as u64 * ID.0);
        let (c, r, s) = inputs(load, sent, from, to);
        if let Some((f, _, _)) = responsiveness(&c, &r, &s) {
            figures.push(f);
        }
    }
    let (stable, confidence) = if n < MAD {
        (false, Confidence::Low)
    } else {
        stability(&figures)
    };
    // Idle: the kept TCP probe stands in for the self probe.
    let idle_rpm = {
        let (c, r, _) = inputs(load, sent, Nanos::ZERO, ph.load_start);
        let tcp: Vec<f64> = load
            .probes
            .iter()
            .filter(|s| s.kind == ProbeKind::Tcp && s.t < ph.load_start)
            .filter_map(|s| s.rtt.map(ms))
            .collect();
        responsiveness(&c, &r, &tcp).map(|(f, _, _)| f)
    };
    Some(Responsiveness {
        rpm: rpm_all,
        foreign_rpm: foreign,
        loaded_rpm: loaded,
        idle_rpm,
        tm_connect_ms: trimmed_mean(&connect)?,
        tm_request_ms: trimmed_mean(&request)?,
        tm_self_ms: trimmed_mean(&selfs)?,
        rating: rating(rpm_all).into(),
        stable,
        confidence,
        intervals: n as u32,
        probes:
            "foreign: TCP handshake (tcp_f) and one byte each way on the new connection (http_f); \
                 self: the loaded connections' smoothed RTT from TCP_INFO (http_l); no TLS, no HTTP"
                .into(),
    })
}

/// Each sending flow's goodput, RTT, window and retransmissions between readings.
fn series(sent: &[Sent<'_>]) -> Vec<FlowSeries> {
    let mut out: Vec<FlowSeries> = sent
        .iter()
        .map(|f| {
            let mut s = FlowSeries {
                flow: f.flow,
                dir: f.dir,
                t: Vec::new(),
                goodput: Vec::new(),
                srtt: Vec::new(),
                cwnd: Vec::new(),
                retransmits: Vec::new(),
            };
            for w in f.samples.windows(2) {
                let dt = w[1].t.saturating_sub(w[0].t);
                if dt.0 == 0 {
                    continue;
                }
                s.t.push(w[1].t);
                s.goodput.push(BitRate::from_bytes(
                    Bytes(w[1].bytes_acked.saturating_sub(w[0].bytes_acked)),
                    dt.as_duration(),
                ));
                s.srtt.push(w[1].srtt);
                s.cwnd.push(w[1].cwnd);
                s.retransmits
                    .push(w[1].retransmits.saturating_sub(w[0].retransmits));
            }
            s
        })
        .collect();
    out.sort_by_key(|s| s.flow);
    out
}

/// Jain's index per direction: over the flows' measured goodputs (the receiving
/// end's count), and per interval of the over-time series within the measured
/// interval.
fn fairness(r: &TestReport, series: &[FlowSeries]) -> Vec<Fairness> {
    let (warm, end) = (r.spec.warmup, r.spec.warmup.saturating_add(r.spec.duration));
    let mut out = Vec::new();
    for dir in [FlowDir::Up, FlowDir::Down] {
        let rates: Vec<f64> = r
            .client
            .flows
            .iter()
            .chain(&r.server.flows)
            .filter(|f| f.dir == dir && f.role == Role::Receiver && f.elapsed.0 > 0)
            .map(|f| BitRate::from_bytes(f.bytes, f.elapsed.as_duration()).0)
            .collect();
        if rates.len() < 2 {
            continue;
        }
        let Some(j) = jain(&rates) else { continue };
        let of_dir: Vec<&FlowSeries> = series.iter().filter(|s| s.dir == dir).collect();
        let steps = of_dir.iter().map(|s| s.t.len()).min().unwrap_or(0);
        let jain_intervals = (0..steps)
            .filter(|&i| of_dir[0].t[i] > warm && of_dir[0].t[i] <= end)
            .filter_map(|i| jain(&of_dir.iter().map(|s| s.goodput[i].0).collect::<Vec<_>>()))
            .collect();
        let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let max = rates.iter().copied().fold(0.0, f64::max);
        out.push(Fairness {
            dir,
            flows: rates.len() as u32,
            jain: j,
            jain_intervals,
            slowest: BitRate(min),
            fastest: BitRate(max),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_mean_cuts_the_top_five_percent() {
        // 20 values: 95% keeps 19, the one outlier goes.
        let mut v = vec![10.0; 19];
        v.push(1000.0);
        assert_eq!(trimmed_mean(&v), Some(10.0));
        // 10 values: ceil(9.5) = 10 kept, nothing cut.
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(trimmed_mean(&v), Some(5.5));
        assert_eq!(trimmed_mean(&[]), None);
    }

    #[test]
    fn responsiveness_follows_the_drafts_tcp_only_formula() {
        // Handshakes 10 ms, requests 20 ms (one 500 ms outlier in 20, trimmed),
        // self 40 ms: Foreign = 60000 / 15 = 4000, Loaded = 60000 / 40 = 1500,
        // RPM = (4000 + 1500) / 2 = 2750.
        let mut req = vec![20.0; 19];
        req.push(500.0);
        let (all, foreign, loaded) = responsiveness(&[10.0; 20], &req, &[40.0; 8]).unwrap();
        assert!((foreign - 4000.0).abs() < 1e-9, "{foreign}");
        assert!((loaded - 1500.0).abs() < 1e-9, "{loaded}");
        assert!((all - 2750.0).abs() < 1e-9, "{all}");
        assert_eq!(rating(all), "Good");
        // A bloated path: 600 ms self, 300 ms handshakes and requests.
        let (all, _, _) = responsiveness(&[300.0], &[300.0], &[600.0]).unwrap();
        assert!((all - 150.0).abs() < 1e-9, "{all}");
        assert_eq!(rating(all), "Poor");
        assert!(responsiveness(&[], &[1.0], &[1.0]).is_none());
    }

    #[test]
    fn stability_needs_mad_intervals_within_sdt() {
        assert_eq!(
            stability(&[1000.0, 1000.0, 1000.0]),
            (false, Confidence::Low)
        );
        // Population sd of 1000, 1010, 990, 1000 is 7.07: under 5% of 1000.
        assert_eq!(
            stability(&[5000.0, 1000.0, 1010.0, 990.0, 1000.0]),
            (true, Confidence::High)
        );
        // 800, 1200, 800, 1200: sd 200, over 5% of 1200.
        assert_eq!(
            stability(&[800.0, 1200.0, 800.0, 1200.0]),
            (false, Confidence::Medium)
        );
    }

    #[test]
    fn jains_index_by_hand() {
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        assert_eq!(jain(&[4.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1 + 3)^2 / (2 * (1 + 9)) = 0.8
        assert_eq!(jain(&[1.0, 3.0]), Some(0.8));
        assert_eq!(jain(&[]), None);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<Nanos> = (1..=10).map(|i| Nanos(i * 100)).collect();
        assert_eq!(percentile(&v, 50.0), Some(Nanos(500)));
        assert_eq!(percentile(&v, 90.0), Some(Nanos(900)));
        assert_eq!(percentile(&v, 99.0), Some(Nanos(1000)));
    }

    #[test]
    fn one_way_offset_is_estimated_from_the_fastest_idle_probe() {
        use netsonde_model::load::Phases;
        // The server's clock runs 5 ms ahead; delays 1 ms up, 3 ms down idle.
        let probe = |t: u64, up: i64, down: i64| ProbeSample {
            kind: ProbeKind::Udp,
            t: Nanos::from_millis(t),
            rtt: Some(Nanos((up + down) as u64 * 1_000_000)),
            connect: None,
            up: Some((up + 5) * 1_000_000),
            down: Some((down - 5) * 1_000_000),
        };
        let load = LoadLatency {
            phases: Phases {
                load_start: Nanos::from_secs(1),
                measured_start: Nanos::from_secs(2),
                measured_end: Nanos::from_secs(3),
                load_end: Nanos::from_secs(3),
                end: Nanos::from_secs(4),
            },
            probes: vec![probe(0, 2, 2), probe(100, 4, 4), probe(2500, 40, 3)],
            same_clock: false,
            summary: None,
        };
        let mut caveats = Vec::new();
        let o = one_way(&load, &mut caveats).unwrap();
        // Fastest idle probe: 2 + 2 ms, so the offset is 5 ms, give or take 2 ms.
        assert_eq!(o.offset_ns, 5_000_000);
        assert_eq!(o.uncertainty_ns, 2_000_000);
        assert_eq!(o.up_loaded_ms, Some(40.0));
        assert_eq!(o.down_loaded_ms, Some(3.0));
        assert_eq!(caveats.len(), 1);
    }
}
