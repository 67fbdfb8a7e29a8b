//! What both session machines share: deadlines, errors, events, the sealed
//! frame queue, and the driver-facing API.

use std::collections::VecDeque;

use netsonde_model::result::SideResult;
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

use crate::auth::{Key, OpenError, Sealer, LEN};
use crate::frame::{decode_message, Frame, FrameError};
use crate::message::{ErrorCode, Job, JobReport, Message, SetupAck};

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
pub(crate) struct Core {
    pub(crate) out: VecDeque<Frame>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) deadline: Option<(Nanos, &'static str)>,
    pub(crate) over: bool,
    /// Set once authenticated: seals every later frame and opens the peer's.
    pub(crate) sealer: Option<Sealer>,
}

impl Core {
    pub(crate) fn send(&mut self, m: Message) {
        let frame = match &mut self.sealer {
            Some(s) => Frame::Sealed(s.seal(&serde_json::to_vec(&m).expect("messages serialize"))),
            None => Frame::Message(m),
        };
        self.out.push_back(frame);
    }

    /// Opens a sealed frame; refuses an unsealed message after authentication and a
    /// sealed one before it.
    pub(crate) fn unseal(&mut self, frame: Frame) -> Option<Frame> {
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

    pub(crate) fn arm(&mut self, now: Nanos, after: Nanos, phase: &'static str) {
        self.deadline = Some((now.saturating_add(after), phase));
    }

    pub(crate) fn fail(&mut self, e: ProtoError) {
        if !self.over {
            self.over = true;
            self.deadline = None;
            self.events.push_back(Event::Failed(e));
        }
    }

    pub(crate) fn finish(&mut self) {
        self.over = true;
        self.deadline = None;
        self.events.push_back(Event::Finished);
    }

    pub(crate) fn error_frame(&mut self, code: ErrorCode, message: String) {
        self.send(Message::Error {
            code,
            message,
            retry_after_ms: None,
        });
    }

    pub(crate) fn timeout(&mut self, now: Nanos) {
        if let Some((at, phase)) = self.deadline {
            if now >= at {
                self.error_frame(ErrorCode::Timeout, format!("timed out waiting for {phase}"));
                self.fail(ProtoError::Deadline { phase });
            }
        }
    }

    pub(crate) fn eof(&mut self) {
        if let Some((_, phase)) = self.deadline {
            self.fail(ProtoError::PeerClosed { phase });
        } else if !self.over {
            self.fail(ProtoError::PeerClosed { phase: "anything" });
        }
    }

    /// Handles what every state treats alike; returns the message if it is not that.
    pub(crate) fn common(&mut self, frame: Frame, expected: &'static str) -> Option<Message> {
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
            // The decoder skips padding; one handed in here is ignored.
            Frame::Pad(_) => None,
        }
    }

    pub(crate) fn unexpected(&mut self, expected: &'static str, got: &'static str) {
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
