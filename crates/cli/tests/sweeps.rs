//! Sweeps end to end: the scripted engine through store, analysis and reports;
//! compare as a CI gate; a SIGKILL in the middle and a resume; the HTML report in a
//! real browser.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::util::run;

pub(crate) fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("netsonde-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub(crate) fn ok(args: &[&str]) -> String {
    let out = run(args, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn fake_sweep_store_report_pipeline() {
    let d = tmpdir("pipeline");
    let db = d.join("r.db");
    let out = d.join("rep");
    let stdout = ok(&[
        "sweep",
        "--engine",
        "fake",
        "--db",
        s(&db),
        "--out",
        s(&out),
        "--tests",
        "tcp-stream,tcp-rr",
        "--directions",
        "out,in,bidir",
        "--sizes",
        "64..4K*4",
        "--windows",
        "64K,256K",
        "--line-rate",
        "10G",
    ]);
    assert!(stdout.contains("report: "), "{stdout}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("Latency model"));
    for plot in [
        "throughput-size",
        "cpu-size",
        "latency-size",
        "throughput-window",
        "latency-cdf",
    ] {
        assert!(out.join(format!("{plot}.svg")).exists(), "{plot}");
    }
    let list = ok(&["runs", "list", "--db", s(&db)]);
    assert!(list.contains("complete"), "{list}");
    // Re-rendered from the store at any time, in both formats.
    let md_dir = d.join("md");
    ok(&[
        "report",
        "1",
        "--format",
        "md",
        "--out",
        s(&md_dir),
        "--db",
        s(&db),
    ]);
    let md = std::fs::read_to_string(md_dir.join("report.md")).unwrap();
    assert!(md.contains("## Outbound, inbound and bidirectional"));
    assert!(md.contains("## Knees"));
    let csv = ok(&["runs", "export", "1", "--csv", "--db", s(&db)]);
    assert!(csv.starts_with("point,test,direction"));
    assert!(csv.lines().count() > 20);
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["runs", "export", "latest", "--json", "--db", s(&db)])).unwrap();
    assert!(json["fit"]["fit"]["r2"].as_f64().unwrap() > 0.9);
    let show = ok(&["runs", "show", "1", "--full", "--db", s(&db)]);
    assert!(show.contains("# netsonde run 1"));
    let show = ok(&["runs", "show", "1", "--db", s(&db)]);
    assert!(show.starts_with("run 1 "), "{show}");
    ok(&["runs", "delete", "1", "--db", s(&db)]);
    let out = run(
        &["runs", "show", "1", "--db", s(&db)],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no run 1")
            || String::from_utf8_lossy(&out.stderr).contains("run 1")
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn compare_is_a_performance_gate() {
    let d = tmpdir("compare");
    let db = d.join("c.db");
    let base = [
        "sweep",
        "--engine",
        "fake",
        "--no-report",
        "--db",
        s(&db),
        "--sizes",
        "1K..16K*4",
        "--repeat",
        "8",
    ];
    ok(&base);
    ok(&[&base[..], &["--seed", "2"]].concat());
    ok(&[&base[..], &["--fake-scale", "0.7"]].concat());
    // A/A: the same configuration, different noise: no regression.
    let same = run(
        &["compare", "1", "2", "--db", s(&db)],
        Duration::from_secs(30),
    );
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stdout)
    );
    // A/B, 30% slower: flagged, exit 3, with units.
    let worse = run(
        &["compare", "1", "3", "--db", s(&db)],
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&worse.stdout);
    assert_eq!(worse.status.code(), Some(3), "{text}");
    assert!(text.contains("REGRESSION"), "{text}");
    assert!(text.contains("bit/s") && text.contains("Holm"), "{text}");
    // Too few repetitions to decide among many comparisons: said, not guessed.
    let few = [&base[..8], &["--repeat", "3"]].concat();
    ok(&few);
    ok(&[&few[..], &["--fake-scale", "0.7"]].concat());
    let out = run(
        &["compare", "4", "5", "--db", s(&db)],
        Duration::from_secs(30),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("need") && text.contains("--repeat"), "{text}");
    // Too few repetitions to judge: the summary does not claim "nothing worse".
    assert!(
        text.contains("but with 3 repetition(s) a side no change could be")
            && !text.contains("beyond noise"),
        "{text}"
    );
    // The same axes with another option (the measured time) are not judged, and
    // say which option differs.
    ok(&[&base[..], &["--time", "2"]].concat());
    let out = run(
        &["compare", "1", "6", "--db", s(&db)],
        Duration::from_secs(30),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("differ in their options"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The reported false alarm: `compare` of two identical runs called latency p99
/// a regression (+2.5%, p 0.0079), each repetition's p99 taken over about 180
/// transactions. Here identical real sweeps on loopback, back to back, must not
/// regress: a tcp-rr point at 4 MiB (under 200 transactions a repetition) has its
/// p99 shown, not judged; the 1 KiB points are judged against each metric's
/// practical change. A pair that regresses is measured once more and only a
/// regression that repeats fails: a step in the host's load between A and B
/// (another test starting) moves every figure of B at once, which no rule can tell
/// from a change. `bench/compare-aa.sh` measures the rate over more pairs.
#[test]
fn identical_loopback_sweeps_are_not_a_regression() {
    // Not beside a study or a lab test: a study raises the host's buffer
    // limits while it runs (a CI run compared A at rmem_max 4 MiB with B at
    // 256 MiB, and 1 KiB's goodput moved 7% twice in a row), so A and B
    // would not be measured on the same host.
    let _alone = crate::lab_util::serial();
    let d = tmpdir("compare-aa");
    let db = d.join("aa.db");
    let mut runs = 0;
    let mut pair = || {
        for _ in 0..2 {
            let args = [
                "sweep",
                "--tests",
                "tcp-stream,tcp-rr",
                "--directions",
                "out",
                "--sizes",
                "1K,4M",
                "--repeat",
                "5",
                "-t",
                "0.2",
                "--warmup",
                "0.1",
                "--no-report",
                "--db",
                s(&db),
            ];
            // A repetition cut short on a loaded host (a 4 MiB transaction
            // stalled past the 0.2 s) leaves its point pending, exit 4: the
            // run is finished as a user would, with --resume.
            let out = run(&args, Duration::from_secs(120));
            if out.status.code() == Some(4) {
                ok(&["sweep", "--resume", "latest", "--no-report", "--db", s(&db)]);
            } else {
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
        runs += 2;
        let (a, b) = ((runs - 1).to_string(), runs.to_string());
        let out = run(
            &["compare", &a, &b, "--db", s(&db)],
            Duration::from_secs(30),
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            matches!(out.status.code(), Some(0 | 3)),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains("not judged: latency_p99 rests on as few as"),
            "the 4 MiB tcp-rr p99 is shown, not judged: {text}"
        );
        (out.status.code() == Some(3), text)
    };
    for i in 1..=3 {
        let (regressed, text) = pair();
        eprintln!("A/A pair {i}: regression: {regressed}\n{text}");
        if regressed {
            let (again, text2) = pair();
            eprintln!("A/A pair {i} measured again: regression: {again}\n{text2}");
            assert!(
                !again,
                "identical sweeps regressed twice in a row:\n{text}\n{text2}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `compare` of two searches judges NDR and PDR by each point's repeated
/// searches: a host 10% slower (the scripted receiver takes 10% less) is a
/// regression where the receiver limits, exit 3; one search a side is not enough
/// to judge and says so; where nothing was lost the senders' rates are shown, not
/// judged; a search is not compared with a sweep.
#[test]
fn compare_of_two_searches_flags_a_lower_loss_free_rate() {
    let d = tmpdir("compare-search");
    let db = d.join("c.db");
    let base = [
        "search",
        "--engine",
        "fake",
        "--no-report",
        "--db",
        s(&db),
        "--frames",
        "64,512",
        "--io",
        "copy,batch",
        "--repeat",
        "5",
    ];
    ok(&base);
    ok(&[&base[..], &["--fake-scale", "0.9"]].concat());
    let cmp = |x: &str, y: &str| run(&["compare", x, y, "--db", s(&db)], Duration::from_secs(30));
    let same = cmp("1", "1");
    let text = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");
    let worse = cmp("1", "2");
    let text = String::from_utf8_lossy(&worse.stdout);
    assert_eq!(worse.status.code(), Some(3), "{text}");
    let copy: Vec<&str> = text.lines().filter(|l| l.contains(" copy ")).collect();
    assert_eq!(copy.len(), 4, "NDR and PDR of two frame sizes: {text}");
    assert!(
        copy.iter().all(|l| l.contains("REGRESSION")
            && (l.contains("-9.") || l.contains("-10."))
            && l.contains(", 5]")),
        "{text}"
    );
    let batch: Vec<&str> = text.lines().filter(|l| l.contains(" batch")).collect();
    assert!(
        batch.len() == 2 && batch.iter().all(|l| l.contains("not judged")),
        "{text}"
    );
    // Swapped: better, exit 0.
    let better = cmp("2", "1");
    let text = String::from_utf8_lossy(&better.stdout);
    assert_eq!(better.status.code(), Some(0), "{text}");
    assert!(text.contains("better"), "{text}");
    // One search a side: the change is shown, and why it cannot be judged.
    let one = [&base[..10], &["--repeat", "1"]].concat();
    ok(&one);
    ok(&[&one[..], &["--fake-scale", "0.9"]].concat());
    let single = cmp("3", "4");
    let text = String::from_utf8_lossy(&single.stdout);
    assert_eq!(single.status.code(), Some(0), "{text}");
    assert!(
        text.contains("--repeat 5") && !text.contains("REGRESSION"),
        "{text}"
    );
    ok(&[
        "sweep",
        "--engine",
        "fake",
        "--no-report",
        "--db",
        s(&db),
        "--sizes",
        "1K",
    ]);
    let mixed = cmp("1", "5");
    let err = String::from_utf8_lossy(&mixed.stderr);
    assert_eq!(mixed.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("a search with a search"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn experiment_file_runs_and_rejects_unknown_keys() {
    let d = tmpdir("file");
    let f = d.join("e.toml");
    std::fs::write(&f, "label = \"file\"\ntests = [\"udp-stream\"]\nsizes = \"64,1K\"\nrepeat = 2\n[options]\nrate = \"100M\"\n").unwrap();
    ok(&[
        "run",
        s(&f),
        "--engine",
        "fake",
        "--no-report",
        "--db",
        s(&d.join("f.db")),
    ]);
    let list = ok(&["runs", "list", "--db", s(&d.join("f.db"))]);
    assert!(list.contains("file"), "{list}");
    std::fs::write(&f, "sizes = \"64\"\nsizez = 1\n").unwrap();
    let out = run(
        &["run", s(&f), "--engine", "fake", "--db", s(&d.join("f.db"))],
        Duration::from_secs(10),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("sizez"), "{err}");
    let out = run(
        &[
            "sweep",
            "--sizes",
            "8K..1K",
            "--engine",
            "fake",
            "--db",
            s(&d.join("f.db")),
        ],
        Duration::from_secs(10),
    );
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sigkill_mid_sweep_keeps_completed_points_and_resumes() {
    let d = tmpdir("kill");
    let db = d.join("k.db");
    let mut child = crate::util::cmd()
        .args([
            "sweep",
            "--engine",
            "fake",
            "--fake-delay-ms",
            "40",
            "--no-report",
            "--db",
            s(&db),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // 36 repetitions of 40 ms: kill well inside the third round.
    std::thread::sleep(Duration::from_millis(1100));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    {
        let store = netsonde_store::Store::open(&db).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok");
        let points = store.points(1).unwrap();
        let done = points
            .iter()
            .filter(|p| p.status == netsonde_store::PointStatus::Done)
            .count();
        let reps: usize = points.iter().map(|p| p.reps.len()).sum();
        assert!(reps >= 12, "only {reps} reps kept");
        assert!(
            done < points.len(),
            "the kill came too late to test anything"
        );
        // Every completed point holds all of its repetitions.
        for p in points
            .iter()
            .filter(|p| p.status == netsonde_store::PointStatus::Done)
        {
            assert_eq!(p.reps.len(), 3);
        }
    }
    ok(&[
        "sweep",
        "--resume",
        "1",
        "--engine",
        "fake",
        "--no-report",
        "--db",
        s(&db),
    ]);
    let store = netsonde_store::Store::open(&db).unwrap();
    let points = store.points(1).unwrap();
    assert!(points
        .iter()
        .all(|p| p.status == netsonde_store::PointStatus::Done && p.reps.len() == 3));
    assert_eq!(
        store.run(1).unwrap().status,
        netsonde_store::RunStatus::Complete
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Renders the HTML report in headless Chromium and checks from the screenshot that
/// the plots are drawn: many non-white pixels in several colours.
#[test]
fn html_report_renders_in_a_browser() {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(chromium) = chromium else {
        eprintln!("SKIPPED sweeps::html_report_renders_in_a_browser: chromium is not installed (.ci/run installs it)");
        return;
    };
    let d = tmpdir("browser");
    let out = d.join("rep");
    ok(&[
        "sweep",
        "--engine",
        "fake",
        "--db",
        s(&d.join("b.db")),
        "--out",
        s(&out),
        "--sizes",
        "64..64K*4",
    ]);
    let shot = d.join("shot.png");
    let status = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", s(&d.join("profile"))),
            &format!("--screenshot={}", s(&shot)),
            "--window-size=1200,2400",
            &format!("file://{}", s(&out.join("report.html"))),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let mut non_white = 0usize;
    let mut colours = std::collections::HashSet::new();
    for p in buf[..info.buffer_size()].chunks(px) {
        if p[0] < 235 || p[1] < 235 || p[2] < 235 {
            non_white += 1;
            colours.insert((p[0] / 32, p[1] / 32, p[2] / 32));
        }
    }
    let total = (info.width * info.height) as usize;
    assert!(
        non_white * 100 > total,
        "only {non_white} of {total} pixels drawn"
    );
    assert!(
        colours.len() >= 6,
        "plots should use several colours, saw {}",
        colours.len()
    );
    eprintln!(
        "browser: {non_white} of {total} pixels drawn in {} colour bins",
        colours.len()
    );

    // Laid out by the browser: every figure has tick labels (a number, with an SI
    // prefix or a unit) that the browser gave a size, and no two texts of a figure
    // overlap. A copy of the report gets the checking script; the report itself
    // has none.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let verdict = checked_in_browser(chromium, &d, &page, TICK_CHECK, "1200,2400", "data-ticks");
    assert_eq!(verdict, "ok", "tick labels in the browser");
    let _ = std::fs::remove_dir_all(&d);
}

/// A copy of `page` with the `check` script loaded in headless Chromium at
/// `size`: what the script wrote into the body's `attr` (the report itself has
/// no script).
fn checked_in_browser(
    chromium: &str,
    d: &Path,
    page: &str,
    check: &str,
    size: &str,
    attr: &str,
) -> String {
    let checked = d.join(format!("checked-{attr}.html"));
    std::fs::write(
        &checked,
        page.replace("</body>", &format!("<script>{check}</script></body>")),
    )
    .unwrap();
    let dom = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", s(&d.join(format!("profile-{attr}")))),
            &format!("--window-size={size}"),
            "--virtual-time-budget=2000",
            "--dump-dom",
            &format!("file://{}", s(&checked)),
        ])
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    dom.split(&format!("{attr}=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("the check did not run")
        .to_string()
}

/// Run in the browser over the report: per figure, the tick labels it drew (a
/// number with an optional SI prefix or unit, laid out with a size) and any two
/// texts whose boxes overlap. Writes "ok" or what failed into `data-ticks`.
const TICK_CHECK: &str = r#"
const bad = [];
document.querySelectorAll('.plot svg').forEach((svg, i) => {
  const texts = [...svg.querySelectorAll('text')].map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
  const ticks = texts.filter(([s, r]) => /^-?[0-9.]+( ?[kKMGT]| ?(ns|us|ms|s))?$/.test(s) && r.width > 0 && r.height > 0);
  if (ticks.length < 5) bad.push(`figure ${i}: ${ticks.length} tick labels`);
  for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) {
    const [sa, ra] = texts[a], [sb, rb] = texts[b];
    const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
    const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
    if (w > 1 && h > 1) bad.push(`figure ${i}: '${sa}' overlaps '${sb}'`);
  }
});
document.body.setAttribute('data-ticks', bad.length ? bad.join('; ') : 'ok');
"#;

/// Issue 37.8: the report answers first. At a laptop's size (1366x768) in
/// Chromium, the summary (a line per point with its verdict) is on the first
/// screen, before every plot and every other table; a TCP and a paced UDP
/// test each get their own throughput panel.
#[test]
fn the_report_answers_first_at_a_laptops_size() {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    let Some(chromium) = chromium else {
        eprintln!("SKIPPED sweeps::the_report_answers_first_at_a_laptops_size: chromium is not installed (.ci/run installs it)");
        return;
    };
    let d = tmpdir("laptop");
    let out = d.join("rep");
    ok(&[
        "sweep",
        "--engine",
        "fake",
        "--db",
        s(&d.join("l.db")),
        "--out",
        s(&out),
        "--tests",
        "tcp-stream,udp-stream",
        "--directions",
        "out,in",
        "--sizes",
        "64..16K*4",
        "--quiet",
    ]);
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for id in ["throughput-size-tcp-stream", "throughput-size-udp-stream"] {
        assert!(page.contains(&format!("id=\"plot-{id}\"")), "no panel {id}");
    }
    let verdict = checked_in_browser(chromium, &d, &page, FIRST_CHECK, "1366,768", "data-first");
    assert_eq!(verdict, "ok", "the summary in the browser");
    let _ = std::fs::remove_dir_all(&d);
}

/// Run in the browser over the report: the summary's top is on the first
/// screen, it comes before every plot and every other table, and it has a row
/// per point (5 sizes x 2 directions x 2 tests). Writes "ok" or what failed
/// into `data-first`.
const FIRST_CHECK: &str = r#"
const bad = [];
const sum = document.querySelector('#summary');
if (!sum) { bad.push('no summary'); } else {
  const top = sum.getBoundingClientRect().top;
  if (top > window.innerHeight / 2) bad.push(`summary starts at ${top} px of ${window.innerHeight}`);
  const first = (sel) => [...document.querySelectorAll(sel)].find(e => !sum.contains(e));
  for (const sel of ['.plot', 'table', 'h2']) {
    const e = first(sel);
    if (e && (sum.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_PRECEDING)) bad.push(`${sel} before the summary`);
  }
  const rows = sum.querySelectorAll('table tr').length - 1;
  if (rows !== 20) bad.push(`${rows} summary rows`);
  if (!sum.querySelector('ul.headline li')) bad.push('no headline');
}
document.body.setAttribute('data-first', bad.length ? bad.join('; ') : 'ok');
"#;

/// Every shipped experiment file parses, plans and runs (on the scripted engine).
#[test]
fn shipped_experiment_files_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let d = tmpdir("shipped");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let f = entry.unwrap().path();
        if f.extension().is_some_and(|e| e == "toml") {
            let db = d.join(format!("{n}.db"));
            ok(&[
                "run",
                s(&f),
                "--engine",
                "fake",
                "--db",
                s(&db),
                "--out",
                s(&d.join(format!("r{n}"))),
            ]);
            n += 1;
        }
    }
    assert!(n >= 1, "no experiment files in {}", dir.display());
    let _ = std::fs::remove_dir_all(&d);
}

/// SIGTERM (as Ctrl-C) ends a sweep between measurements: completed repetitions
/// are kept, the run is marked interrupted, and the exit code says so.
#[test]
fn sigterm_stops_cleanly_and_keeps_results() {
    let d = tmpdir("term");
    let db = d.join("t.db");
    let child = crate::util::cmd()
        .args([
            "sweep",
            "--engine",
            "fake",
            "--fake-delay-ms",
            "40",
            "--no-report",
            "--db",
            s(&db),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("interrupted") && err.contains("--resume 1"),
        "{err}"
    );
    let store = netsonde_store::Store::open(&db).unwrap();
    assert_eq!(
        store.run(1).unwrap().status,
        netsonde_store::RunStatus::Interrupted
    );
    let reps: usize = store.points(1).unwrap().iter().map(|p| p.reps.len()).sum();
    assert!((5..36).contains(&reps), "{reps}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Issue 41: a test that runs netsonde with no `--db` and no `--out` writes its
/// run and report into this test process's sandbox, never into the user's
/// data directory or the checkout (`.ci/run` checks the user's store before and
/// after the whole suite; this checks where the defaults lead).
#[test]
fn a_test_run_with_the_defaults_stays_in_the_sandbox() {
    let sandbox = crate::util::sandbox();
    let done = run(
        &[
            "sweep",
            "--engine",
            "fake",
            "--repeat",
            "1",
            "--sizes",
            "1K",
            "--tests",
            "tcp-stream",
        ],
        Duration::from_secs(120),
    );
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(done.status.success(), "{out}");
    let run: String = out
        .lines()
        .filter(|l| l.contains(" stored in "))
        .find_map(|l| l.strip_prefix("run "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no stored run in: {out}"))
        .to_string();
    let db = sandbox.join("data/netsonde/netsonde.db");
    assert!(
        db.is_file(),
        "the default store is not {}: {out}",
        db.display()
    );
    let report = sandbox.join(format!("work/netsonde-report-{run}/report.html"));
    assert!(report.is_file(), "no report at {}: {out}", report.display());
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("netsonde-report-{run}"));
    assert!(
        !here.exists(),
        "a report folder in the checkout: {}",
        here.display()
    );
}
