//! Structure-aware: well-formed control messages, in any order, with any field
//! values, into the server's session state machine and what the server does with
//! a setup (spec validation, its limits, the memory and thread budget). Hellos of
//! every version and capability, setups with any spec a client could send, starts,
//! results, dones, errors, authentication messages, time passing and the peer
//! closing: the machine answers, refuses or times out, and never panics; a setup it
//! reports is validated and budgeted without overflow.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use netsonde_driver::budget::Need;
use netsonde_driver::policy::Limits;
use netsonde_model::host::HostFacts;
use netsonde_model::spec::{Direction, IoStrategy, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};
use netsonde_proto::auth::Key;
use netsonde_proto::message::Hex32;
use netsonde_proto::{
    Deadlines, ErrorCode, Event, Frame, Hello, Message, ServerSession, SetupAck, Token,
};

#[derive(Debug, Arbitrary)]
struct SpecSeed {
    test: u8,
    direction: u8,
    size: u64,
    request: u64,
    response: u64,
    window: Option<u64>,
    mss: Option<u32>,
    rate: Option<f64>,
    parallel: u32,
    duration_ms: u64,
    warmup_ms: u64,
    interval_ms: Option<u64>,
    affinity: Vec<u16>,
    tx_io: u8,
    rx_io: u8,
    verify: bool,
    congestion: Option<String>,
}

impl SpecSeed {
    fn spec(&self) -> TestSpec {
        let test = TestKind::ALL[self.test as usize % TestKind::ALL.len()];
        let mut s = TestSpec::new(test);
        s.direction = [Direction::Out, Direction::In, Direction::Bidir][self.direction as usize % 3];
        s.size = Bytes(self.size);
        s.request_size = Bytes(self.request);
        s.response_size = Bytes(self.response);
        s.window = self.window.map(Bytes);
        s.mss = self.mss;
        s.rate = self.rate.map(BitRate);
        s.parallel = self.parallel;
        s.duration = Nanos::from_millis(self.duration_ms);
        s.warmup = Nanos::from_millis(self.warmup_ms);
        s.interval = self.interval_ms.map(Nanos::from_millis);
        s.server_affinity = self.affinity.iter().map(|&c| usize::from(c)).collect();
        s.tx_io = IoStrategy::ALL[self.tx_io as usize % IoStrategy::ALL.len()];
        s.rx_io = IoStrategy::ALL[self.rx_io as usize % IoStrategy::ALL.len()];
        s.verify = self.verify;
        s.congestion = self.congestion.clone();
        s
    }
}

#[derive(Debug, Arbitrary)]
enum Step {
    Hello { version: u16, caps: u64 },
    Setup(SpecSeed),
    Start,
    Done,
    Results,
    Error { code: u8, message: String, retry: Option<u64> },
    AuthResponse { nonce: [u8; 32], proof: [u8; 32] },
    AuthChallenge { nonce: [u8; 32] },
    AuthOk { proof: [u8; 32] },
    Sealed(Vec<u8>),
    Wait { ms: u16 },
    Eof,
}

#[derive(Debug, Arbitrary)]
struct Session {
    keyed: bool,
    /// Whether the driver accepts a valid setup (else it answers busy).
    accept: bool,
    steps: Vec<Step>,
}

const CODES: [ErrorCode; 8] = [
    ErrorCode::VersionMismatch,
    ErrorCode::Protocol,
    ErrorCode::BadSpec,
    ErrorCode::Busy,
    ErrorCode::Timeout,
    ErrorCode::Internal,
    ErrorCode::AuthRequired,
    ErrorCode::AuthFailed,
];

fuzz_target!(|input: Session| {
    let auth = input.keyed.then(|| (Key([7; 32]), [3; 32]));
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default(), auth);
    let limits = Limits::default();
    let mut now = Nanos::ZERO;
    for step in input.steps.iter().take(64) {
        let frame = match step {
            Step::Hello { version, caps } => Frame::Hello(Hello {
                version: *version,
                caps: *caps,
            }),
            Step::Setup(seed) => Frame::Message(Message::Setup { spec: Box::new(seed.spec()) }),
            Step::Start => Frame::Message(Message::Start),
            Step::Done => Frame::Message(Message::Done),
            Step::Results => Frame::Message(Message::Results {
                result: Box::new(netsonde_model::result::SideResult {
                    tcp_samples: Vec::new(),
                    host: HostFacts::default(),
                    flows: vec![],
                    cpu: None,
                    socket: None,
                }),
            }),
            Step::Error {
                code,
                message,
                retry,
            } => Frame::Message(Message::Error {
                code: CODES[*code as usize % CODES.len()],
                message: message.clone(),
                retry_after_ms: *retry,
            }),
            Step::AuthResponse { nonce, proof } => Frame::Message(Message::AuthResponse {
                nonce: Hex32(*nonce),
                proof: Hex32(*proof),
            }),
            Step::AuthChallenge { nonce } => {
                Frame::Message(Message::AuthChallenge { nonce: Hex32(*nonce) })
            }
            Step::AuthOk { proof } => Frame::Message(Message::AuthOk {
                proof: Hex32(*proof),
            }),
            Step::Sealed(b) => Frame::Sealed(b.clone()),
            Step::Wait { ms } => {
                now = now.saturating_add(Nanos::from_millis(u64::from(*ms) * 100));
                server.handle_timeout(now);
                continue;
            }
            Step::Eof => {
                server.handle_eof(now);
                continue;
            }
        };
        // What goes on the wire decodes to itself.
        let bytes = frame.to_bytes();
        let mut dec = netsonde_proto::FrameDecoder::new();
        dec.push(&bytes);
        let Ok(Some(decoded)) = dec.next_frame() else {
            continue;
        };
        server.handle_frame(now, decoded);
        while server.poll_transmit().is_some() {}
        while let Some(ev) = server.poll_event() {
            if let Event::SetupRequested(spec) = ev {
                // What the server does with a setup, short of opening sockets.
                let verdict = spec
                    .validate()
                    .map_err(|e| e.to_string())
                    .and_then(|()| limits.check(&spec).map_err(|e| e.to_string()))
                    .map(|()| Need::of(&spec));
                match verdict {
                    Ok(need) if input.accept => {
                        assert!(need.threads >= 2 && need.fds >= 2);
                        server.accept_setup(
                            now,
                            SetupAck {
                                token: Token([1; 16]),
                                data_port: 1,
                                udp_ports: vec![],
                                host: HostFacts::default(),
                                socket: None,
                            },
                        );
                    }
                    Ok(_) => server.reject(now, ErrorCode::Busy, "busy".into(), Some(1000)),
                    Err(m) => server.reject(now, ErrorCode::BadSpec, m, None),
                }
            }
        }
        while server.poll_transmit().is_some() {}
    }
});
