//! What measures a sweep's points on this host: the real client (against the
//! run's server, or one embedded server for the whole run, and inside the lab
//! asking for each point's link), or the scripted engine; and how an agent
//! measures its jobs the same two ways.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use netsonde_driver::agent;
use netsonde_driver::client::{self, ClientConfig, ClientError};
use netsonde_driver::server::{Server, ServerConfig, ServerHandle};
use netsonde_model::link::{LinkPoint, LinkRecord};
use netsonde_model::result::TestReport;
use netsonde_model::spec::TestSpec;
use netsonde_proto::auth::Key;
use netsonde_sweep::exec::{RunError, Runner};
use netsonde_sweep::fake::FakeRunner;
use netsonde_sweep::{Plan, Point};

use crate::error::SweepError;
use crate::Engine;

/// Runs measurements with the real client. Without a host, one embedded server
/// serves the whole sweep.
pub struct RealRunner {
    host: String,
    port: u16,
    key: Option<Key>,
    _embedded: Option<ServerHandle>,
    /// Inside `netsonde lab run`: the lab's control socket and the link in place.
    lab: Option<LabLink>,
    peer: client::Peer,
}

impl std::fmt::Debug for RealRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealRunner")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("embedded", &self._embedded.is_some())
            .field("lab", &self.lab.as_ref().map(|l| &l.control))
            .finish_non_exhaustive()
    }
}

/// The lab this sweep runs in.
struct LabLink {
    control: PathBuf,
    /// The link in place, recorded with every repetition.
    current: Option<LinkRecord>,
    /// The link axes last asked for.
    asked: Option<LinkPoint>,
}

/// Link axes or a `[link]` table need the lab: refuse them outside it.
pub fn check_lab(plan: &Plan, engine: Engine) -> Result<(), SweepError> {
    let wants_lab = !plan.link_axes.is_empty() || plan.link.is_some();
    if wants_lab && engine == Engine::Real && netsonde_lab::control::control_from_env().is_none() {
        return Err(SweepError::Usage(
            "this sweep sets the link (link axes mtus/rates/delays/losses, or a [link] table): \
             run it in the lab, `netsonde lab run FILE` or `netsonde lab run -- sweep ...`"
                .into(),
        ));
    }
    Ok(())
}

impl RealRunner {
    /// A runner against `host` (inside the lab, with its link), or against an
    /// embedded server on loopback when there is none.
    pub fn new(
        host: Option<String>,
        port: u16,
        key: Option<Key>,
        peer: client::Peer,
    ) -> Result<RealRunner, SweepError> {
        Ok(match host {
            Some(h) => RealRunner {
                host: h,
                port,
                key,
                peer,
                _embedded: None,
                lab: netsonde_lab::control::control_from_env().map(|control| LabLink {
                    control,
                    current: netsonde_lab::control::link_from_env(),
                    asked: None,
                }),
            },
            None if peer == client::Peer::Iperf3 => {
                return Err(SweepError::Usage(
                    "--peer iperf3 needs the HOST of an `iperf3 -s` (there is no embedded iperf3 server)"
                        .into(),
                ))
            }
            None => {
                let mut cfg =
                    ServerConfig::new(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0));
                cfg.log = netsonde_driver::policy::LogFormat::Off;
                cfg.auth_key = key.clone();
                let h = Server::bind(cfg)?.spawn();
                RealRunner {
                    host: h.addr.ip().to_string(),
                    port: h.addr.port(),
                    key,
                    _embedded: Some(h),
                    lab: None,
                    peer,
                }
            }
        })
    }
}

impl Runner for RealRunner {
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        let mut spec = spec.clone();
        // Against `iperf3 -s`, read as iperf3's client reads (`netsonde
        // client --peer iperf3` does unless told otherwise): a sweep compares
        // what an iperf3 user would measure.
        spec.iperf3_io |= self.peer == client::Peer::Iperf3;
        let cfg = ClientConfig {
            host: Some(self.host.clone()),
            port: self.port,
            spec,
            deadlines: Default::default(),
            auth_key: self.key.clone(),
            peer: self.peer,
            local: Default::default(),
            connect_timeout: client::CONNECT_TIMEOUT,
            cancel: None,
        };
        let mut report = client::run(&cfg, &mut |_| {}).map_err(crate::client_error::run_error)?;
        // The lab's link: the one `lab run` built for this point, else that of
        // a `lab up` lab this sweep runs inside.
        report.link = match &self.lab {
            Some(l) => l.current.clone(),
            None => netsonde_lab::here::link_of(&report.server_address),
        };
        // Stored with the repetition, finished as a single test is: its warnings,
        // verdict and RFC 6349 metrics (the lab's link rate is the line rate there).
        netsonde_analysis::finish(&mut report, None);
        Ok(report)
    }

    /// In the lab, asks for the point's link (only when its link axes differ from
    /// the last asked; the lab itself rebuilds only what changed).
    fn prepare(&mut self, point: &Point) -> Result<(), RunError> {
        let want = LinkPoint::from_axes(&point.axes).map_err(RunError::refused)?;
        if want.is_empty() {
            return Ok(());
        }
        let lab = self.lab.as_mut().ok_or_else(|| {
            RunError::refused(
                "link axes need the lab: run the sweep with `netsonde lab run -- sweep ...`",
            )
        })?;
        if lab.asked != Some(want) {
            lab.current = Some(
                netsonde_lab::control::request(&lab.control, &want).map_err(RunError::failed)?,
            );
            lab.asked = Some(want);
        }
        Ok(())
    }
}

/// The fake engine with an optional delay per repetition (tests kill a sweep in
/// the middle with it).
pub struct SlowFake(pub FakeRunner, pub Duration);

impl std::fmt::Debug for SlowFake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SlowFake")
            .field(&self.1)
            .finish_non_exhaustive()
    }
}

impl Runner for SlowFake {
    fn run(&mut self, spec: &TestSpec) -> Result<TestReport, RunError> {
        std::thread::sleep(self.1);
        self.0.run(spec)
    }
}

/// How an agent measures its jobs: for real, or (`--engine fake`) with the
/// scripted engine's report at once, so a controller can be driven by many
/// cheap agents.
pub fn agent_measure(engine: Engine, fake_scale: f64) -> agent::Measure {
    match engine {
        Engine::Fake => {
            let mut fake = FakeRunner::new(0x5eed);
            fake.scale = fake_scale;
            let runner = Mutex::new(fake);
            Arc::new(move |cfg: &ClientConfig| {
                let mut r = runner.lock().unwrap_or_else(|e| e.into_inner());
                r.run(&cfg.spec).map_err(|e| ClientError::Refused {
                    addr: SocketAddr::from(([0, 0, 0, 0], cfg.port)),
                    message: e.to_string(),
                })
            })
        }
        Engine::Real => agent::real(),
    }
}
