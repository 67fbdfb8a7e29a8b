//! The client's (or controller's) side of a control connection.

use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

use crate::auth::{self, Sealer, Side, LEN};
use crate::frame::{Frame, FrameError, Hello};
use crate::message::{ErrorCode, Hex32, Job, Message};

use super::common::*;
use super::server::job_deadline;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientState {
    AwaitHello,
    AwaitChallenge,
    AwaitAuthOk,
    AwaitAck,
    Connecting,
    Running,
    /// A controller waits for an agent's job report.
    AwaitJob,
}

/// The client's side of the control connection.
#[derive(Debug)]
pub struct ClientSession {
    core: Core,
    state: ClientState,
    deadlines: Deadlines,
    spec: TestSpec,
    /// A controller's job for an agent, asked for instead of a setup.
    job: Option<Box<Job>>,
    auth: Option<Auth>,
    server_nonce: [u8; LEN],
}

impl ClientSession {
    /// A session that will ask for `spec`; queues the hello. With `auth`, it
    /// insists on a server that proves it holds the same key.
    pub fn new(
        now: Nanos,
        spec: TestSpec,
        deadlines: Deadlines,
        auth: Option<Auth>,
    ) -> ClientSession {
        let mut core = Core::default();
        let mut hello = Hello::ours();
        if auth.is_some() {
            hello.caps |= Hello::CAP_AUTH;
        }
        core.out.push_back(Frame::Hello(hello));
        // An iperf3 cookie's length in all: an `iperf3 -s` answers at once.
        core.out.push_back(Frame::opening_pad());
        core.arm(now, deadlines.hello, "the server's hello");
        ClientSession {
            core,
            state: ClientState::AwaitHello,
            deadlines,
            spec,
            job: None,
            auth,
            server_nonce: [0; LEN],
        }
    }

    /// A controller's session that asks an agent to run `job` and waits for its
    /// report ([`Event::JobDone`]).
    pub fn job(now: Nanos, job: Job, deadlines: Deadlines, auth: Option<Auth>) -> ClientSession {
        let mut s = ClientSession::new(now, job.spec.clone(), deadlines, auth);
        s.job = Some(Box::new(job));
        s
    }

    fn send_setup(&mut self, now: Nanos) {
        if let Some(job) = &self.job {
            let wait = job_deadline(job, &self.deadlines);
            self.core.send(Message::Job { job: job.clone() });
            self.state = ClientState::AwaitJob;
            self.core.arm(now, wait, "the agent's job report");
            return;
        }
        self.core.send(Message::Setup {
            spec: Box::new(self.spec.clone()),
        });
        self.state = ClientState::AwaitAck;
        self.core
            .arm(now, self.deadlines.setup, "the server to accept the test");
    }

    common_api!();

    /// Feeds one decoded frame.
    pub fn handle_frame(&mut self, now: Nanos, frame: Frame) {
        if self.core.over {
            return;
        }
        let d = self.deadlines;
        if self.state == ClientState::AwaitHello {
            match frame {
                Frame::Hello(h) if h.version != crate::PROTOCOL_VERSION => {
                    self.core.fail(ProtoError::VersionMismatch {
                        ours: crate::PROTOCOL_VERSION,
                        theirs: h.version,
                    });
                }
                Frame::Hello(h) => {
                    let server_auth = h.caps & Hello::CAP_AUTH != 0;
                    match (server_auth, self.auth.is_some()) {
                        (false, false) => self.send_setup(now),
                        (true, true) => {
                            self.state = ClientState::AwaitChallenge;
                            self.core.arm(now, d.hello, "the server's challenge");
                        }
                        (true, false) => self.core.fail(ProtoError::ServerNeedsKey),
                        (false, true) => self.core.fail(ProtoError::ServerNotAuthenticating),
                    }
                }
                other => {
                    if let Some(m) = self.core.common(other, "hello") {
                        self.core.unexpected("hello", m.name());
                    }
                }
            }
            return;
        }
        let Some(frame) = self.core.unseal(frame) else {
            return;
        };
        match self.state {
            ClientState::AwaitChallenge => {
                match self.core.common(frame, "auth-challenge") {
                    Some(Message::AuthChallenge { nonce }) => {
                        let (key, cn) = self.auth.as_ref().expect("keyed");
                        let proof = Hex32(auth::client_proof(key, &nonce.0, cn));
                        self.server_nonce = nonce.0;
                        let cn = Hex32(*cn);
                        self.core.send(Message::AuthResponse { nonce: cn, proof });
                        self.state = ClientState::AwaitAuthOk;
                        self.core.arm(now, d.hello, "the server's proof");
                    }
                    Some(m) => self.core.unexpected("auth-challenge", m.name()),
                    None => {}
                }
                return;
            }
            ClientState::AwaitAuthOk => {
                match self.core.common(frame, "auth-ok") {
                    Some(Message::AuthOk { proof }) => {
                        let (key, cn) = self.auth.as_ref().expect("keyed");
                        if auth::check_server_proof(key, &self.server_nonce, cn, &proof.0) {
                            self.core.sealer =
                                Some(Sealer::new(key, &self.server_nonce, cn, Side::Client));
                            self.send_setup(now);
                        } else {
                            self.core.fail(ProtoError::AuthFailed);
                        }
                    }
                    Some(m) => self.core.unexpected("auth-ok", m.name()),
                    None => {}
                }
                return;
            }
            _ => {}
        }
        let expected = match self.state {
            ClientState::AwaitAck => "setup-ack",
            ClientState::Running => "results",
            ClientState::AwaitJob => "job-result",
            _ => "nothing",
        };
        let Some(m) = self.core.common(frame, expected) else {
            return;
        };
        match (self.state, m) {
            (ClientState::AwaitAck, Message::SetupAck(ack)) => {
                self.state = ClientState::Connecting;
                self.core.arm(now, d.connect, "data connections");
                self.core.events.push_back(Event::SetupAcked(ack));
            }
            (ClientState::Running, Message::Results { result }) => {
                self.core.events.push_back(Event::Results(result));
                self.core.send(Message::Done);
                self.core.finish();
            }
            (ClientState::AwaitJob, Message::JobResult(report)) => {
                self.core.events.push_back(Event::JobDone(report));
                self.core.send(Message::Done);
                self.core.finish();
            }
            (_, m) => self.core.unexpected(expected, m.name()),
        }
    }

    /// Every data flow is connected: tells the server to start.
    pub fn start(&mut self, now: Nanos) {
        if self.core.over || self.state != ClientState::Connecting {
            return;
        }
        self.core.send(Message::Start);
        self.state = ClientState::Running;
        let len = self.spec.deadline().saturating_add(self.deadlines.grace);
        self.core.arm(now, len, "the server's results");
    }
}

endpoint_impl!(ClientSession);
