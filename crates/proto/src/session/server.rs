//! The server's side of a control connection.

use netsonde_model::result::SideResult;
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

use crate::auth::{self, Sealer, Side};
use crate::frame::{Frame, FrameError, Hello};
use crate::message::{ErrorCode, Hex32, Job, JobReport, Message, SetupAck, MAX_START_DELAY};

use super::common::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerState {
    AwaitHello,
    AwaitAuth,
    AwaitSetup,
    Preparing,
    AwaitStart,
    Running,
    /// An agent runs a job as a client.
    RunningJob,
    AwaitDone,
}

/// How long a job may take from its request to its report: its test, a client's
/// phases against the target, and the furthest its start may be set ahead.
pub fn job_deadline(job: &Job, d: &Deadlines) -> Nanos {
    job.spec
        .deadline()
        .saturating_add(d.hello)
        .saturating_add(d.setup)
        .saturating_add(d.connect)
        .saturating_add(d.grace)
        .saturating_add(MAX_START_DELAY)
}

/// The server's side of one control connection.
#[derive(Debug)]
pub struct ServerSession {
    core: Core,
    state: ServerState,
    deadlines: Deadlines,
    spec: Option<TestSpec>,
    auth: Option<Auth>,
}

impl ServerSession {
    /// A session for a connection accepted at `now`. With `auth`, the client must
    /// prove it holds the key before anything else happens.
    pub fn new(now: Nanos, deadlines: Deadlines, auth: Option<Auth>) -> ServerSession {
        let mut core = Core::default();
        core.arm(now, deadlines.hello, "hello");
        ServerSession {
            core,
            state: ServerState::AwaitHello,
            deadlines,
            spec: None,
            auth,
        }
    }

    /// Whether the client has proved it holds the key.
    pub fn authenticated(&self) -> bool {
        self.core.sealer.is_some()
    }

    common_api!();

    /// The spec being run, once set up.
    pub fn spec(&self) -> Option<&TestSpec> {
        self.spec.as_ref()
    }

    /// Feeds one decoded frame.
    pub fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        if self.core.over {
            return;
        }
        let d = self.deadlines;
        if self.state == ServerState::AwaitHello {
            match frame {
                Frame::Hello(h) => {
                    let mut ours = Hello::ours();
                    if self.auth.is_some() {
                        ours.caps |= Hello::CAP_AUTH;
                    }
                    self.core.out.push_back(Frame::Hello(ours));
                    if h.version != crate::PROTOCOL_VERSION {
                        let e = ProtoError::VersionMismatch {
                            ours: crate::PROTOCOL_VERSION,
                            theirs: h.version,
                        };
                        self.core
                            .error_frame(ErrorCode::VersionMismatch, e.to_string());
                        self.core.fail(e);
                    } else if let Some((_, nonce)) = &self.auth {
                        if h.caps & Hello::CAP_AUTH == 0 {
                            let e = ProtoError::ClientHasNoKey;
                            self.core.error_frame(
                                ErrorCode::AuthRequired,
                                "this server requires authentication: pass --auth-key FILE with the server's key".into(),
                            );
                            self.core.fail(e);
                        } else {
                            let nonce = Hex32(*nonce);
                            self.core.send(Message::AuthChallenge { nonce });
                            self.state = ServerState::AwaitAuth;
                            self.core.arm(now, d.hello, "authentication");
                        }
                    } else {
                        self.state = ServerState::AwaitSetup;
                        self.core.arm(now, d.setup, "setup");
                    }
                }
                other => {
                    let got = match &other {
                        Frame::Message(m) => m.name(),
                        _ => "a sealed frame",
                    };
                    self.core.unexpected("hello", got)
                }
            }
            return;
        }
        let Some(frame) = self.core.unseal(frame) else {
            return;
        };
        if self.state == ServerState::AwaitAuth {
            match self.core.common(frame, "auth-response") {
                Some(Message::AuthResponse { nonce, proof }) => {
                    let (key, sn) = self.auth.as_ref().expect("AwaitAuth implies a key");
                    if auth::check_client_proof(key, sn, &nonce.0, &proof.0) {
                        let proof = Hex32(auth::server_proof(key, sn, &nonce.0));
                        self.core.send(Message::AuthOk { proof });
                        self.core.sealer = Some(Sealer::new(key, sn, &nonce.0, Side::Server));
                        self.state = ServerState::AwaitSetup;
                        self.core.arm(now, d.setup, "setup");
                    } else {
                        self.core.error_frame(
                            ErrorCode::AuthFailed,
                            "authentication failed: wrong key".into(),
                        );
                        self.core.fail(ProtoError::AuthFailed);
                    }
                }
                Some(m) => self.core.unexpected("auth-response", m.name()),
                None => {}
            }
            return;
        }
        let expected = match self.state {
            ServerState::AwaitSetup => "setup or job",
            ServerState::AwaitStart => "start",
            ServerState::AwaitDone => "done",
            _ => "nothing",
        };
        let Some(m) = self.core.common(frame, expected) else {
            return;
        };
        match (self.state, m) {
            (ServerState::AwaitSetup, Message::Setup { spec }) => {
                self.state = ServerState::Preparing;
                self.core
                    .arm(now, d.setup, "the server to prepare the test");
                self.spec = Some((*spec).clone());
                self.core.events.push_back(Event::SetupRequested(spec));
            }
            (ServerState::AwaitSetup, Message::Job { job }) => {
                self.state = ServerState::RunningJob;
                self.core
                    .arm(now, job_deadline(&job, &d), "the job to finish");
                self.core.events.push_back(Event::JobRequested(job));
            }
            (ServerState::AwaitStart, Message::Start) => {
                self.state = ServerState::Running;
                let len = self.spec.as_ref().map(|s| s.deadline()).unwrap_or_default();
                self.core
                    .arm(now, len.saturating_add(d.grace), "the test to finish");
                self.core.events.push_back(Event::StartRequested);
            }
            (ServerState::AwaitDone, Message::Done) => self.core.finish(),
            (_, m) => self.core.unexpected(expected, m.name()),
        }
    }

    /// Accepts the requested setup.
    pub fn accept_setup(&mut self, now: Nanos, ack: SetupAck) {
        if self.core.over || self.state != ServerState::Preparing {
            return;
        }
        self.core.send(Message::SetupAck(Box::new(ack)));
        self.state = ServerState::AwaitStart;
        self.core
            .arm(now, self.deadlines.connect, "start (data connections)");
    }

    /// Refuses the requested setup (bad spec, busy) and ends the session.
    pub fn reject(
        &mut self,
        _now: Nanos,
        code: ErrorCode,
        message: String,
        retry_after_ms: Option<u64>,
    ) {
        if self.core.over {
            return;
        }
        self.core.send(Message::Error {
            code,
            message,
            retry_after_ms,
        });
        self.core.over = true;
        self.core.deadline = None;
    }

    /// The job ran: sends its report.
    pub fn job_done(&mut self, now: Nanos, report: JobReport) {
        if self.core.over || self.state != ServerState::RunningJob {
            return;
        }
        self.core.send(Message::JobResult(Box::new(report)));
        self.state = ServerState::AwaitDone;
        self.core.arm(now, self.deadlines.done, "done");
    }

    /// The test ran; sends the server's results.
    pub fn finish(&mut self, now: Nanos, result: SideResult) {
        if self.core.over || self.state != ServerState::Running {
            return;
        }
        self.core.send(Message::Results {
            result: Box::new(result),
        });
        self.state = ServerState::AwaitDone;
        self.core.arm(now, self.deadlines.done, "done");
    }
}

endpoint_impl!(ServerSession);
