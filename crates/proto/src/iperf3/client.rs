//! iperf3's client side, as netsonde drives an `iperf3 -s`.

use super::messages::*;
use super::wire::*;

/// netsonde as an iperf3 client: cookie, parameters, results, done.
#[derive(Debug)]
pub struct ClientMachine {
    wire: Wire,
    params: Params,
    /// Whether this end's results went out (then the server's come).
    sent_results: bool,
}

impl ClientMachine {
    /// A session for `params`, its cookie queued to send.
    pub fn new(cookie: Cookie, params: Params) -> ClientMachine {
        let mut wire = Wire::new(Want::State("the server's first state"));
        wire.outbox.extend_from_slice(&cookie.0);
        ClientMachine {
            wire,
            params,
            sent_results: false,
        }
    }

    /// Bytes to write to the server now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.wire.outbox)
    }

    /// Whether the session is over (done or failed).
    pub fn is_over(&self) -> bool {
        self.wire.want == Want::Over
    }

    /// Bytes read from the server; then read [`ClientMachine::poll`].
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

    /// The client's time is up: tell the server.
    pub fn test_end(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::TestEnd.byte());
        }
    }

    /// This end's results, after [`Iperf3Event::ExchangeResults`].
    pub fn send_results(&mut self, r: &Results) {
        if self.wire.want == Want::Over || self.sent_results {
            return;
        }
        self.sent_results = true;
        self.wire.outbox.extend_from_slice(&encode_json(r));
        self.wire.want = Want::Json("results", MAX_RESULTS);
        // Bytes that came early are read now.
        while let Some(item) = self.wire.take() {
            self.step(item);
        }
    }

    /// Ends the test early (the user interrupted, or this end failed).
    pub fn terminate(&mut self) {
        if self.wire.want != Want::Over {
            self.wire.outbox.push(State::ClientTerminate.byte());
            self.wire.want = Want::Over;
        }
    }

    fn step(&mut self, item: Item) {
        let w = &mut self.wire;
        match item {
            Item::State(b) => {
                let waiting = match w.want {
                    Want::State(s) => s,
                    _ => "nothing",
                };
                match State::from_byte(b) {
                    Some(State::ParamExchange) => {
                        w.outbox.extend_from_slice(&encode_json(&self.params));
                    }
                    Some(State::CreateStreams) => w.events.push_back(Iperf3Event::CreateStreams),
                    Some(State::TestStart) => w.events.push_back(Iperf3Event::TestStart),
                    Some(State::TestRunning) => w.events.push_back(Iperf3Event::TestRunning),
                    Some(State::ExchangeResults) => {
                        w.want = Want::Nothing;
                        w.events.push_back(Iperf3Event::ExchangeResults);
                    }
                    Some(State::DisplayResults) if self.sent_results => {
                        w.outbox.push(State::IperfDone.byte());
                        w.want = Want::Over;
                        w.events.push_back(Iperf3Event::Done);
                    }
                    Some(State::AccessDenied) => w.fail(Iperf3Error::Denied),
                    Some(State::ServerError) => w.want = Want::ErrorCodes,
                    Some(State::ServerTerminate) => w.fail(Iperf3Error::Terminated),
                    _ => w.fail(Iperf3Error::UnexpectedState {
                        got: b as i8,
                        waiting,
                    }),
                }
            }
            Item::Codes(code, errno) => w.fail(Iperf3Error::ServerError { code, errno }),
            Item::Json(what, b) => match parse::<Results>(what, &b) {
                Ok(r) => {
                    w.want = Want::State("DISPLAY_RESULTS");
                    w.events.push_back(Iperf3Event::PeerResults(Box::new(r)));
                }
                Err(e) => w.fail(e),
            },
            Item::TooLong(what, len, max) => w.fail(Iperf3Error::TooLong { what, len, max }),
            Item::Cookie(_) => w.fail(Iperf3Error::BadCookie),
        }
    }
}
