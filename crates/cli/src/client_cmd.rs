//! `netsonde client`: one test against a server (or the embedded one), its
//! interval lines and report in the format asked, and the test stored as a run
//! of one point.

use std::io::Write;

use anyhow::Context;
use netsonde_driver::client::{self, ClientConfig};
use netsonde_model::result::IntervalRecord;
use netsonde_report::text;

use netsonde_args::{self as args, ClientArgs};

/// The client's configuration, the spec checked against what the peer can run.
fn config(a: &ClientArgs) -> anyhow::Result<ClientConfig> {
    let spec = a.spec()?;
    // What an iperf3 server cannot run is known before connecting.
    if matches!(a.peer, args::PeerArg::Iperf3) {
        netsonde_proto::iperf3::Params::from_spec(&spec)
            .map_err(|e| args::UsageError(format!("--peer iperf3: {e}")))?;
    }
    if a.plot.is_some() && spec.probe.is_none() {
        return Err(args::UsageError(
            "--plot draws a load-latency test: add --probe (or --rrul)".into(),
        )
        .into());
    }
    Ok(ClientConfig {
        host: crate::family(crate::default_host(a.host.clone()), a.ipv4, a.ipv6)?,
        port: a.port(),
        spec,
        deadlines: Default::default(),
        auth_key: crate::keys::load_opt(a.auth_key.as_deref())?,
        peer: a.peer.into(),
        local: client::Local {
            ip: a.bind,
            data_port: a.cport,
        },
        connect_timeout: a
            .connect_timeout
            .map_or(client::CONNECT_TIMEOUT, |t| t.as_duration()),
        cancel: None,
    })
}

/// Runs the test `a` describes; `verbose` adds the hosts' facts to a text
/// report. A failure is also written in the JSON output asked for (`-J`'s
/// `error`), as iperf3 writes it, for the scripts that read it.
pub fn run(a: ClientArgs, verbose: bool) -> anyhow::Result<()> {
    let output = a.output();
    let done = test(a, verbose);
    if let Err(e) = &done {
        if let Some(doc) = output.error(&crate::one_line(e)) {
            let _ = std::io::stdout().write_all(doc.as_bytes());
        }
    }
    done
}

fn test(a: ClientArgs, verbose: bool) -> anyhow::Result<()> {
    let cfg = config(&a)?;
    let output = a.output();
    let mut stdout = std::io::stdout().lock();
    let text_opts = text::TextOptions {
        verbose,
        rate_unit: a.format,
        title: a.title.clone(),
        width: crate::runs::terminal_width(),
    };
    let start = serde_json::json!({"spec": &cfg.spec, "host": &cfg.host});
    if let Some(line) = output.start(&start) {
        let _ = writeln!(stdout, "{line}");
    }
    let mut on_interval = |rec: &IntervalRecord| {
        if let Some(line) = output.interval(&text_opts, rec) {
            let _ = writeln!(stdout, "{}", line.trim_end());
            let _ = stdout.flush();
        }
    };
    let target = cfg.host.as_deref().unwrap_or("embedded server");
    let mut report = client::run(&cfg, &mut on_interval)
        .with_context(|| format!("{} test against {target}", cfg.spec.test))?;
    report.link = netsonde_lab::here::link_of(&report.server_address);
    netsonde_analysis::finish(&mut report, a.line_rate.map(|r| r.bps()));
    if let (Some(path), Some(svg)) = (&a.plot, netsonde_report::load_plot::svg(&report)) {
        std::fs::write(path, svg)
            .with_context(|| format!("writing the figure to {}", path.display()))?;
    }
    let out = output.report(&text_opts, &report);
    if let Some(dir) = &a.report {
        write_report(dir, &report, &text_opts)?;
    }
    stdout
        .write_all(out.as_bytes())
        .context("writing the result")?;
    drop(stdout);
    if !a.no_store {
        // The result is out already: a store that cannot take it is said,
        // not fatal.
        match store_single(&a, &cfg, &report) {
            Ok((run, db)) => eprintln!(
                "stored as run {run} in {db} (netsonde report {run}{}; --no-store to skip)",
                a.store
                    .db
                    .as_ref()
                    .map(|d| format!(" --db {d}"))
                    .unwrap_or_default()
            ),
            Err(e) => eprintln!("not stored: {}", crate::one_line(&e)),
        }
    }
    Ok(())
}

/// Stores a client test as a run of one point.
fn store_single(
    a: &ClientArgs,
    cfg: &ClientConfig,
    report: &netsonde_model::result::TestReport,
) -> anyhow::Result<(i64, netsonde_store::Location)> {
    let db = a
        .store
        .db
        .clone()
        .unwrap_or_else(netsonde_store::Location::default_file);
    let label = format!("client: {}", report.spec.label());
    let at = (cfg.host.clone(), cfg.port);
    let run = netsonde_run::sessions::store_test(&db, label, report, at, crate::command_line())?;
    Ok((run, db))
}

/// `--report DIR`: the test's page, its figures over time and its text
/// report, as DIR/index.html (the folder made if it is not there).
fn write_report(
    dir: &std::path::Path,
    report: &netsonde_model::result::TestReport,
    opts: &text::TextOptions,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let page = netsonde_report::timeseries::html(report, &text::render_with(report, opts));
    let path = dir.join("index.html");
    std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("report: {}", path.display());
    Ok(())
}
