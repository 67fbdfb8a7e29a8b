//! Whether a controller can believe a job's report: the test it asked for, and
//! figures a link and a clock can produce. An agent whose report fails is
//! buggy, lying or not netsonde; its pair fails with why, and nothing it said
//! is stored.

use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;

/// The most goodput a report may claim: twice the fastest Ethernet standardised
/// (1.6 Tbit/s), so only a report no link could produce is refused.
pub const MAX_GOODPUT_BPS: f64 = 3.2e12;

/// Why `report` is not a believable answer to a job for `spec`, if it is not.
pub fn vet(spec: &TestSpec, report: &TestReport) -> Result<(), String> {
    if report.spec != *spec {
        return Err(format!(
            "it reports another test than the job's ({} instead of {})",
            summary(&report.spec),
            summary(spec)
        ));
    }
    for d in &report.directions {
        let dir = match d.dir {
            netsonde_model::spec::FlowDir::Up => "upward",
            netsonde_model::spec::FlowDir::Down => "downward",
        };
        let g = d.goodput.bps();
        if !g.is_finite() || g < 0.0 {
            return Err(format!("{dir} goodput {g} bit/s is not a rate"));
        }
        if g > MAX_GOODPUT_BPS {
            return Err(format!(
                "{dir} goodput {} is more than any link carries",
                d.goodput
            ));
        }
        if let Some(loss) = d.loss.filter(|l| !(0.0..=100.0).contains(&l.0)) {
            return Err(format!("{dir} loss {}% is not a share", loss.0));
        }
    }
    if let Some(rr) = &report.rr {
        let t = rr.transactions_per_sec;
        if !t.is_finite() || t < 0.0 {
            return Err(format!("{t} transactions/s is not a rate"));
        }
        let l = &rr.latency;
        let ordered = [l.min, l.p50, l.p90, l.p99, l.p999, l.max]
            .windows(2)
            .all(|w| w[0] <= w[1]);
        if !ordered {
            return Err("its latency percentiles are out of order".into());
        }
    }
    Ok(())
}

fn summary(s: &TestSpec) -> String {
    format!("{} {} size {}", s.test, s.direction, s.size)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::result::{DirectionSummary, SideResult};
    use netsonde_model::spec::{FlowDir, TestKind};
    use netsonde_model::units::{BitRate, Bytes, Nanos, Percent};

    fn report() -> TestReport {
        let side = || SideResult {
            tcp_samples: Vec::new(),
            host: Default::default(),
            flows: vec![],
            cpu: None,
            socket: None,
        };
        let spec = TestSpec::new(TestKind::UdpStream);
        let mut r =
            TestReport::assemble(spec, "192.0.2.7:5300".into(), side(), side(), vec![], None);
        r.directions = vec![DirectionSummary {
            dir: FlowDir::Up,
            sender_bytes_total: Bytes(1_175_000_000),
            receiver_bytes_total: Bytes(1_175_000_000),
            bytes: Bytes(1_175_000_000),
            elapsed: Nanos::from_secs(1),
            goodput: BitRate(9.4e9),
            messages_per_sec: 1e6,
            packets_per_sec: None,
            datagrams_sent: None,
            datagrams_sent_measured: None,
            loss: Some(Percent(0.1)),
            udp: None,
            retransmits: None,
        }];
        r
    }

    #[test]
    fn only_a_believable_report_for_the_job_passes() {
        let r = report();
        assert_eq!(vet(&r.spec, &r), Ok(()));
        let mut other = r.spec.clone();
        other.size = Bytes(other.size.0 + 1);
        assert!(vet(&other, &r).unwrap_err().contains("another test"));
        let mut fast = r.clone();
        fast.directions[0].goodput = BitRate(4e12);
        assert!(vet(&r.spec, &fast)
            .unwrap_err()
            .contains("more than any link carries"));
        let mut nan = r.clone();
        nan.directions[0].goodput = BitRate(f64::NAN);
        assert!(vet(&r.spec, &nan).is_err());
        let mut lossy = r.clone();
        lossy.directions[0].loss = Some(Percent(140.0));
        assert!(vet(&r.spec, &lossy).unwrap_err().contains("not a share"));
    }
}
