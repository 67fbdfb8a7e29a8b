//! The fleet tests that load the host: five namespaces on a bridge for 20
//! pairs, and four agents measuring two pairs at once. In the `quiet` binary,
//! which cargo runs by itself, so their load skews no other test's figures and
//! theirs are not skewed.

use std::collections::BTreeMap;
use std::time::Duration;

use netsonde_store::Store;

use crate::fleet_util::*;
use crate::util::{run, ServerProc};

/// `netsonde lab mesh`: five hosts on a bridge, each running an agent in its
/// own namespace, the link between h2 and h4 shaped to 100 Mbit/s each way; an
/// all-to-all mesh from the bridge measures the 20 ordered pairs. The two slow
/// ones are the matrix's only outliers, at 80-100 Mbit/s, and each says it is
/// link-bound; the lab leaves no namespace behind.
#[test]
fn lab_mesh_finds_the_slow_link_among_five_hosts() {
    let Some(_turn) = crate::lab_util::ready("mesh") else {
        return;
    };
    let name = format!("fm{}", std::process::id());
    let ours = || {
        let out = std::process::Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with(&format!("sonde-{name}-")))
            .count()
    };
    let dir = scratch("labmesh");
    let db = dir.join("fleet.db");
    let out = run(
        &[
            "lab",
            "mesh",
            "--name",
            &name,
            "--hosts",
            "5",
            "--slow",
            "h2-h4=100M",
            "--",
            "mesh",
            "--db",
            db.to_str().unwrap(),
            "--no-report",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128K",
            // Two seconds: htb charges the frame overhead once per GSO packet
            // (1.6% over the payload ceiling) and its bucket lets a burst
            // through within a test; over one second at 100 Mbit/s the two
            // reached 2.1%, past the input-error bound of 2% (a CI run).
            "-t",
            "2",
            "--warmup",
            "0.2",
            "--repeat",
            "1",
        ],
        Duration::from_secs(240),
    );
    let stdout = every_pair_done(&out, &db, 20);
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row {name}: {stdout}"))
            .to_string()
    };
    // h2's row: h1, ·, h3, << h4, h5; h4's row: h1, << h2, h3, ·, h5.
    for (src, cells_after) in [("h2", 2), ("h4", 4)] {
        let line = row(src);
        let at = line
            .find("<< ")
            .unwrap_or_else(|| panic!("{src}: no outlier\n{stdout}"));
        let slow = &line[at + 3..];
        let after = slow.matches("bit/s").count() + slow.matches('·').count();
        assert_eq!(after, cells_after, "{src}: {line}");
        let mbit: f64 = slow.split_whitespace().next().unwrap().parse().unwrap();
        assert!(
            slow.split_whitespace().nth(1) == Some("Mbit/s"),
            "{src}: {line}"
        );
        assert!(
            mbit > 80.0 && mbit <= 100.5,
            "{src}: {mbit} Mbit/s\n{stdout}"
        );
    }
    assert_eq!(stdout.matches("<< ").count(), 2, "{stdout}");
    // One line per verdict under the matrix, with the pairs that got it.
    let link_bound = stdout
        .lines()
        .find(|l| l.ends_with(": link-bound"))
        .unwrap_or_else(|| panic!("no link-bound line\n{stdout}"));
    for pair in ["h2 -> h4", "h4 -> h2"] {
        assert!(link_bound.contains(pair), "{pair}\n{stdout}");
    }
    assert_eq!(ours(), 0, "the cluster's namespaces were left behind");
    // A run measured in a cluster lab does not resume outside one.
    let out = mesh(&["--resume", "latest"], &db, "/nonexistent.key");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("measured in a cluster lab"), "{err}");
}

/// `--concurrency 2` over four agents: pairs that share no agent run together,
/// each round started at one moment; every report says its round's size and
/// the skew of its starts.
#[test]
fn concurrent_pairs_share_no_agent_and_start_together() {
    let _turn = crate::lab_util::serial();
    let dir = scratch("conc");
    let k = key(&dir);
    let agents: Vec<ServerProc> = (0..4).map(|_| ServerProc::agent(&k)).collect();
    let list = agent_list(&agents.iter().collect::<Vec<_>>());
    let db = dir.join("fleet.db");
    let mut args = vec!["--agent", &list, "--concurrency", "2"];
    args.extend_from_slice(QUICK);
    let out = mesh(&args, &db, &k);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pairs(&db).len(), 12);
    let store = Store::open(&db).unwrap();
    let run = store.runs().unwrap()[0].id;
    let mut rounds = BTreeMap::new();
    for p in store.points(run).unwrap() {
        let axes: BTreeMap<String, String> = serde_json::from_str(&p.axes_json).unwrap();
        for r in &p.reps {
            let report: serde_json::Value = serde_json::from_str(&r.report_json).unwrap();
            let s = &report["synced"];
            let at = s["start_at_unix_ms"].as_u64().unwrap();
            let started = s["started_unix_ms"].as_u64().unwrap();
            assert!(started >= at, "{s}");
            assert!(s["round_skew_ms"].as_u64().unwrap() < 1000, "{s}");
            rounds
                .entry(at)
                .or_insert_with(Vec::new)
                .push((axes["src"].clone(), axes["dst"].clone()));
        }
    }
    // Most rounds hold two pairs, and no round has an agent twice.
    assert!(
        rounds.values().filter(|r| r.len() == 2).count() >= 4,
        "{rounds:?}"
    );
    for r in rounds.values() {
        let mut hosts: Vec<&String> = r.iter().flat_map(|(a, b)| [a, b]).collect();
        let n = hosts.len();
        hosts.sort();
        hosts.dedup();
        assert_eq!(hosts.len(), n, "{r:?}");
    }
}

/// Two meshes of the same pairs, the second with h1-h2 slowed to 100 Mbit/s:
/// `compare` names that pair's goodput, and no other pair's, as worse (exit 3),
/// and the second run's heat map outlines it.
#[test]
fn compare_names_the_pair_that_got_worse() {
    let Some(_turn) = crate::lab_util::ready("mesh compare") else {
        return;
    };
    let dir = scratch("cmp");
    let db = dir.join("fleet.db");
    let dbs = db.to_str().unwrap();
    // Both runs shape a pair, so the shaper (htb) is in every host's path both
    // times: the first a pair the mesh does not measure, far above the others.
    for slow in ["h1-h3=40G", "h1-h2=100M"] {
        let name = format!("fc{}", std::process::id());
        let args = [
            "lab", "mesh", "--name", &name, "--hosts", "3", "--slow", slow,
        ];
        let mut args = args.to_vec();
        args.extend([
            "--",
            "mesh",
            "--db",
            dbs,
            "--no-report",
            "--pattern",
            "pairs:h1-h2,h2-h3",
            "--tests",
            "tcp-stream",
            "--sizes",
            "128K",
            "-t",
            "0.5",
            "--warmup",
            "0.2",
            "--repeat",
            "5",
        ]);
        let out = run(&args, Duration::from_secs(180));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run(&["compare", "1", "2", "--db", dbs], Duration::from_secs(60));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(3), "{text}");
    let worse = &text[text.find("worse in run 2:").expect(&text)..];
    let goodput_worse: Vec<&str> = worse
        .lines()
        .filter(|l| l.ends_with('%') && l.contains(": goodput "))
        .collect();
    // The slowed pair is named, its goodput down by the shaper's 99%. Another
    // pair may be named too when a run of it was slower (a CI run saw h2 -> h3
    // at -37%, p = 0.004, its five repetitions spread from 6.7 to 13.5 Gbit/s
    // on two busy cores): compare is right to say so. None fell like it.
    let change = |l: &str| -> f64 {
        let pct = l.rsplit(' ').next().unwrap().trim_end_matches('%');
        pct.parse().unwrap_or_else(|_| panic!("a change in '{l}'"))
    };
    let slowed: Vec<&&str> = goodput_worse
        .iter()
        .filter(|l| l.trim_start().starts_with("h1 -> h2: "))
        .collect();
    assert_eq!(slowed.len(), 1, "{text}");
    assert!(change(slowed[0]) < -95.0, "{text}");
    for other in goodput_worse
        .iter()
        .filter(|l| !l.trim_start().starts_with("h1 -> h2: "))
    {
        assert!(change(other) > -90.0, "{text}");
    }
    let rep = dir.join("report");
    let out = run(
        &["report", "2", "--db", dbs, "--out", rep.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(rep.join("report.html")).unwrap();
    assert_eq!(html.matches("<td class=\"out\"").count(), 1, "{html}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 38: a monitor over a four-host cluster lab at 500 Mbit/s, a round
/// every 6 s (each about 4 s: four pairs of 0.5 s tests); 33 s in, well past
/// the three rounds that learn each pair's normal, the lab slows the link
/// between h1 and h3 to 50 Mbit/s. In the last round the two pairs over it are
/// degraded on their goodput against their own normal; the pairs over the
/// untouched link are not.
#[test]
fn a_monitor_sees_a_lab_link_slowed_between_rounds() {
    let Some(_turn) = crate::lab_util::ready("monitor") else {
        return;
    };
    let name = format!("fmon{}", std::process::id());
    let dir = scratch("labmonitor");
    let db = dir.join("monitor.db");
    let out = run(
        &[
            "lab",
            "mesh",
            "--name",
            &name,
            "--hosts",
            "4",
            "--rate",
            "500M",
            "--slow",
            "h1-h3=50M@33s",
            "--",
            "monitor",
            "--db",
            db.to_str().unwrap(),
            "--pattern",
            "pairs:h1-h3,h3-h1,h2-h4,h4-h2",
            "--tests",
            "tcp-stream",
            "--sizes",
            "64K",
            "-t",
            "0.5",
            "--warmup",
            "0.1",
            "--repeat",
            "1",
            "--every",
            "6s",
            "--jitter",
            "0",
            "--window",
            "5",
            "--rounds",
            "8",
        ],
        Duration::from_secs(180),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("class change"),
        "the lab never slowed the link: {err}"
    );
    let store = Store::open(&db).unwrap();
    let pairs = netsonde_run::monitor::latest(&store, "monitor", 5)
        .unwrap()
        .pairs;
    assert_eq!(pairs.len(), 4, "{pairs:?}");
    for p in &pairs {
        let slowed = [p.src.as_str(), p.dst.as_str()] == ["h1", "h3"]
            || [p.src.as_str(), p.dst.as_str()] == ["h3", "h1"];
        let on_goodput =
            p.state == netsonde_model::watch::PairState::Degraded && p.why.starts_with("goodput");
        assert_eq!(
            on_goodput, slowed,
            "{} -> {}: {:?}: {}\n{err}",
            p.src, p.dst, p.state, p.why
        );
    }
}
