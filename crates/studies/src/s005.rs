//! 005: where a host stack's cycles go, one optimization at a time (Cai et al.,
//! "Understanding Host Network Stack Overheads", SIGCOMM 2021), single flow.

use netsonde_model::profile::Category;
use netsonde_model::sweep::Metric;
use netsonde_report::tables::Table;
use netsonde_report::view::{PointView, RunView, SideBreakdown};

use crate::{points, rate, Analysis, Data, Finding, PartDef, PartKind, StudyDef, ThenNow, Verdict};

pub(crate) const DEF: StudyDef = StudyDef {
    id: "005",
    slug: "stack-overheads",
    title: "Where a host stack's cycles go, one optimization at a time",
    seed: "Cai, Chaudhary, Vuppalapati, Kawaguchi, Agarwal: Understanding Host Network Stack Overheads, SIGCOMM 2021",
    summary: "The paper measured one TCP flow between two hosts on a 100 Gbit/s link with Linux's optimizations added one at a time (TSO/GRO, jumbo frames, aRFS), reported throughput per core at each step, and broke each end's CPU down by kernel function into data copy, TCP/IP, netdevice, skb management, memory allocation, locks and scheduling: with every optimization on, one flow reached about 42 Gbit/s, bottlenecked at the receiver's core, and data copy became its dominant cost. Here one TCP flow crosses a lab veth pair between two namespaces, sender pinned to core 0 and receiver to core 1, 64 KiB writes, with segmentation and receive offloads (TSO, GSO, GRO) off then on, MTU 1500 then 9000, and copying then zero-copy sends (MSG_ZEROCOPY); each end's flow thread is sampled with call chains (`cpu-clock`, docs/CPU-BREAKDOWN.md) and its CPU per KiB split into the paper's categories.",
    parts: &[PartDef {
        name: "steps",
        what: "one TCP flow over a veth pair: offloads off/on, MTU 1500/9000, copy/zerocopy sends, each end's CPU breakdown",
        lab: true,
        kind: PartKind::Sweep {
            file: include_str!("../experiments/s005-steps.toml"),
            quick: include_str!("../experiments/s005-steps-quick.toml"),
            figures: &[],
        },
    }],
    buffers: None,
    analyse,
};

/// The paper's optimizations, added one at a time: (name, offloads, MTU, io).
const STEPS: [(&str, &str, &str, &str); 4] = [
    ("no offloads, MTU 1500", "off", "1500", "copy"),
    ("+ TSO/GSO and GRO", "on", "1500", "copy"),
    ("+ jumbo frames (MTU 9000)", "on", "9000", "copy"),
    ("+ zero-copy send", "on", "9000", "zerocopy"),
];

/// Per-packet work: everything the stack does per segment rather than per byte.
const PER_PACKET: [Category; 4] = [
    Category::TcpIp,
    Category::Netdevice,
    Category::Skb,
    Category::Memory,
];

/// A throughput per core change within this is no change.
const NOISE: f64 = 0.05;

/// One step as measured.
struct Step {
    name: &'static str,
    goodput: Option<f64>,
    client: Option<SideBreakdown>,
    server: Option<SideBreakdown>,
}

impl Step {
    fn side(&self, side: &str) -> Option<&SideBreakdown> {
        if side == "client" {
            self.client.as_ref()
        } else {
            self.server.as_ref()
        }
    }

    /// Both ends' flow threads' CPU per KiB.
    fn us_per_kib(&self) -> Option<f64> {
        Some(self.client.as_ref()?.total() + self.server.as_ref()?.total())
    }

    /// Bytes moved per second of both ends' flow threads' CPU, as bit/s: the
    /// paper's throughput per core.
    fn per_core(&self) -> Option<f64> {
        self.us_per_kib()
            .filter(|u| *u > 0.0)
            .map(|u| 8.0 * 1024.0 / u * 1e6)
    }

    /// Both ends' per-packet work per KiB.
    fn per_packet(&self) -> Option<f64> {
        let sum = |b: &SideBreakdown| PER_PACKET.iter().map(|c| cost(b, *c)).sum::<f64>();
        Some(sum(self.client.as_ref()?) + sum(self.server.as_ref()?))
    }
}

fn cost(b: &SideBreakdown, c: Category) -> f64 {
    b.categories.iter().find(|x| x.0 == c).map_or(0.0, |x| x.1)
}

fn at<'a>(s: &'a RunView, offloads: &str, mtu: &str, io: &str) -> Option<&'a PointView> {
    points(s, &[("offloads", offloads), ("mtu", mtu), ("io", io)])
        .into_iter()
        .next()
}

fn step(s: &RunView, (name, offloads, mtu, io): (&'static str, &str, &str, &str)) -> Step {
    let p = at(s, offloads, mtu, io);
    let side = |side: &str| p?.breakdown.iter().find(|b| b.side == side).cloned();
    Step {
        name,
        goodput: p.and_then(|p| p.median(Metric::Goodput.name())),
        client: side("client"),
        server: side("server"),
    }
}

/// The top categories of an end, `copy 55%, TCP/IP 29%`.
fn top(b: Option<&SideBreakdown>) -> String {
    let Some(b) = b else {
        return "-".into();
    };
    let total = b.total();
    let mut v = b.categories.clone();
    v.sort_by(|x, y| y.1.total_cmp(&x.1));
    v.iter()
        .take(3)
        .map(|(c, x)| {
            format!(
                "{} {:.0}%",
                c.label(),
                100.0 * x / total.max(f64::MIN_POSITIVE)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn us(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.3} µs/KiB"))
}

fn analyse(d: &Data) -> Analysis {
    let mut a = Analysis::default();
    let Some(s) = d.sweeps.get("steps") else {
        let why = d
            .skipped
            .get("steps")
            .cloned()
            .unwrap_or_else(|| "the steps part did not run".into());
        for (claim, criterion) in CLAIMS {
            a.findings
                .push(Finding::not_measured(claim, criterion, why.clone()));
        }
        return a;
    };
    let steps: Vec<Step> = STEPS.iter().map(|&st| step(s, st)).collect();
    if steps.iter().all(|st| st.client.is_none()) {
        for (claim, criterion) in CLAIMS {
            a.findings.push(Finding::not_measured(
                claim,
                criterion,
                "no repetition took a CPU breakdown (perf_event_open not permitted: the reports say why)",
            ));
        }
        return a;
    }
    tables(&steps, &mut a);
    let all_on = &steps[2];
    a.then_now.push(ThenNow {
        quantity: "one flow, every optimization on".into(),
        then: "about 42 Gbit/s on a 100 Gbit/s link, the receiver's core saturated".into(),
        now: format!(
            "{} over a veth pair ({} per core of both ends' flow threads)",
            rate(all_on.goodput),
            rate(all_on.per_core())
        ),
    });
    a.then_now.push(ThenNow {
        quantity: "the receiver's largest cost, every optimization on".into(),
        then: "data copy".into(),
        now: top(all_on.server.as_ref()),
    });
    a.findings
        .push(each_step_raises_throughput_per_core(&steps));
    a.findings
        .push(per_packet_work_dominates_without_offloads(&steps[0]));
    a.findings
        .push(offloads_cut_per_packet_work(&steps[0], &steps[1]));
    a.findings.push(jumbo_frames_without_offloads(s));
    a.findings.push(copy_dominates_the_receiver(all_on));
    a.findings
        .push(zero_copy_removes_the_senders_copy(all_on, &steps[3]));
    a.findings.push(the_receiver_is_the_bottleneck(all_on));
    a.caveats.push("On a veth pair the receive path (GRO, IP and TCP input) runs in softirq in the sender's thread, at its transmit: the sender's breakdown holds both stacks' protocol work, the receiver's its copy to user space and its wake-ups. On a NIC the receive path runs on the core that takes the interrupt.".into());
    a.caveats.push("cpu-clock, not cycles (no PMU here): time with interrupts off is charged to where they come back on; docs/CPU-BREAKDOWN.md gives the caveats and how the categories are classified.".into());
    a
}

const CLAIMS: [(&str, &str); 7] = [
    ("Each optimization raises throughput per core", "each step's bytes per second of both ends' flow-thread CPU is more than 5% above the previous step's; in part when some steps are"),
    ("Without segmentation offloads, per-packet work dominates", "with offloads off at MTU 1500, TCP/IP, netdevice, skb and memory are more than half of both ends' CPU per KiB"),
    ("TSO/GSO and GRO cut per-packet work severalfold", "per-packet µs/KiB (both ends) falls by 2x or more with offloads on at MTU 1500; in part from 1.1x"),
    ("Jumbo frames cut per-packet work", "with offloads off, per-packet µs/KiB at MTU 9000 is at most two thirds of MTU 1500's; in part below it"),
    ("With every optimization on, data copy is the receiver's largest cost", "at offloads on, MTU 9000, copying sends, data copy is the largest category of the receiving end's flow thread"),
    ("Zero-copy sends remove the sender's copy", "the sending end's data-copy µs/KiB with MSG_ZEROCOPY is at most half of copying's (offloads on, MTU 9000); in part below it"),
    ("The receiver's core is the bottleneck", "with every optimization on, the receiving end's flow thread costs more per KiB than the sending end's"),
];

fn finding(i: usize, evidence: String, verdict: Verdict) -> Finding {
    Finding {
        claim: CLAIMS[i].0.into(),
        criterion: CLAIMS[i].1.into(),
        evidence,
        verdict,
    }
}

fn missing(i: usize, what: &str) -> Finding {
    Finding::not_measured(CLAIMS[i].0, CLAIMS[i].1, format!("{what} was not measured"))
}

fn each_step_raises_throughput_per_core(steps: &[Step]) -> Finding {
    let per: Vec<Option<f64>> = steps.iter().map(Step::per_core).collect();
    if per.iter().any(Option::is_none) {
        return missing(0, "a step's breakdown");
    }
    let per: Vec<f64> = per.into_iter().flatten().collect();
    let gains: Vec<(usize, f64)> = (1..per.len()).map(|i| (i, per[i] / per[i - 1])).collect();
    let up = gains.iter().filter(|(_, g)| *g > 1.0 + NOISE).count();
    let evidence = gains
        .iter()
        .map(|(i, g)| {
            format!(
                "{}: {} ({:+.0}%)",
                steps[*i].name,
                rate(Some(per[*i])),
                100.0 * (g - 1.0)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let verdict = match up {
        n if n == gains.len() => Verdict::Holds,
        0 => Verdict::DoesNotHold,
        _ => Verdict::Partly,
    };
    finding(
        0,
        format!("from {} per core: {evidence}", rate(Some(per[0]))),
        verdict,
    )
}

fn per_packet_work_dominates_without_offloads(off: &Step) -> Finding {
    let (Some(pp), Some(all)) = (off.per_packet(), off.us_per_kib()) else {
        return missing(1, "the step without offloads");
    };
    let share = pp / all;
    finding(
        1,
        format!(
            "{} of {} ({:.0}%); sender: {}",
            us(Some(pp)),
            us(Some(all)),
            100.0 * share,
            top(off.side("client"))
        ),
        if share > 0.5 {
            Verdict::Holds
        } else {
            Verdict::DoesNotHold
        },
    )
}

fn offloads_cut_per_packet_work(off: &Step, on: &Step) -> Finding {
    let (Some(a), Some(b)) = (off.per_packet(), on.per_packet()) else {
        return missing(2, "a step at MTU 1500");
    };
    let cut = a / b.max(f64::MIN_POSITIVE);
    finding(
        2,
        format!("{} off, {} on: {cut:.1}x", us(Some(a)), us(Some(b))),
        if cut >= 2.0 {
            Verdict::Holds
        } else if cut >= 1.1 {
            Verdict::Partly
        } else {
            Verdict::DoesNotHold
        },
    )
}

fn jumbo_frames_without_offloads(s: &RunView) -> Finding {
    let small = step(s, ("", "off", "1500", "copy"));
    let large = step(s, ("", "off", "9000", "copy"));
    let (Some(a), Some(b)) = (small.per_packet(), large.per_packet()) else {
        return missing(3, "offloads off at MTU 9000");
    };
    finding(
        3,
        format!(
            "{} at 1500, {} at 9000 ({:.1}x fewer µs)",
            us(Some(a)),
            us(Some(b)),
            a / b.max(f64::MIN_POSITIVE)
        ),
        if b <= a * 2.0 / 3.0 {
            Verdict::Holds
        } else if b < a {
            Verdict::Partly
        } else {
            Verdict::DoesNotHold
        },
    )
}

fn copy_dominates_the_receiver(all_on: &Step) -> Finding {
    let Some(r) = all_on.server.as_ref() else {
        return missing(4, "the receiver's breakdown with every optimization");
    };
    let largest = r
        .categories
        .iter()
        .max_by(|x, y| x.1.total_cmp(&y.1))
        .map(|c| c.0);
    finding(
        4,
        format!("receiver: {}", top(Some(r))),
        if largest == Some(Category::DataCopy) {
            Verdict::Holds
        } else {
            Verdict::DoesNotHold
        },
    )
}

fn zero_copy_removes_the_senders_copy(copy: &Step, zero: &Step) -> Finding {
    let (Some(a), Some(b)) = (copy.client.as_ref(), zero.client.as_ref()) else {
        return missing(5, "the zero-copy step");
    };
    let (x, y) = (cost(a, Category::DataCopy), cost(b, Category::DataCopy));
    finding(
        5,
        format!(
            "sender's data copy {} copying, {} with MSG_ZEROCOPY; its whole CPU {} and {}",
            us(Some(x)),
            us(Some(y)),
            us(Some(a.total())),
            us(Some(b.total()))
        ),
        if y <= x / 2.0 {
            Verdict::Holds
        } else if y < x {
            Verdict::Partly
        } else {
            Verdict::DoesNotHold
        },
    )
}

fn the_receiver_is_the_bottleneck(all_on: &Step) -> Finding {
    let (Some(c), Some(r)) = (all_on.client.as_ref(), all_on.server.as_ref()) else {
        return missing(6, "the step with every optimization");
    };
    finding(
        6,
        format!(
            "sender {}, receiver {}: on a veth the receive path runs in the sender's thread",
            us(Some(c.total())),
            us(Some(r.total()))
        ),
        if r.total() > c.total() {
            Verdict::Holds
        } else {
            Verdict::DoesNotHold
        },
    )
}

/// The steps' table and each end's breakdown per step.
fn tables(steps: &[Step], a: &mut Analysis) {
    let mut t = Table {
        title: "The optimizations, one at a time".into(),
        note: "Goodput of one TCP flow over the veth pair (64 KiB writes, sender on core 0, receiver on core 1); per core: bytes moved per second of both ends' flow-thread CPU; each end's CPU per KiB and where most of it went.".into(),
        headers: ["step", "goodput", "per core", "sender", "sender's top", "receiver", "receiver's top"]
            .map(String::from)
            .to_vec(),
        rows: vec![],
    };
    for st in steps {
        t.rows.push(vec![
            st.name.into(),
            rate(st.goodput),
            rate(st.per_core()),
            us(st.client.as_ref().map(SideBreakdown::total)),
            top(st.client.as_ref()),
            us(st.server.as_ref().map(SideBreakdown::total)),
            top(st.server.as_ref()),
        ]);
    }
    a.tables.push(t);
    let cats: Vec<Category> = Category::ALL
        .into_iter()
        .filter(|c| {
            steps
                .iter()
                .flat_map(|s| [&s.client, &s.server])
                .flatten()
                .any(|b| cost(b, *c) > 0.0)
        })
        .collect();
    let mut headers = vec!["step".to_string(), "end".to_string()];
    headers.extend(cats.iter().map(|c| c.label().to_string()));
    let mut b = Table {
        title: "Where each end's CPU went, µs per KiB".into(),
        note: "Each end's flow thread's CPU per KiB moved, split by its sampled call chains into the paper's categories (medians over the repetitions).".into(),
        headers,
        rows: vec![],
    };
    for st in steps {
        for side in ["client", "server"] {
            if let Some(x) = st.side(side) {
                let mut row = vec![
                    st.name.to_string(),
                    if side == "client" {
                        "sender"
                    } else {
                        "receiver"
                    }
                    .into(),
                ];
                row.extend(cats.iter().map(|c| format!("{:.3}", cost(x, *c))));
                b.rows.push(row);
            }
        }
    }
    a.tables.push(b);
}

#[cfg(test)]
#[path = "s005_tests.rs"]
mod tests;
