//! The `netsonde` binary: argument parsing and wiring only. Errors from the library
//! crates arrive typed; here they get context, are printed once on one line, and
//! map to the exit code (0 success, 1 the test failed, 2 bad arguments).
#![forbid(unsafe_code)]

mod args;

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use netsonde_driver::client::{self, ClientConfig};
use netsonde_driver::server::{Server, ServerConfig};
use netsonde_report::{json, text};

use args::{Cli, Command, Output};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // --help and --version are not errors.
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The whole chain, once, on one line.
            let chain: Vec<String> = e.chain().map(|c| c.to_string()).collect();
            let mut line = chain[0].clone();
            for c in &chain[1..] {
                if !line.contains(c.as_str()) {
                    line.push_str(": ");
                    line.push_str(c);
                }
            }
            eprintln!("netsonde: error: {line}");
            let usage = e.downcast_ref::<args::UsageError>().is_some();
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Server(a) => {
            let bind = SocketAddr::new(a.bind, a.port);
            let server = Server::bind(ServerConfig::new(bind))?;
            eprintln!(
                "netsonde server listening on {} (protocol {}, one test at a time)",
                server.local_addr(),
                netsonde_proto::PROTOCOL_VERSION
            );
            server.run(Arc::new(AtomicBool::new(false)))?;
            Ok(())
        }
        Command::Client(a) => {
            let spec = a.spec()?;
            let output = a.output();
            let cfg = ClientConfig {
                host: a.host.clone(),
                port: a.port,
                spec,
                deadlines: Default::default(),
            };
            let mut stdout = std::io::stdout().lock();
            let mut on_interval = |rec: &netsonde_model::result::IntervalRecord| {
                let line = match output {
                    Output::Jsonl => json::interval_line(rec),
                    Output::Text => format!(
                        "[{:>6.2}-{:>6.2} s] {:<15} {:>12} {:>16} {:>8} msgs {:>8} trans",
                        rec.start.as_secs_f64(),
                        rec.end.as_secs_f64(),
                        rec.dir.name(),
                        rec.bytes.to_string(),
                        rec.rate.to_string(),
                        rec.messages,
                        rec.transactions
                    ),
                    Output::Json => return,
                };
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
            };
            let target = a.host.as_deref().unwrap_or("embedded server");
            let report = client::run(&cfg, &mut on_interval)
                .with_context(|| format!("{} test against {target}", cfg.spec.test))?;
            let out = match output {
                Output::Text => text::render(&report),
                Output::Json => json::document(&report) + "\n",
                Output::Jsonl => json::summary_line(&report) + "\n",
            };
            stdout
                .write_all(out.as_bytes())
                .context("writing the result")?;
            Ok(())
        }
    }
}
