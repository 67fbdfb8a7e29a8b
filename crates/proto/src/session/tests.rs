//! A deterministic simulator: a client and a server session exchanging encoded
//! bytes in memory, with virtual time stepped by the test (after quinn's `Pair`).

use super::common::*;
use super::*;
use crate::frame::FrameDecoder;
use crate::frame::{Frame, Hello};
use crate::message::Token;
use crate::message::{ErrorCode, Job, JobReport, Message, SetupAck};
use netsonde_model::host::HostFacts;
use netsonde_model::result::SideResult;
use netsonde_model::spec::TestKind;
use netsonde_model::spec::TestSpec;
use netsonde_model::units::Nanos;

struct Pair {
    now: Nanos,
    client: ClientSession,
    server: ServerSession,
    to_server: FrameDecoder,
    to_client: FrameDecoder,
    client_events: Vec<Event>,
    server_events: Vec<Event>,
}

impl Pair {
    fn new(spec: TestSpec) -> Pair {
        Pair::keyed(spec, None, None)
    }

    fn keyed(spec: TestSpec, server_key: Option<[u8; 32]>, client_key: Option<[u8; 32]>) -> Pair {
        let now = Nanos::from_secs(1000);
        let sa = server_key.map(|k| (crate::auth::Key(k), [0x51; 32]));
        let ca = client_key.map(|k| (crate::auth::Key(k), [0xc1; 32]));
        Pair {
            now,
            client: ClientSession::new(now, spec, Deadlines::default(), ca),
            server: ServerSession::new(now, Deadlines::default(), sa),
            to_server: FrameDecoder::new(),
            to_client: FrameDecoder::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
        }
    }

    /// Moves every queued frame across as bytes until both sides are quiet.
    fn drive(&mut self) {
        loop {
            let mut moved = false;
            while let Some(f) = self.client.poll_transmit() {
                self.to_server.push(&f.to_bytes());
                moved = true;
            }
            while let Some(f) = self.server.poll_transmit() {
                self.to_client.push(&f.to_bytes());
                moved = true;
            }
            while let Some(f) = self.to_server.next_frame().unwrap() {
                self.server.handle_frame(self.now, f);
            }
            while let Some(f) = self.to_client.next_frame().unwrap() {
                self.client.handle_frame(self.now, f);
            }
            while let Some(e) = self.client.poll_event() {
                self.client_events.push(e);
            }
            while let Some(e) = self.server.poll_event() {
                self.server_events.push(e);
            }
            if !moved {
                break;
            }
        }
    }

    /// Steps virtual time and fires whatever deadline passed.
    fn step(&mut self, by: Nanos) {
        self.now = self.now.saturating_add(by);
        if self.client.poll_timeout().is_some_and(|t| t <= self.now) {
            self.client.handle_timeout(self.now);
        }
        if self.server.poll_timeout().is_some_and(|t| t <= self.now) {
            self.server.handle_timeout(self.now);
        }
        self.drive();
    }
}

fn ack() -> SetupAck {
    SetupAck {
        token: Token([1; 16]),
        data_port: 6000,
        udp_ports: vec![],
        host: HostFacts::default(),
        socket: None,
    }
}

fn side() -> SideResult {
    SideResult {
        tcp_samples: Vec::new(),
        host: HostFacts::default(),
        flows: vec![],
        cpu: None,
        socket: None,
    }
}

#[test]
fn whole_session() {
    let spec = TestSpec::new(TestKind::TcpStream);
    let mut p = Pair::new(spec.clone());
    p.drive();
    assert_eq!(p.server_events, vec![Event::SetupRequested(Box::new(spec))]);
    p.server.accept_setup(p.now, ack());
    p.drive();
    assert_eq!(p.client_events, vec![Event::SetupAcked(Box::new(ack()))]);
    p.client.start(p.now);
    p.drive();
    assert_eq!(p.server_events.last(), Some(&Event::StartRequested));
    // The test runs for its 10 s in virtual time; nobody times out.
    p.step(Nanos::from_secs(10));
    assert!(!p.client.is_over() && !p.server.is_over());
    p.server.finish(p.now, side());
    p.drive();
    assert_eq!(
        p.client_events[1..],
        [Event::Results(Box::new(side())), Event::Finished]
    );
    assert_eq!(p.server_events.last(), Some(&Event::Finished));
    assert!(p.client.is_over() && p.server.is_over());
    assert_eq!(p.client.poll_timeout(), None);
}

#[test]
fn version_mismatch_is_clear_on_both_sides() {
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default(), None);
    server.handle_frame(
        Nanos::ZERO,
        Frame::Hello(Hello {
            version: 99,
            caps: 0,
        }),
    );
    let Some(Event::Failed(e)) = server.poll_event() else {
        panic!("server must fail")
    };
    assert!(e.to_string().contains("peer speaks version 99"), "{e}");
    // The server still sends its hello (so the client learns the version) and an error.
    assert!(matches!(server.poll_transmit(), Some(Frame::Hello(_))));
    assert!(matches!(
        server.poll_transmit(),
        Some(Frame::Message(Message::Error {
            code: ErrorCode::VersionMismatch,
            ..
        }))
    ));

    let mut client = ClientSession::new(
        Nanos::ZERO,
        TestSpec::new(TestKind::TcpRr),
        Deadlines::default(),
        None,
    );
    client.handle_frame(
        Nanos::ZERO,
        Frame::Hello(Hello {
            version: 7,
            caps: 0,
        }),
    );
    let Some(Event::Failed(e)) = client.poll_event() else {
        panic!("client must fail")
    };
    assert_eq!(
        e,
        ProtoError::VersionMismatch {
            ours: crate::PROTOCOL_VERSION,
            theirs: 7
        }
    );
}

#[test]
fn missed_deadline_fails_both_ends() {
    let spec = TestSpec::new(TestKind::TcpStream);
    let mut p = Pair::new(spec);
    p.drive();
    p.server.accept_setup(p.now, ack());
    p.drive();
    // The client never connects its flows nor sends start.
    p.step(Nanos::from_secs(9));
    assert!(!p.server.is_over());
    p.step(Nanos::from_secs(2));
    assert!(p.server.is_over());
    assert!(matches!(
        p.server_events.last(),
        Some(Event::Failed(ProtoError::Deadline { .. }))
    ));
    // The client's own connect deadline is the same length; it fails too and says
    // what it was waiting for.
    match p.client_events.last() {
        Some(Event::Failed(ProtoError::Deadline { phase })) => {
            assert_eq!(*phase, "data connections")
        }
        Some(Event::Failed(ProtoError::Remote { code, message, .. })) => {
            assert_eq!(*code, ErrorCode::Timeout);
            assert!(message.contains("start"), "{message}");
        }
        other => panic!("client saw {other:?}"),
    }
}

#[test]
fn server_tells_client_why_it_timed_out() {
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default(), None);
    server.handle_frame(Nanos::ZERO, Frame::Hello(Hello::ours()));
    assert!(matches!(server.poll_transmit(), Some(Frame::Hello(_))));
    server.handle_timeout(Nanos::from_secs(11));
    match server.poll_transmit() {
        Some(Frame::Message(Message::Error { code, message, .. })) => {
            assert_eq!(code, ErrorCode::Timeout);
            assert_eq!(message, "timed out waiting for setup");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn silent_client_times_out_at_hello() {
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default(), None);
    assert_eq!(s.poll_timeout(), Some(Nanos::from_secs(5)));
    s.handle_timeout(Nanos::from_secs(4));
    assert!(!s.is_over());
    s.handle_timeout(Nanos::from_secs(5));
    assert!(s.is_over());
}

#[test]
fn running_test_that_never_finishes_times_out() {
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.duration = Nanos::from_secs(3);
    let mut p = Pair::new(spec);
    p.drive();
    p.server.accept_setup(p.now, ack());
    p.drive();
    p.client.start(p.now);
    p.drive();
    // 3 s test + 10 s allowance + 10 s grace: both give up then, not before.
    p.step(Nanos::from_secs(22));
    assert!(!p.client.is_over());
    p.step(Nanos::from_secs(2));
    assert!(p.client.is_over() && p.server.is_over());
}

#[test]
fn unexpected_message_is_a_protocol_error() {
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default(), None);
    s.handle_frame(Nanos::ZERO, Frame::Message(Message::Start));
    assert!(matches!(
        s.poll_event(),
        Some(Event::Failed(ProtoError::Unexpected {
            expected: "hello",
            got: "start"
        }))
    ));
}

#[test]
fn busy_rejection_reaches_client() {
    let mut p = Pair::new(TestSpec::new(TestKind::TcpRr));
    p.drive();
    p.server.reject(
        p.now,
        ErrorCode::Busy,
        "busy, try again in 3 s".into(),
        Some(3000),
    );
    p.drive();
    assert!(p.server.is_over());
    assert!(matches!(
        p.client_events.last(),
        Some(Event::Failed(ProtoError::Remote {
            code: ErrorCode::Busy,
            retry_after_ms: Some(3000),
            ..
        }))
    ));
}

#[test]
fn peer_vanishing_mid_test() {
    let mut p = Pair::new(TestSpec::new(TestKind::TcpStream));
    p.drive();
    p.server.accept_setup(p.now, ack());
    p.drive();
    p.client.start(p.now);
    p.drive();
    p.client.handle_eof(p.now);
    match p.client.poll_event() {
        Some(Event::Failed(e)) => assert!(e.to_string().contains("closed"), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn truncated_frame_is_reported_to_peer() {
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default(), None);
    let mut d = FrameDecoder::new();
    let bytes = Frame::Hello(Hello::ours()).to_bytes();
    d.push(&bytes[..10]);
    assert_eq!(d.next_frame(), Ok(None));
    let e = d.finish().unwrap_err();
    s.handle_decode_error(Nanos::ZERO, e.clone());
    assert_eq!(s.poll_event(), Some(Event::Failed(ProtoError::Frame(e))));
    assert!(matches!(
        s.poll_transmit(),
        Some(Frame::Message(Message::Error {
            code: ErrorCode::Protocol,
            ..
        }))
    ));
}

/// Drives a keyed session to its end, returning every frame the client sent.
fn keyed_session(p: &mut Pair) -> Vec<Frame> {
    let mut sent = Vec::new();
    loop {
        let mut moved = false;
        while let Some(f) = p.client.poll_transmit() {
            sent.push(f.clone());
            p.to_server.push(&f.to_bytes());
            moved = true;
        }
        while let Some(f) = p.server.poll_transmit() {
            p.to_client.push(&f.to_bytes());
            moved = true;
        }
        while let Some(f) = p.to_server.next_frame().unwrap() {
            p.server.handle_frame(p.now, f);
        }
        while let Some(f) = p.to_client.next_frame().unwrap() {
            p.client.handle_frame(p.now, f);
        }
        while let Some(e) = p.server.poll_event() {
            match e {
                Event::SetupRequested(_) => p.server.accept_setup(p.now, ack()),
                Event::StartRequested => p.server.finish(p.now, side()),
                e => p.server_events.push(e),
            }
            moved = true;
        }
        while let Some(e) = p.client.poll_event() {
            if let Event::SetupAcked(_) = e {
                p.client.start(p.now);
            } else {
                p.client_events.push(e);
            }
            moved = true;
        }
        if !moved {
            return sent;
        }
    }
}

#[test]
fn keyed_session_authenticates_and_seals_everything_after() {
    let mut p = Pair::keyed(TestSpec::new(TestKind::TcpRr), Some([9; 32]), Some([9; 32]));
    let sent = keyed_session(&mut p);
    assert_eq!(p.client_events.last(), Some(&Event::Finished));
    assert_eq!(p.server_events.last(), Some(&Event::Finished));
    assert!(p.server.authenticated());
    // hello, padding, auth-response in the clear; setup, start, done sealed.
    assert!(matches!(sent[0], Frame::Hello(_)));
    assert_eq!(sent[1], Frame::opening_pad());
    assert!(matches!(
        sent[2],
        Frame::Message(Message::AuthResponse { .. })
    ));
    assert_eq!(sent.len(), 6);
    assert!(sent[3..].iter().all(|f| matches!(f, Frame::Sealed(_))));
}

#[test]
fn wrong_key_fails_before_any_setup() {
    let mut p = Pair::keyed(
        TestSpec::new(TestKind::TcpStream),
        Some([1; 32]),
        Some([2; 32]),
    );
    keyed_session(&mut p);
    assert_eq!(p.server_events, vec![Event::Failed(ProtoError::AuthFailed)]);
    assert!(
        p.server.spec().is_none(),
        "no setup may be seen before authentication"
    );
    match p.client_events.last() {
        Some(Event::Failed(ProtoError::Remote {
            code: ErrorCode::AuthFailed,
            ..
        })) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn key_mismatch_in_either_direction_is_named() {
    let mut p = Pair::keyed(TestSpec::new(TestKind::TcpStream), Some([1; 32]), None);
    keyed_session(&mut p);
    assert_eq!(
        p.server_events,
        vec![Event::Failed(ProtoError::ClientHasNoKey)]
    );
    assert_eq!(
        p.client_events.first(),
        Some(&Event::Failed(ProtoError::ServerNeedsKey))
    );
    let mut p = Pair::keyed(TestSpec::new(TestKind::TcpStream), None, Some([1; 32]));
    keyed_session(&mut p);
    assert_eq!(
        p.client_events.first(),
        Some(&Event::Failed(ProtoError::ServerNotAuthenticating))
    );
    assert!(p.server.spec().is_none());
}

#[test]
fn replayed_transcript_fails() {
    // Record a whole authenticated client transcript...
    let mut p = Pair::keyed(TestSpec::new(TestKind::TcpRr), Some([9; 32]), Some([9; 32]));
    let transcript = keyed_session(&mut p);
    // ...and replay it, byte for byte, against a new session with a fresh nonce.
    let key = crate::auth::Key([9; 32]);
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default(), Some((key, [0x52; 32])));
    for f in transcript {
        server.handle_frame(Nanos::ZERO, f);
    }
    let mut events = Vec::new();
    while let Some(e) = server.poll_event() {
        events.push(e);
    }
    assert_eq!(events, vec![Event::Failed(ProtoError::AuthFailed)]);
    assert!(server.spec().is_none());
}

#[test]
fn tampered_frame_mid_session_is_detected() {
    let mut p = Pair::keyed(
        TestSpec::new(TestKind::TcpStream),
        Some([9; 32]),
        Some([9; 32]),
    );
    // Run up to the point where the server waits for start.
    p.drive();
    p.server.accept_setup(p.now, ack());
    p.drive();
    // The client queues a sealed start; flip one bit of it in transit.
    p.client.start(p.now);
    let f = p.client.poll_transmit().unwrap();
    let Frame::Sealed(mut body) = f else {
        panic!("{f:?}")
    };
    body[12] ^= 0x01;
    p.server.handle_frame(p.now, Frame::Sealed(body));
    assert_eq!(
        p.server.poll_event(),
        Some(Event::Failed(ProtoError::Integrity(
            crate::auth::OpenError::Mac
        )))
    );
    // An unsealed frame injected after authentication is refused too.
    let mut p = Pair::keyed(
        TestSpec::new(TestKind::TcpStream),
        Some([9; 32]),
        Some([9; 32]),
    );
    p.drive();
    p.server.handle_frame(p.now, Frame::Message(Message::Start));
    let evs: Vec<_> = std::iter::from_fn(|| p.server.poll_event()).collect();
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::Failed(ProtoError::Integrity(_)))),
        "{evs:?}"
    );
}

fn job(secs: u64) -> Job {
    let mut spec = TestSpec::new(TestKind::TcpStream);
    spec.duration = Nanos::from_secs(secs);
    Job {
        target_host: "192.0.2.7".into(),
        target_port: 5300,
        spec,
        start_at_unix_ms: Some(1_800_000_000_000),
    }
}

fn job_pair(j: &Job, key: Option<[u8; 32]>) -> Pair {
    let now = Nanos::from_secs(1000);
    Pair {
        now,
        client: ClientSession::job(
            now,
            j.clone(),
            Deadlines::default(),
            key.map(|k| (crate::auth::Key(k), [0xc1; 32])),
        ),
        server: ServerSession::new(
            now,
            Deadlines::default(),
            key.map(|k| (crate::auth::Key(k), [0x51; 32])),
        ),
        to_server: FrameDecoder::new(),
        to_client: FrameDecoder::new(),
        client_events: Vec::new(),
        server_events: Vec::new(),
    }
}

#[test]
fn an_agent_runs_a_job_and_the_controller_gets_its_report() {
    let j = job(3);
    let mut p = job_pair(&j, Some([9; 32]));
    p.drive();
    assert!(p.server.authenticated());
    assert_eq!(
        p.server_events,
        vec![Event::JobRequested(Box::new(j.clone()))]
    );
    let report = JobReport {
        report: netsonde_model::result::TestReport::assemble(
            j.spec.clone(),
            "192.0.2.7:5300".into(),
            side(),
            side(),
            vec![],
            None,
        ),
        started_unix_ms: 1_800_000_000_003,
    };
    p.step(Nanos::from_secs(3));
    p.server.job_done(p.now, report.clone());
    p.drive();
    assert_eq!(
        p.client_events,
        [Event::JobDone(Box::new(report)), Event::Finished]
    );
    assert_eq!(p.server_events.last(), Some(&Event::Finished));
    assert!(p.client.is_over() && p.server.is_over());
}

#[test]
fn a_job_that_never_reports_times_out_on_both_ends() {
    let j = job(3);
    let mut p = job_pair(&j, None);
    p.drive();
    let wait = job_deadline(&j, &Deadlines::default());
    // The test's own deadline, a client's hello, setup, connect and grace
    // (5+10+10+10 s) and the 10 s a start may be set ahead.
    assert_eq!(wait, j.spec.deadline().saturating_add(Nanos::from_secs(45)));
    p.step(Nanos(wait.0 - 1_000_000_000));
    assert!(!p.client.is_over() && !p.server.is_over());
    p.step(Nanos::from_secs(1));
    assert!(p.client.is_over() && p.server.is_over());
    assert!(matches!(
        p.client_events.last(),
        Some(
            Event::Failed(ProtoError::Remote {
                code: ErrorCode::Timeout,
                ..
            }) | Event::Failed(ProtoError::Deadline { .. })
        )
    ));
}

#[test]
fn a_refused_job_reaches_the_controller_with_its_reason() {
    let j = job(1);
    let mut p = job_pair(&j, None);
    p.drive();
    p.server.reject(
        p.now,
        ErrorCode::BadSpec,
        "this is a netsonde server, not an agent".into(),
        None,
    );
    p.drive();
    assert!(matches!(
        p.client_events.last(),
        Some(Event::Failed(ProtoError::Remote { code: ErrorCode::BadSpec, message, .. }))
            if message.contains("not an agent")
    ));
    // A job is asked for instead of a setup, never during one.
    let mut p = Pair::new(TestSpec::new(TestKind::TcpStream));
    p.drive();
    p.server
        .handle_frame(p.now, Frame::Message(Message::Job { job: Box::new(j) }));
    p.drive();
    assert!(matches!(
        p.server_events.last(),
        Some(Event::Failed(ProtoError::Unexpected { got: "job", .. }))
    ));
}
