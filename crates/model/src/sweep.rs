//! Vocabulary of characterization runs: the figures of one repetition
//! ([`Metrics`]), an estimate over repetitions ([`Estimate`]), and the closed set of
//! quality warnings ([`Quality`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::result::TestReport;
use crate::spec::FlowDir;

/// The figures of one repetition of one point, by metric name. Names and units:
///
/// | name | unit | from |
/// |---|---|---|
/// | `goodput` | bit/s | sum of directions' goodput |
/// | `goodput_out`, `goodput_in` | bit/s | client→server, server→client |
/// | `messages_per_sec` | 1/s | senders, summed |
/// | `transactions_per_sec` | 1/s | RR/CRR |
/// | `transactions` | count | RR/CRR: transactions measured, the samples the latency percentiles rest on |
/// | `latency_min`, `latency_mean`, `latency_p50`, `latency_p90`, `latency_p99`, `latency_p999` | ns | RR/CRR |
/// | `client_busy_cores`, `server_busy_cores` | cores | system-wide CPU |
/// | `client_us_per_kib`, `server_us_per_kib` | µs/KiB | service demand |
/// | `client_us_per_trans`, `server_us_per_trans` | µs | service demand |
/// | `client_cpu_max_core`, `server_cpu_max_core` | % | busiest core |
/// | `retransmits` | segments | TCP senders |
/// | `loss` | % | UDP |
/// | `srtt` | ns | TCP senders, mean |
/// | `base_rtt` | ns | TCP senders' least RTT (`min_rtt`), the path's round trip before a queue |
/// | `interval_cv` | ratio | coefficient of variation of interval rates (steadiness) |
/// | `window_granted` | bytes | smallest granted socket buffer on either end |
/// | `tcp_efficiency`, `buffer_delay` | % | RFC 6349, TCP stream tests |
/// | `transfer_time_ratio` | ratio | RFC 6349, with a line rate |
///
/// Keyed by [`Metric`], written and read through it; stored as an object of the
/// metrics' names (a name this version does not know, from another version's
/// store, is left out when read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Metrics(BTreeMap<Metric, f64>);

impl Serialize for Metrics {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // By name, as they have always been stored.
        let by_name: BTreeMap<&str, f64> = self.0.iter().map(|(m, v)| (m.name(), *v)).collect();
        by_name.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metrics {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        let by_name = BTreeMap::<String, f64>::deserialize(d)?;
        Ok(by_name
            .into_iter()
            .filter_map(|(k, v)| Some((Metric::from_name(&k)?, v)))
            .collect())
    }
}

impl FromIterator<(Metric, f64)> for Metrics {
    /// The finite values of `pairs`.
    fn from_iter<I: IntoIterator<Item = (Metric, f64)>>(pairs: I) -> Metrics {
        let mut m = Metrics::default();
        for (k, v) in pairs {
            m.set(k, v);
        }
        m
    }
}

impl Metrics {
    /// A metric, if present, by its stored name (an experiment file's, a
    /// command line's).
    pub fn get(&self, name: &str) -> Option<f64> {
        self.value(Metric::from_name(name)?)
    }

    /// A metric, if present.
    pub fn value(&self, metric: Metric) -> Option<f64> {
        self.0.get(&metric).copied()
    }

    /// Sets `metric` to `v`; a value that is not finite is not a figure and is
    /// left out.
    pub fn set(&mut self, metric: Metric, v: f64) {
        if v.is_finite() {
            self.0.insert(metric, v);
        }
    }

    /// Every metric present, with its value.
    pub fn iter(&self) -> impl Iterator<Item = (Metric, f64)> + '_ {
        self.0.iter().map(|(m, v)| (*m, *v))
    }

    /// How many metrics are present.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn put(&mut self, metric: Metric, v: Option<f64>) {
        if let Some(v) = v {
            self.set(metric, v);
        }
    }

    /// Flattens a report.
    pub fn from_report(r: &TestReport) -> Metrics {
        let mut m = Metrics::default();
        if !r.directions.is_empty() {
            m.put(
                Metric::Goodput,
                Some(r.directions.iter().map(|d| d.goodput.bps()).sum()),
            );
            m.put(
                Metric::MessagesPerSec,
                Some(r.directions.iter().map(|d| d.messages_per_sec).sum()),
            );
            for d in &r.directions {
                let name = match d.dir {
                    FlowDir::Up => Metric::GoodputOut,
                    FlowDir::Down => Metric::GoodputIn,
                };
                m.put(name, Some(d.goodput.bps()));
            }
            let retrans: Option<u64> = r.directions.iter().map(|d| d.retransmits).sum();
            m.put(Metric::Retransmits, retrans.map(|x| x as f64));
            let losses: Vec<f64> = r
                .directions
                .iter()
                .filter_map(|d| d.loss.map(|l| l.0))
                .collect();
            if !losses.is_empty() {
                m.put(
                    Metric::Loss,
                    Some(losses.iter().sum::<f64>() / losses.len() as f64),
                );
            }
        }
        if let Some(rr) = &r.rr {
            m.put(Metric::TransactionsPerSec, Some(rr.transactions_per_sec));
            let l = &rr.latency;
            if l.count > 0 {
                m.put(Metric::Transactions, Some(l.count as f64));
            }
            for (k, v) in [
                (Metric::LatencyMin, l.min),
                (Metric::LatencyMean, l.mean),
                (Metric::LatencyP50, l.p50),
                (Metric::LatencyP90, l.p90),
                (Metric::LatencyP99, l.p99),
                (Metric::LatencyP999, l.p999),
            ] {
                if l.count > 0 {
                    m.put(k, Some(v.0 as f64));
                }
            }
        }
        // Each end's: busy cores, us/KiB, us/transaction, busiest core.
        for (res, cost, [busy, per_kib, per_trans, max_core]) in [
            (
                &r.client,
                &r.client_cost,
                [
                    Metric::ClientBusyCores,
                    Metric::ClientUsPerKib,
                    Metric::ClientUsPerTrans,
                    Metric::ClientCpuMaxCore,
                ],
            ),
            (
                &r.server,
                &r.server_cost,
                [
                    Metric::ServerBusyCores,
                    Metric::ServerUsPerKib,
                    Metric::ServerUsPerTrans,
                    Metric::ServerCpuMaxCore,
                ],
            ),
        ] {
            if let Some(c) = cost {
                m.put(busy, Some(c.busy_cores));
                m.put(per_kib, c.us_per_kib);
                m.put(per_trans, c.us_per_transaction);
            }
            if let Some(cpu) = &res.cpu {
                let max = cpu
                    .cores
                    .iter()
                    .map(|c| c.busy().0)
                    .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
                m.put(max_core, max);
            }
        }
        let foreign = [&r.client_cost, &r.server_cost]
            .into_iter()
            .filter_map(|c| c.as_ref()?.foreign_cores)
            .reduce(f64::max);
        m.put(Metric::ForeignCores, foreign);
        let throttled = [&r.client, &r.server]
            .into_iter()
            .filter_map(|s| s.cpu.as_ref()?.cgroup.as_ref())
            .filter(|g| g.quota_cores.is_some())
            .filter_map(|g| g.throttled_pct())
            .reduce(f64::max);
        m.put(Metric::Throttled, throttled);
        m.put(
            Metric::LinkBound,
            r.diagnosis.as_ref().map(|d| {
                if matches!(d.bottleneck, crate::diagnosis::Bottleneck::Link) {
                    1.0
                } else {
                    0.0
                }
            }),
        );
        let srtts: Vec<f64> = r
            .client
            .flows
            .iter()
            .chain(&r.server.flows)
            .filter(|f| {
                matches!(
                    f.role,
                    crate::result::Role::Sender | crate::result::Role::Requester
                )
            })
            .filter_map(|f| f.tcp_info.as_ref().map(|t| t.srtt.0 as f64))
            .collect();
        if !srtts.is_empty() {
            m.put(
                Metric::Srtt,
                Some(srtts.iter().sum::<f64>() / srtts.len() as f64),
            );
        }
        let rates: Vec<f64> = r.intervals.iter().map(|i| i.rate.bps()).collect();
        if rates.len() >= 3 {
            let mean = rates.iter().sum::<f64>() / rates.len() as f64;
            if mean > 0.0 {
                let var = rates.iter().map(|x| (x - mean).powi(2)).sum::<f64>()
                    / (rates.len() - 1) as f64;
                m.put(Metric::IntervalCv, Some(var.sqrt() / mean));
            }
        }
        let granted = [&r.client.socket, &r.server.socket]
            .into_iter()
            .flatten()
            .map(|s| s.sndbuf.min(s.rcvbuf) as f64)
            .fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.min(b))));
        m.put(Metric::WindowGranted, granted);
        if let Some(x) = &r.rfc6349 {
            m.put(Metric::TcpEfficiency, x.tcp_efficiency_pct);
            m.put(Metric::BufferDelay, Some(x.buffer_delay_pct));
            m.put(Metric::TransferTimeRatio, x.transfer_time_ratio);
            m.put(Metric::BaseRtt, Some(x.baseline_rtt.0 as f64));
        }
        m
    }
}

/// Whether more of a metric is better (throughput) or worse (latency, CPU). Names
/// that are not a [`Metric`] count as worse-when-higher.
pub fn higher_is_better(metric: &str) -> bool {
    Metric::from_name(metric).is_some_and(Metric::higher_is_better)
}

/// The unit a metric is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// Bits per second.
    BitRate,
    /// Events per second.
    PerSecond,
    /// Nanoseconds.
    Nanos,
    /// Busy cores (1.0 is one core fully busy).
    Cores,
    /// Microseconds of CPU per KiB moved.
    UsPerKib,
    /// Microseconds.
    Micros,
    /// Percent.
    Percent,
    /// A count.
    Count,
    /// A dimensionless ratio.
    Ratio,
    /// Bytes.
    Bytes,
}

impl Unit {
    /// The unit's symbol, as a CSV column gives it (empty for a count or ratio).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::BitRate => "bit/s",
            Unit::PerSecond => "1/s",
            Unit::Nanos => "ns",
            Unit::Cores => "cores",
            Unit::UsPerKib => "us/KiB",
            Unit::Micros => "us",
            Unit::Percent => "%",
            Unit::Count | Unit::Ratio => "",
            Unit::Bytes => "B",
        }
    }

    /// `v` in this unit, with an SI prefix where it helps and the unit's name.
    pub fn format(self, v: f64) -> String {
        use crate::units::{BitRate, Bytes, Nanos};
        if !v.is_finite() {
            return format!("{v}");
        }
        match self {
            Unit::BitRate => BitRate(v).to_string(),
            Unit::Nanos => Nanos(v.max(0.0).round() as u64).to_string(),
            Unit::Bytes => Bytes(v.max(0.0).round() as u64).to_string(),
            Unit::PerSecond => {
                let (d, p) = if v.abs() >= 1e6 {
                    (1e6, "M")
                } else if v.abs() >= 1e3 {
                    (1e3, "k")
                } else {
                    (1.0, "")
                };
                format!("{:.2} {p}/s", v / d)
            }
            Unit::Cores => format!("{v:.2} cores"),
            Unit::UsPerKib => format!("{v:.3} us/KiB"),
            Unit::Micros => format!("{v:.2} us"),
            Unit::Percent => format!("{v:.3}%"),
            Unit::Count => format!("{v:.0}"),
            Unit::Ratio => format!("{v:.3}"),
        }
    }
}

/// Every figure a repetition can have: the names of [`Metrics`], as a type with
/// its unit and its good direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// Goodput, both directions summed.
    Goodput,
    /// Goodput client to server.
    GoodputOut,
    /// Goodput server to client.
    GoodputIn,
    /// Messages per second, senders summed.
    MessagesPerSec,
    /// Transactions per second.
    TransactionsPerSec,
    /// Transactions measured: the samples the latency percentiles rest on.
    Transactions,
    /// Fastest transaction.
    LatencyMin,
    /// Mean transaction.
    LatencyMean,
    /// Median transaction.
    LatencyP50,
    /// 90th percentile.
    LatencyP90,
    /// 99th percentile.
    LatencyP99,
    /// 99.9th percentile.
    LatencyP999,
    /// Client busy cores, system-wide.
    ClientBusyCores,
    /// Server busy cores, system-wide.
    ServerBusyCores,
    /// Client service demand per KiB.
    ClientUsPerKib,
    /// Server service demand per KiB.
    ServerUsPerKib,
    /// Client service demand per transaction.
    ClientUsPerTrans,
    /// Server service demand per transaction.
    ServerUsPerTrans,
    /// Client's busiest core.
    ClientCpuMaxCore,
    /// Server's busiest core.
    ServerCpuMaxCore,
    /// TCP retransmitted segments.
    Retransmits,
    /// UDP loss.
    Loss,
    /// Mean smoothed RTT of TCP senders.
    Srtt,
    /// The least RTT the TCP senders measured: the path's own, before a queue.
    BaseRtt,
    /// Coefficient of variation of interval rates.
    IntervalCv,
    /// Smallest granted socket buffer.
    WindowGranted,
    /// RFC 6349 TCP efficiency.
    TcpEfficiency,
    /// RFC 6349 buffer delay.
    BufferDelay,
    /// RFC 6349 transfer time ratio.
    TransferTimeRatio,
    /// Busy cores on the test's hosts that were neither end's (the larger of the
    /// two ends'): the foreign load. Context for the CPU metrics, which are not
    /// compared between runs whose foreign load differs; never compared itself.
    ForeignCores,
    /// The share of its cgroup's CPU quota periods in which either end was
    /// throttled (the larger), percent: context, as [`Metric::ForeignCores`];
    /// absent where neither end had a quota.
    Throttled,
    /// 1 when the test's verdict was the link (it ran at the link's ceiling),
    /// 0 for any other verdict: context, as [`Metric::ForeignCores`]. Other work
    /// on the hosts does not move a link-bound rate.
    LinkBound,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 32] = [
        Metric::Goodput,
        Metric::GoodputOut,
        Metric::GoodputIn,
        Metric::MessagesPerSec,
        Metric::TransactionsPerSec,
        Metric::Transactions,
        Metric::LatencyMin,
        Metric::LatencyMean,
        Metric::LatencyP50,
        Metric::LatencyP90,
        Metric::LatencyP99,
        Metric::LatencyP999,
        Metric::ClientBusyCores,
        Metric::ServerBusyCores,
        Metric::ClientUsPerKib,
        Metric::ServerUsPerKib,
        Metric::ClientUsPerTrans,
        Metric::ServerUsPerTrans,
        Metric::ClientCpuMaxCore,
        Metric::ServerCpuMaxCore,
        Metric::Retransmits,
        Metric::Loss,
        Metric::Srtt,
        Metric::BaseRtt,
        Metric::IntervalCv,
        Metric::WindowGranted,
        Metric::TcpEfficiency,
        Metric::BufferDelay,
        Metric::TransferTimeRatio,
        Metric::ForeignCores,
        Metric::Throttled,
        Metric::LinkBound,
    ];

    /// The name stored in [`Metrics`] and the store.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Goodput => "goodput",
            Metric::GoodputOut => "goodput_out",
            Metric::GoodputIn => "goodput_in",
            Metric::MessagesPerSec => "messages_per_sec",
            Metric::TransactionsPerSec => "transactions_per_sec",
            Metric::Transactions => "transactions",
            Metric::LatencyMin => "latency_min",
            Metric::LatencyMean => "latency_mean",
            Metric::LatencyP50 => "latency_p50",
            Metric::LatencyP90 => "latency_p90",
            Metric::LatencyP99 => "latency_p99",
            Metric::LatencyP999 => "latency_p999",
            Metric::ClientBusyCores => "client_busy_cores",
            Metric::ServerBusyCores => "server_busy_cores",
            Metric::ClientUsPerKib => "client_us_per_kib",
            Metric::ServerUsPerKib => "server_us_per_kib",
            Metric::ClientUsPerTrans => "client_us_per_trans",
            Metric::ServerUsPerTrans => "server_us_per_trans",
            Metric::ClientCpuMaxCore => "client_cpu_max_core",
            Metric::ServerCpuMaxCore => "server_cpu_max_core",
            Metric::Retransmits => "retransmits",
            Metric::Loss => "loss",
            Metric::Srtt => "srtt",
            Metric::BaseRtt => "base_rtt",
            Metric::IntervalCv => "interval_cv",
            Metric::WindowGranted => "window_granted",
            Metric::TcpEfficiency => "tcp_efficiency",
            Metric::BufferDelay => "buffer_delay",
            Metric::TransferTimeRatio => "transfer_time_ratio",
            Metric::ForeignCores => "foreign_cores",
            Metric::Throttled => "cpu_throttled",
            Metric::LinkBound => "link_bound",
        }
    }

    /// The metric a stored name stands for.
    pub fn from_name(name: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Its unit.
    pub fn unit(self) -> Unit {
        match self {
            Metric::Goodput | Metric::GoodputOut | Metric::GoodputIn => Unit::BitRate,
            Metric::MessagesPerSec | Metric::TransactionsPerSec => Unit::PerSecond,
            Metric::LatencyMin
            | Metric::LatencyMean
            | Metric::LatencyP50
            | Metric::LatencyP90
            | Metric::LatencyP99
            | Metric::LatencyP999
            | Metric::Srtt
            | Metric::BaseRtt => Unit::Nanos,
            Metric::ClientBusyCores | Metric::ServerBusyCores | Metric::ForeignCores => Unit::Cores,
            Metric::ClientUsPerKib | Metric::ServerUsPerKib => Unit::UsPerKib,
            Metric::ClientUsPerTrans | Metric::ServerUsPerTrans => Unit::Micros,
            Metric::ClientCpuMaxCore
            | Metric::ServerCpuMaxCore
            | Metric::Loss
            | Metric::TcpEfficiency
            | Metric::Throttled
            | Metric::BufferDelay => Unit::Percent,
            Metric::Retransmits | Metric::Transactions => Unit::Count,
            Metric::IntervalCv | Metric::TransferTimeRatio | Metric::LinkBound => Unit::Ratio,
            Metric::WindowGranted => Unit::Bytes,
        }
    }

    /// Whether more is better (throughput) rather than worse (latency, CPU, loss).
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Metric::Goodput
                | Metric::GoodputOut
                | Metric::GoodputIn
                | Metric::MessagesPerSec
                | Metric::TransactionsPerSec
                | Metric::Transactions
                | Metric::TcpEfficiency
        )
    }

    /// Whether it is a CPU figure: one that other work on the host moves, so
    /// that it is compared only between runs under the same foreign load.
    pub fn is_cpu(self) -> bool {
        matches!(
            self,
            Metric::ClientBusyCores
                | Metric::ServerBusyCores
                | Metric::ClientUsPerKib
                | Metric::ServerUsPerKib
                | Metric::ClientUsPerTrans
                | Metric::ServerUsPerTrans
                | Metric::ClientCpuMaxCore
                | Metric::ServerCpuMaxCore
        )
    }

    /// For a percentile of per-transaction samples, its quantile and the metric
    /// that counts the samples each repetition's value rests on; `None` for every
    /// other metric. `latency_min` is an extreme, not a percentile a sample count
    /// makes trustworthy, and `latency_mean` an average: neither is one.
    pub fn percentile(self) -> Option<Percentile> {
        let q = match self {
            Metric::LatencyP50 => 0.5,
            Metric::LatencyP90 => 0.9,
            Metric::LatencyP99 => 0.99,
            Metric::LatencyP999 => 0.999,
            _ => return None,
        };
        Some(Percentile {
            q,
            samples: Metric::Transactions,
        })
    }

    /// `v` with its unit.
    pub fn format(self, v: f64) -> String {
        self.unit().format(v)
    }
}

/// What a percentile metric is the percentile of ([`Metric::percentile`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentile {
    /// The quantile, in (0, 1): 0.99 for the 99th percentile.
    pub q: f64,
    /// The metric counting the samples of a repetition the percentile is taken
    /// over.
    pub samples: Metric,
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let name = String::deserialize(d)?;
        Metric::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown metric '{name}'")))
    }
}

/// A metric estimated over repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Repetitions.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// Lower end of the distribution-free confidence interval of the median (a
    /// measured value); `None` with fewer than 3 repetitions ("n too small").
    pub ci_low: Option<f64>,
    /// Upper end.
    pub ci_high: Option<f64>,
    /// The interval's exact coverage: 0.75, 0.875 and 0.9375 with 3, 4 and 5
    /// repetitions, at least 0.95 from 6 on.
    #[serde(default)]
    pub ci_coverage: Option<f64>,
    /// Coefficient of variation (sample standard deviation over mean).
    pub cv: f64,
}

/// Why a point's figures deserve less trust than they seem to. A closed set; each
/// has a hint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Quality {
    /// The interval rates within a repetition did not settle.
    NotSteady {
        /// Median coefficient of variation of interval rates.
        cv: f64,
    },
    /// A core on one end was nearly fully busy.
    CpuSaturated {
        /// Which end.
        side: String,
        /// The busiest core's busy share, percent.
        busy: f64,
    },
    /// Too few repetitions for a confidence interval worth the name.
    TooFewRepetitions {
        /// Done.
        n: usize,
        /// Advised.
        need: usize,
    },
    /// Repetitions disagree.
    HighVariance {
        /// The metric.
        metric: String,
        /// Its coefficient of variation.
        cv: f64,
        /// Repetitions that would bring the CI half-width under 5% of the median.
        need: usize,
    },
    /// The kernel granted less socket buffer than the sweep asked for.
    KernelCappedWindow {
        /// Requested.
        requested: u64,
        /// Granted (as `getsockopt` reports it, i.e. doubled).
        granted: u64,
    },
}

/// More repetitions than it is reasonable to advise for one point.
const MANY_REPETITIONS: usize = 30;

impl Quality {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            Quality::NotSteady { .. } => {
                "lengthen --time or add --warmup so the rate settles".into()
            }
            Quality::CpuSaturated { .. } => {
                "a core was saturated, which the other points may not share: the verdict says \
                 whether it was the limit; compare service demand, or pin with --affinity"
                    .into()
            }
            Quality::TooFewRepetitions { need, .. } => format!("use --repeat {need} or more"),
            Quality::HighVariance { need, .. } if *need <= MANY_REPETITIONS => format!(
                "use --repeat {need} (the median within ±5%), a quieter machine, or pinned cores"
            ),
            // Advice to run hundreds of repetitions is no advice: the spread is
            // the finding, and its causes come first.
            Quality::HighVariance { need, .. } => format!(
                "steady the point first (a quieter machine, pinned cores with --affinity, a \
                 longer --time): repetitions alone would take {need} to pin its median within ±5%"
            ),
            Quality::KernelCappedWindow { .. } => {
                "raise net.core.rmem_max and net.core.wmem_max on both hosts".into()
            }
        }
    }
}

impl std::fmt::Display for Quality {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Quality::NotSteady { cv } => write!(f, "not steady (interval CV {:.1}%)", cv * 100.0),
            Quality::CpuSaturated { side, busy } => {
                write!(f, "{side} CPU saturated ({busy:.0}% on one core)")
            }
            Quality::TooFewRepetitions { n, need } => {
                write!(f, "too few repetitions ({n}, want {need})")
            }
            Quality::HighVariance { metric, cv, .. } => {
                write!(f, "high variance in {metric} (CV {:.1}%)", cv * 100.0)
            }
            Quality::KernelCappedWindow { requested, granted } => {
                write!(
                    f,
                    "kernel capped the window ({requested} B asked, {granted} B granted)"
                )
            }
        }
    }
}

/// A point's statistics over its repetitions (stored as the point's summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSummary {
    /// Repetitions measured.
    pub reps: usize,
    /// Every metric's estimate, by metric name.
    pub estimates: BTreeMap<String, Estimate>,
    /// Quality warnings.
    pub quality: Vec<Quality>,
}

#[cfg(test)]
mod metric_tests {
    use super::*;

    #[test]
    fn every_metric_round_trips_through_its_name_and_has_a_unit() {
        for m in Metric::ALL {
            assert_eq!(Metric::from_name(m.name()), Some(m));
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.name())
            );
        }
        assert_eq!(Metric::from_name("nope"), None);
        assert_eq!(Metric::Goodput.format(10407155733.433), "10.41 Gbit/s");
        assert_eq!(Metric::LatencyP50.format(50_600.0), "50.6 us");
        assert_eq!(Metric::TransactionsPerSec.format(19_500.0), "19.50 k/s");
        assert!(higher_is_better("goodput") && !higher_is_better("latency_p99"));
    }

    #[test]
    fn latency_percentiles_rest_on_the_transaction_count() {
        let p = Metric::LatencyP99.percentile().unwrap();
        assert_eq!((p.q, p.samples), (0.99, Metric::Transactions));
        assert_eq!(Metric::LatencyP999.percentile().unwrap().q, 0.999);
        assert!(Metric::LatencyMean.percentile().is_none());
        assert!(Metric::Goodput.percentile().is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_too_wide_for_repetitions_is_not_answered_with_hundreds_of_them() {
        let few = Quality::HighVariance {
            metric: "goodput".into(),
            cv: 0.1,
            need: 20,
        };
        assert!(few.hint().starts_with("use --repeat 20 "), "{}", few.hint());
        let many = Quality::HighVariance {
            metric: "goodput".into(),
            cv: 0.62,
            need: 587,
        };
        assert!(!many.hint().contains("--repeat"), "{}", many.hint());
        assert!(many.hint().contains("would take 587"), "{}", many.hint());
    }
}
