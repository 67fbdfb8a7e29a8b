//! A deterministic simulator: a client and a server session exchanging encoded
//! bytes in memory, with virtual time stepped by the test (after quinn's `Pair`).

use super::*;
use crate::frame::FrameDecoder;
use crate::message::Token;
use netsonde_model::host::HostFacts;
use netsonde_model::spec::TestKind;

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
        let now = Nanos::from_secs(1000);
        Pair {
            now,
            client: ClientSession::new(now, spec, Deadlines::default()),
            server: ServerSession::new(now, Deadlines::default()),
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
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default());
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
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default());
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
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default());
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
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default());
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
    let mut s = ServerSession::new(Nanos::ZERO, Deadlines::default());
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
