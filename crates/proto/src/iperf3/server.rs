//! iperf3's server side, as netsonde serves an iperf3 client.

use super::messages::*;
use super::wire::*;

/// netsonde as an iperf3 server, for one client's control connection.
#[derive(Debug)]
pub struct ServerMachine {
    wire: Wire,
    /// Whether the client's results arrived (then this end's go out).
    stage: ServerStage,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ServerStage {
    Cookie,
    Params,
    Running,
    Results,
    Done,
}

impl Default for ServerMachine {
    fn default() -> Self {
        ServerMachine::new()
    }
}

impl ServerMachine {
    /// A session waiting for the client's cookie.
    pub fn new() -> ServerMachine {
        ServerMachine {
            wire: Wire::new(Want::Cookie),
            stage: ServerStage::Cookie,
        }
    }

    /// Bytes to write to the client now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.wire.outbox)
    }

    /// Whether the session is over (done or failed).
    pub fn is_over(&self) -> bool {
        self.wire.want == Want::Over
    }

    /// Bytes read from the client; then read [`ServerMachine::poll`].
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.wire.want == Want::Over {
            return;
        }
        if !self.wire.push(bytes) {
            return;
        }
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// The next event, if any.
    pub fn poll(&mut self) -> Option<Iperf3Event> {
        self.wire.events.pop_front()
    }

    /// Refuses the client: another test is running.
    pub fn deny(&mut self) {
        self.wire.outbox.push(State::AccessDenied.byte());
        self.wire.want = Want::Over;
    }

    /// Accepts the client: its parameters come next.
    pub fn accept(&mut self) {
        if self.stage == ServerStage::Cookie && self.wire.want == Want::Nothing {
            self.wire.outbox.push(State::ParamExchange.byte());
            self.wire.want = Want::Json("parameters", MAX_PARAMS);
            self.stage = ServerStage::Params;
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    /// Fails the session with iperf3's error numbers.
    pub fn error(&mut self, code: u32, errno: u32) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ServerError.byte());
            self.wire.outbox.extend_from_slice(&code.to_be_bytes());
            self.wire.outbox.extend_from_slice(&errno.to_be_bytes());
            self.wire.want = Want::Over;
        }
    }

    /// The client may open its streams.
    pub fn create_streams(&mut self) {
        self.wire.outbox.push(State::CreateStreams.byte());
    }

    /// Every stream is in: the test starts and runs; the client's TEST_END is
    /// awaited.
    pub fn start(&mut self) {
        self.wire.outbox.push(State::TestStart.byte());
        self.wire.outbox.push(State::TestRunning.byte());
        self.stage = ServerStage::Running;
        self.wire.want = Want::State("TEST_END");
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// After [`Iperf3Event::TestEnd`]: asks for the client's results.
    pub fn exchange_results(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ExchangeResults.byte());
            self.wire.want = Want::Json("results", MAX_RESULTS);
            self.stage = ServerStage::Results;
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    /// After the client's results: this end's, then DISPLAY_RESULTS; IPERF_DONE
    /// is awaited.
    pub fn send_results(&mut self, r: &Results) {
        if self.wire.want != Want::Over && self.stage == ServerStage::Done {
            self.wire.outbox.extend_from_slice(&encode_json(r));
            self.wire.outbox.push(State::DisplayResults.byte());
            self.wire.want = Want::State("IPERF_DONE");
            while let Some(item) = self.wire.take() {
                self.step(item);
            }
        }
    }

    fn step(&mut self, item: Item) {
        let w = &mut self.wire;
        match item {
            Item::Cookie(b) => match Cookie::parse(&b) {
                Ok(c) => {
                    w.want = Want::Nothing;
                    w.events.push_back(Iperf3Event::Cookie(c));
                }
                Err(e) => w.fail(e),
            },
            Item::Json(what, b) if self.stage == ServerStage::Params => {
                match parse::<Params>(what, &b) {
                    Ok(p) => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::Params(Box::new(p)));
                    }
                    Err(e) => w.fail(e),
                }
            }
            Item::Json(what, b) => match parse::<Results>(what, &b) {
                Ok(r) => {
                    w.want = Want::Nothing;
                    self.stage = ServerStage::Done;
                    w.events.push_back(Iperf3Event::PeerResults(Box::new(r)));
                }
                Err(e) => w.fail(e),
            },
            Item::State(b) => {
                let waiting = match w.want {
                    Want::State(s) => s,
                    _ => "nothing",
                };
                match State::from_byte(b) {
                    Some(State::TestEnd) if self.stage == ServerStage::Running => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::TestEnd);
                    }
                    Some(State::IperfDone) if self.stage == ServerStage::Done => {
                        w.want = Want::Over;
                        w.events.push_back(Iperf3Event::Done);
                    }
                    Some(State::ClientTerminate) => w.fail(Iperf3Error::Terminated),
                    _ => w.fail(Iperf3Error::UnexpectedState {
                        got: b as i8,
                        waiting,
                    }),
                }
            }
            Item::TooLong(what, len, max) => w.fail(Iperf3Error::TooLong { what, len, max }),
            Item::Codes(..) => w.fail(Iperf3Error::BadCookie),
        }
    }
}
