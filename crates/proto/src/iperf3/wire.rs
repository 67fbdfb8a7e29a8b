//! The control connection's bytes: a state byte, or a length-prefixed JSON
//! document, read in whatever pieces they arrive.

use std::collections::VecDeque;

use serde::Deserialize;

use super::messages::*;

/// What the reader waits for next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Want {
    /// Nothing until the caller acts.
    Nothing,
    /// The 37-byte cookie.
    Cookie,
    /// A state byte; the name says which phase, for errors.
    State(&'static str),
    /// SERVER_ERROR's two numbers.
    ErrorCodes,
    /// A JSON object: parameters or results.
    Json(&'static str, usize),
    /// Over.
    Over,
}

/// The part both machines share: bytes in, a queue of bytes out.
#[derive(Debug)]
pub(crate) struct Wire {
    pub(crate) inbox: Vec<u8>,
    pub(crate) outbox: Vec<u8>,
    pub(crate) want: Want,
    pub(crate) events: VecDeque<Iperf3Event>,
}

impl Wire {
    pub(crate) fn new(want: Want) -> Wire {
        Wire {
            inbox: Vec::new(),
            outbox: Vec::new(),
            want,
            events: VecDeque::new(),
        }
    }

    /// Takes bytes read; a peer that sends more than the largest object it may
    /// send, ahead of its turn, fails the session (nothing is buffered without
    /// bound).
    pub(crate) fn push(&mut self, bytes: &[u8]) -> bool {
        if self.inbox.len() + bytes.len() > MAX_RESULTS + 4 {
            self.fail(Iperf3Error::TooLong {
                what: "unread input",
                len: self.inbox.len() + bytes.len(),
                max: MAX_RESULTS + 4,
            });
            return false;
        }
        self.inbox.extend_from_slice(bytes);
        true
    }

    pub(crate) fn fail(&mut self, e: Iperf3Error) {
        self.want = Want::Over;
        self.inbox.clear();
        self.events.push_back(Iperf3Event::Failed(e));
    }

    /// The next complete item the reader waits for, if it has arrived.
    pub(crate) fn take(&mut self) -> Option<Item> {
        match self.want {
            Want::Nothing | Want::Over => None,
            Want::Cookie => (self.inbox.len() >= COOKIE_LEN).then(|| {
                let b: Vec<u8> = self.inbox.drain(..COOKIE_LEN).collect();
                Item::Cookie(b)
            }),
            Want::State(_) => (!self.inbox.is_empty()).then(|| Item::State(self.inbox.remove(0))),
            Want::ErrorCodes => (self.inbox.len() >= 8).then(|| {
                let b: Vec<u8> = self.inbox.drain(..8).collect();
                Item::Codes(
                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                    u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                )
            }),
            Want::Json(what, max) => {
                if self.inbox.len() < 4 {
                    return None;
                }
                let len = u32::from_be_bytes([
                    self.inbox[0],
                    self.inbox[1],
                    self.inbox[2],
                    self.inbox[3],
                ]) as usize;
                if len > max {
                    return Some(Item::TooLong(what, len, max));
                }
                (self.inbox.len() >= 4 + len).then(|| {
                    let b: Vec<u8> = self.inbox.drain(..4 + len).skip(4).collect();
                    Item::Json(what, b)
                })
            }
        }
    }
}

/// One complete item read.
pub(crate) enum Item {
    Cookie(Vec<u8>),
    State(u8),
    Codes(u32, u32),
    Json(&'static str, Vec<u8>),
    TooLong(&'static str, usize, usize),
}

pub(crate) fn parse<T: for<'de> Deserialize<'de>>(
    what: &'static str,
    b: &[u8],
) -> Result<T, Iperf3Error> {
    serde_json::from_slice(b).map_err(|e| Iperf3Error::BadJson {
        what,
        reason: e.to_string(),
    })
}
