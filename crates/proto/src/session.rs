//! The two session state machines.
//!
//! Each machine is driven by four kinds of input and yields three kinds of output:
//!
//! | input | output |
//! |---|---|
//! | `handle_frame(now, frame)` | `poll_transmit()`: frames to write, in order |
//! | `handle_timeout(now)` when `poll_timeout()` has passed | `poll_event()`: what the driver must act on |
//! | `handle_eof(now)` when the peer closed | `poll_timeout()`: the current phase's deadline |
//! | driver decisions (`accept_setup`, `start`, `finish`, `reject`, `abort`) | `is_over()` |
//!
//! Every phase has a deadline ([`Deadlines`]); when one passes, the machine sends an
//! `Error { code: Timeout }` to the peer and reports [`Event::Failed`]. A machine that
//! is over ignores further input.
//!
//! ```text
//! client                         server
//!   Hello ─────────────────────▶  (version check)
//!         ◀──────────────────── Hello        [or Hello + Error(version-mismatch)]
//!   Setup{spec} ───────────────▶  Event::SetupRequested → accept_setup / reject
//!         ◀──────────────────── SetupAck{token, ports, host} | Error(busy|bad-spec)
//!   (data connections, each opening with the token preamble)
//!   Start ─────────────────────▶  Event::StartRequested; both ends run the test
//!         ◀──────────────────── Results{server side}  (after finish())
//!   Done ──────────────────────▶  over
//! ```

use std::collections::VecDeque;

use netsonde_model::result::SideResult;
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

use crate::auth::{self, Key, OpenError, Sealer, Side, LEN};
use crate::frame::{decode_message, Frame, FrameError, Hello};
use crate::message::{ErrorCode, Hex32, Job, JobReport, Message, SetupAck, MAX_START_DELAY};

/// A key and this end's fresh nonce (drawn by the caller: this crate has no
/// randomness).
pub type Auth = (Key, [u8; LEN]);

/// How long each phase may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// From connection to the peer's hello.
    pub hello: Nanos,
    /// From hello to setup (server), from setup to its answer (client), and for the
    /// server's driver to accept or reject a setup.
    pub setup: Nanos,
    /// From setup-ack to start: connecting the data flows.
    pub connect: Nanos,
    /// Beyond the test's own length (`TestSpec::deadline`) for results to arrive.
    pub grace: Nanos,
    /// From results to the client's done.
    pub done: Nanos,
}

impl Default for Deadlines {
    fn default() -> Deadlines {
        Deadlines {
            hello: Nanos::from_secs(5),
            setup: Nanos::from_secs(10),
            connect: Nanos::from_secs(10),
            grace: Nanos::from_secs(10),
            done: Nanos::from_secs(5),
        }
    }
}

/// Why a session ended early.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProtoError {
    /// Bytes that do not decode.
    #[error("bad frame from peer: {0}")]
    Frame(#[from] FrameError),
    /// The two ends speak different protocol versions.
    #[error("protocol version mismatch: this end speaks version {ours}, the peer speaks version {theirs}; run the same netsonde release on both ends")]
    VersionMismatch {
        /// Ours.
        ours: u16,
        /// The peer's.
        theirs: u16,
    },
    /// A frame the current phase does not allow.
    #[error("protocol error: expected {expected}, got {got}")]
    Unexpected {
        /// What the phase waits for.
        expected: &'static str,
        /// What came.
        got: &'static str,
    },
    /// A phase's deadline passed.
    #[error("timed out waiting for {phase}")]
    Deadline {
        /// The phase.
        phase: &'static str,
    },
    /// The peer reported an error and ended the session.
    #[error("peer ended the session: {message}")]
    Remote {
        /// Its reason.
        code: ErrorCode,
        /// Its words.
        message: String,
        /// For `Busy`, when to retry.
        retry_after_ms: Option<u64>,
    },
    /// This server needs a key and the client offered none.
    #[error("authentication required: this server was started with --auth-key and the client has no key")]
    ClientHasNoKey,
    /// The server needs a key and this client has none.
    #[error("authentication required: the server needs a key; pass --auth-key FILE with the server's key")]
    ServerNeedsKey,
    /// This client has a key and the server does not authenticate.
    #[error("the server does not authenticate (it was started without --auth-key); refusing to run unauthenticated")]
    ServerNotAuthenticating,
    /// The peer's proof of the key is wrong.
    #[error("authentication failed: the peer does not hold the same key")]
    AuthFailed,
    /// A frame failed its integrity check after authentication.
    #[error("{0}")]
    Integrity(#[from] OpenError),
    /// The peer closed the control connection early.
    #[error("peer closed the control connection while waiting for {phase}")]
    PeerClosed {
        /// The phase.
        phase: &'static str,
    },
}

/// What the driver must act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Server: a client asks for this test. Answer with `accept_setup` or `reject`.
    SetupRequested(Box<TestSpec>),
    /// Server: the client connected its flows; run the test, then call `finish`.
    StartRequested,
    /// Client: the server accepted; connect the data flows, then call `start`.
    SetupAcked(Box<SetupAck>),
    /// Client: the server's results.
    Results(Box<SideResult>),
    /// Agent: a controller asks for this job. Run it and answer with
    /// `job_done`, or `reject`/`abort`.
    JobRequested(Box<Job>),
    /// Controller: the agent's report of the job.
    JobDone(Box<JobReport>),
    /// The session ended early; transmit what is queued and close.
    Failed(ProtoError),
    /// The session ended normally.
    Finished,
}

/// State shared by both machines: outgoing frames, events and the deadline.
#[derive(Debug, Default)]
struct Core {
    out: VecDeque<Frame>,
    events: VecDeque<Event>,
    deadline: Option<(Nanos, &'static str)>,
    over: bool,
    /// Set once authenticated: seals every later frame and opens the peer's.
    sealer: Option<Sealer>,
}

impl Core {
    fn send(&mut self, m: Message) {
        let frame = match &mut self.sealer {
            Some(s) => Frame::Sealed(s.seal(&serde_json::to_vec(&m).expect("messages serialize"))),
            None => Frame::Message(m),
        };
        self.out.push_back(frame);
    }

    /// Opens a sealed frame; refuses an unsealed message after authentication and a
    /// sealed one before it.
    fn unseal(&mut self, frame: Frame) -> Option<Frame> {
        match (frame, &mut self.sealer) {
            (Frame::Sealed(body), Some(s)) => match s.open(&body).map(decode_message) {
                Ok(Ok(m)) => Some(Frame::Message(m)),
                Ok(Err(e)) => {
                    self.error_frame(ErrorCode::Protocol, e.to_string());
                    self.fail(ProtoError::Frame(e));
                    None
                }
                Err(e) => {
                    self.error_frame(ErrorCode::AuthFailed, e.to_string());
                    self.fail(ProtoError::Integrity(e));
                    None
                }
            },
            (Frame::Sealed(_), None) => {
                self.unexpected("an unsealed frame", "a sealed frame");
                None
            }
            (Frame::Message(_), Some(_)) => {
                let e = OpenError::Mac;
                self.error_frame(
                    ErrorCode::AuthFailed,
                    "unsealed frame after authentication".into(),
                );
                self.fail(ProtoError::Integrity(e));
                None
            }
            (f, _) => Some(f),
        }
    }

    fn arm(&mut self, now: Nanos, after: Nanos, phase: &'static str) {
        self.deadline = Some((now.saturating_add(after), phase));
    }

    fn fail(&mut self, e: ProtoError) {
        if !self.over {
            self.over = true;
            self.deadline = None;
            self.events.push_back(Event::Failed(e));
        }
    }

    fn finish(&mut self) {
        self.over = true;
        self.deadline = None;
        self.events.push_back(Event::Finished);
    }

    fn error_frame(&mut self, code: ErrorCode, message: String) {
        self.send(Message::Error {
            code,
            message,
            retry_after_ms: None,
        });
    }

    fn timeout(&mut self, now: Nanos) {
        if let Some((at, phase)) = self.deadline {
            if now >= at {
                self.error_frame(ErrorCode::Timeout, format!("timed out waiting for {phase}"));
                self.fail(ProtoError::Deadline { phase });
            }
        }
    }

    fn eof(&mut self) {
        if let Some((_, phase)) = self.deadline {
            self.fail(ProtoError::PeerClosed { phase });
        } else if !self.over {
            self.fail(ProtoError::PeerClosed { phase: "anything" });
        }
    }

    /// Handles what every state treats alike; returns the message if it is not that.
    fn common(&mut self, frame: Frame, expected: &'static str) -> Option<Message> {
        match frame {
            Frame::Message(Message::Error {
                code,
                message,
                retry_after_ms,
            }) => {
                self.fail(ProtoError::Remote {
                    code,
                    message,
                    retry_after_ms,
                });
                None
            }
            Frame::Message(m) => Some(m),
            Frame::Hello(_) => {
                self.unexpected(expected, "hello");
                None
            }
            Frame::Sealed(_) => {
                self.unexpected(expected, "a sealed frame");
                None
            }
        }
    }

    fn unexpected(&mut self, expected: &'static str, got: &'static str) {
        self.error_frame(
            ErrorCode::Protocol,
            format!("protocol error: expected {expected}, got {got}"),
        );
        self.fail(ProtoError::Unexpected { expected, got });
    }
}

macro_rules! common_api {
    () => {
        /// The next frame to write.
        pub fn poll_transmit(&mut self) -> Option<Frame> {
            self.core.out.pop_front()
        }

        /// The next event for the driver.
        pub fn poll_event(&mut self) -> Option<Event> {
            self.core.events.pop_front()
        }

        /// When `handle_timeout` must be called next.
        pub fn poll_timeout(&self) -> Option<Nanos> {
            self.core.deadline.map(|(at, _)| at)
        }

        /// Call when `poll_timeout` has passed.
        pub fn handle_timeout(&mut self, now: Nanos) {
            self.core.timeout(now);
        }

        /// Call when the peer closed the connection (after `FrameDecoder::finish`).
        pub fn handle_eof(&mut self, _now: Nanos) {
            self.core.eof();
        }

        /// Call when the bytes from the peer did not decode.
        pub fn handle_decode_error(&mut self, _now: Nanos, e: FrameError) {
            if !self.core.over {
                self.core.error_frame(ErrorCode::Protocol, e.to_string());
                self.core.fail(ProtoError::Frame(e));
            }
        }

        /// Ends the session from this side with an error for the peer.
        pub fn abort(&mut self, _now: Nanos, code: ErrorCode, message: String) {
            if !self.core.over {
                self.core.error_frame(code, message.clone());
                self.core.fail(ProtoError::Remote {
                    code,
                    message,
                    retry_after_ms: None,
                });
            }
        }

        /// Whether the session has ended (normally or not).
        pub fn is_over(&self) -> bool {
            self.core.over
        }
    };
}

/// What a driver needs from either session to pump it over a connection.
pub trait Endpoint {
    /// The next frame to write.
    fn poll_transmit(&mut self) -> Option<Frame>;
    /// The next event.
    fn poll_event(&mut self) -> Option<Event>;
    /// The current deadline.
    fn poll_timeout(&self) -> Option<Nanos>;
    /// Feeds a frame.
    fn handle_frame(&mut self, now: Nanos, frame: Frame);
    /// Fires a passed deadline.
    fn handle_timeout(&mut self, now: Nanos);
    /// The peer closed.
    fn handle_eof(&mut self, now: Nanos);
    /// Undecodable bytes.
    fn handle_decode_error(&mut self, now: Nanos, e: FrameError);
    /// Whether the session ended.
    fn is_over(&self) -> bool;
}

macro_rules! endpoint_impl {
    ($t:ty) => {
        impl Endpoint for $t {
            fn poll_transmit(&mut self) -> Option<Frame> {
                <$t>::poll_transmit(self)
            }
            fn poll_event(&mut self) -> Option<Event> {
                <$t>::poll_event(self)
            }
            fn poll_timeout(&self) -> Option<Nanos> {
                <$t>::poll_timeout(self)
            }
            fn handle_frame(&mut self, now: Nanos, frame: Frame) {
                <$t>::handle_frame(self, now, frame)
            }
            fn handle_timeout(&mut self, now: Nanos) {
                <$t>::handle_timeout(self, now)
            }
            fn handle_eof(&mut self, now: Nanos) {
                <$t>::handle_eof(self, now)
            }
            fn handle_decode_error(&mut self, now: Nanos, e: FrameError) {
                <$t>::handle_decode_error(self, now, e)
            }
            fn is_over(&self) -> bool {
                <$t>::is_over(self)
            }
        }
    };
}

endpoint_impl!(ServerSession);
endpoint_impl!(ClientSession);

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

#[cfg(test)]
mod tests;
