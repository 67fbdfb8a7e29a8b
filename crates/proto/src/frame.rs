//! Frames on the control connection.
//!
//! ```text
//! frame   = length:u32be kind:u8 body        ; length counts kind + body
//! kind 1  = hello: magic "NETSONDE" (8 bytes), version:u16be, capabilities:u64be
//! kind 2  = message: a UTF-8 JSON object (see `message::Message`)
//! kind 3  = sealed message (after authentication)
//! kind 4  = padding: zero bytes, skipped by the decoder
//! ```
//!
//! A client pads its opening to iperf3's cookie length ([`Frame::opening_pad`]):
//! an `iperf3 -s` reads exactly a cookie's 37 bytes before it says anything,
//! and then answers at once with a state byte (PARAM_EXCHANGE, or ACCESS_DENIED
//! when busy) where a netsonde server's first byte is a frame length's, always
//! 0 ([`MAX_FRAME`] is below 2^24). So a client that reached an iperf3 server
//! knows it within a round trip ([`FrameError::Iperf3Server`]), instead of
//! waiting out the hello's deadline.
//!
//! The hello is binary and fixed so that any two versions of netsonde, whatever their
//! message encoding, can tell each other which version they speak. A frame longer
//! than [`MAX_FRAME`] is an error before any of its body is buffered.

use crate::message::Message;
use crate::MAGIC;

/// The largest frame (kind + body) accepted.
pub const MAX_FRAME: usize = 1 << 20;

const KIND_HELLO: u8 = 1;
const KIND_MESSAGE: u8 = 2;
const KIND_SEALED: u8 = 3;
const KIND_PAD: u8 = 4;
const KINDS: [u8; 4] = [KIND_HELLO, KIND_MESSAGE, KIND_SEALED, KIND_PAD];
const HELLO_LEN: usize = 1 + 8 + 2 + 8;
/// iperf3's state bytes that may start an `iperf3 -s`'s answer to a cookie:
/// PARAM_EXCHANGE (9), ACCESS_DENIED (-1), SERVER_ERROR (-2).
const IPERF3_STATES: [u8; 3] = [9, 0xff, 0xfe];

/// The first frame in each direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// Protocol version.
    pub version: u16,
    /// Capability bits (see `Hello::CAP_*`).
    pub caps: u64,
}

impl Hello {
    /// This build can run every test kind in `netsonde_model::spec::TestKind::ALL`.
    pub const CAP_ALL_TESTS: u64 = 1 << 0;
    /// This build reports CPU accounting.
    pub const CAP_CPU: u64 = 1 << 1;
    /// This end authenticates with a pre-shared key (client: it has one; server: it
    /// requires one).
    pub const CAP_AUTH: u64 = 1 << 2;

    /// The hello of this build.
    pub fn ours() -> Hello {
        Hello {
            version: crate::PROTOCOL_VERSION,
            caps: Hello::CAP_ALL_TESTS | Hello::CAP_CPU,
        }
    }
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// The opening frame.
    Hello(Hello),
    /// Any later frame.
    Message(Message),
    /// A message sealed with the session key (opened by the session).
    Sealed(Vec<u8>),
    /// Padding of this many zero bytes: only ever sent (see the module docs),
    /// the decoder skips it.
    Pad(u16),
}

/// Why bytes on the control connection could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The length field exceeds [`MAX_FRAME`] (or is zero).
    #[error("frame length {len} is outside 1..={MAX_FRAME}")]
    BadLength {
        /// The announced length.
        len: usize,
    },
    /// The kind byte is not one this version knows.
    #[error("unknown frame kind {0}")]
    UnknownKind(u8),
    /// The peer's first byte is an iperf3 server's state byte where a frame's
    /// length starts with 0: an `iperf3 -s` answered the padded opening.
    #[error("the peer answered as an iperf3 server does (state byte {0})")]
    Iperf3Server(u8),
    /// A byte that starts no frame (a length's first byte is always 0).
    #[error("not a netsonde peer (its bytes start no frame: {0:#04x})")]
    NotAFrame(u8),
    /// The hello did not start with the magic: not a netsonde peer.
    #[error("not a netsonde peer (bad magic)")]
    BadMagic,
    /// A hello frame of the wrong length.
    #[error("malformed hello frame")]
    BadHello,
    /// The JSON body did not decode as a message.
    #[error("malformed message: {0}")]
    BadMessage(String),
    /// The connection ended in the middle of a frame.
    #[error("connection closed in the middle of a frame ({have} of {want} bytes)")]
    Truncated {
        /// Bytes buffered.
        have: usize,
        /// Bytes the frame needs.
        want: usize,
    },
}

impl Frame {
    /// Encodes the frame, appending to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Frame::Hello(h) => {
                out.extend_from_slice(&(HELLO_LEN as u32).to_be_bytes());
                out.push(KIND_HELLO);
                out.extend_from_slice(&MAGIC);
                out.extend_from_slice(&h.version.to_be_bytes());
                out.extend_from_slice(&h.caps.to_be_bytes());
            }
            Frame::Message(m) => {
                let body = serde_json::to_vec(m).expect("messages always serialize");
                out.extend_from_slice(&((body.len() + 1) as u32).to_be_bytes());
                out.push(KIND_MESSAGE);
                out.extend_from_slice(&body);
            }
            Frame::Sealed(body) => {
                out.extend_from_slice(&((body.len() + 1) as u32).to_be_bytes());
                out.push(KIND_SEALED);
                out.extend_from_slice(body);
            }
            Frame::Pad(n) => {
                out.extend_from_slice(&(u32::from(*n) + 1).to_be_bytes());
                out.push(KIND_PAD);
                out.resize(out.len() + usize::from(*n), 0);
            }
        }
    }

    /// The padding a client sends after its hello, so that its opening is
    /// exactly an iperf3 cookie long (see the module docs).
    pub fn opening_pad() -> Frame {
        const PAD: usize = crate::iperf3::COOKIE_LEN - (4 + HELLO_LEN) - 5;
        Frame::Pad(PAD as u16)
    }

    /// Encodes into a new buffer.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.encode(&mut v);
        v
    }
}

/// Decodes a message's JSON body.
pub fn decode_message(body: &[u8]) -> Result<Message, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::BadMessage(e.to_string()))
}

/// Accumulates bytes and yields whole frames.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    /// An empty decoder.
    pub fn new() -> FrameDecoder {
        FrameDecoder::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered and not yet decoded.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The next whole frame, `Ok(None)` when more bytes are needed.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        loop {
            match self.next_any()? {
                Some(Frame::Pad(_)) => continue,
                f => return Ok(f),
            }
        }
    }

    /// The next whole frame, padding included.
    fn next_any(&mut self) -> Result<Option<Frame>, FrameError> {
        // A length's first byte is 0: anything else is told at once, an iperf3
        // server's answer by name.
        match self.buf.first() {
            Some(&b) if b != 0 && IPERF3_STATES.contains(&b) => {
                return Err(FrameError::Iperf3Server(b))
            }
            Some(&b) if b != 0 => return Err(FrameError::NotAFrame(b)),
            _ => {}
        }
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes(self.buf[..4].try_into().expect("4 bytes")) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(FrameError::BadLength { len });
        }
        if self.buf.len() < 4 + len {
            // Check what we can early: a non-netsonde peer is told so at once.
            if self.buf.len() > 4 {
                let kind = self.buf[4];
                if !KINDS.contains(&kind) {
                    return Err(FrameError::UnknownKind(kind));
                }
            }
            return Ok(None);
        }
        let frame: Vec<u8> = self.buf.drain(..4 + len).skip(4).collect();
        let (kind, body) = (frame[0], &frame[1..]);
        match kind {
            KIND_HELLO => {
                if frame.len() != HELLO_LEN {
                    return Err(FrameError::BadHello);
                }
                if body[..8] != MAGIC {
                    return Err(FrameError::BadMagic);
                }
                Ok(Some(Frame::Hello(Hello {
                    version: u16::from_be_bytes([body[8], body[9]]),
                    caps: u64::from_be_bytes(body[10..18].try_into().expect("8 bytes")),
                })))
            }
            KIND_MESSAGE => decode_message(body).map(|m| Some(Frame::Message(m))),
            KIND_SEALED => Ok(Some(Frame::Sealed(body.to_vec()))),
            KIND_PAD => Ok(Some(Frame::Pad(body.len() as u16))),
            k => Err(FrameError::UnknownKind(k)),
        }
    }

    /// Call at end of stream: an error if a partial frame is buffered.
    pub fn finish(&self) -> Result<(), FrameError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let want = if self.buf.len() >= 4 {
            4 + u32::from_be_bytes(self.buf[..4].try_into().expect("4 bytes")) as usize
        } else {
            4
        };
        Err(FrameError::Truncated {
            have: self.buf.len(),
            want,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ErrorCode, Message};

    fn roundtrip(f: Frame) {
        let mut d = FrameDecoder::new();
        let bytes = f.to_bytes();
        // Byte at a time: the decoder must not care how bytes arrive.
        for (i, b) in bytes.iter().enumerate() {
            d.push(std::slice::from_ref(b));
            let got = d.next_frame().unwrap();
            if i + 1 < bytes.len() {
                assert!(got.is_none());
            } else {
                assert_eq!(got, Some(f.clone()));
            }
        }
        d.finish().unwrap();
    }

    #[test]
    fn frames_roundtrip() {
        roundtrip(Frame::Hello(Hello::ours()));
        roundtrip(Frame::Message(Message::Start));
        roundtrip(Frame::Sealed(vec![1, 2, 3]));
        roundtrip(Frame::Message(Message::Error {
            code: ErrorCode::Busy,
            message: "busy".into(),
            retry_after_ms: Some(1500),
        }));
    }

    #[test]
    fn oversized_frame_refused_before_buffering() {
        let mut d = FrameDecoder::new();
        d.push(&((MAX_FRAME as u32) + 1).to_be_bytes());
        assert_eq!(
            d.next_frame(),
            Err(FrameError::BadLength { len: MAX_FRAME + 1 })
        );
    }

    #[test]
    fn garbage_is_not_a_peer() {
        let mut d = FrameDecoder::new();
        d.push(b"GET / HTTP/1.1\r\n\r\n");
        assert!(d.next_frame().is_err());
        let mut d = FrameDecoder::new();
        let mut h = Frame::Hello(Hello::ours()).to_bytes();
        h[5] = b'X';
        d.push(&h);
        assert_eq!(d.next_frame(), Err(FrameError::BadMagic));
    }

    /// A client's opening, its hello and padding, is exactly an iperf3
    /// cookie long; a decoder skips the padding.
    #[test]
    fn the_opening_is_a_cookie_long_and_padding_is_skipped() {
        let mut opening = Frame::Hello(Hello::ours()).to_bytes();
        Frame::opening_pad().encode(&mut opening);
        assert_eq!(opening.len(), crate::iperf3::COOKIE_LEN);
        Frame::Message(Message::Start).encode(&mut opening);
        let mut d = FrameDecoder::new();
        for b in &opening {
            d.push(std::slice::from_ref(b));
        }
        assert_eq!(d.next_frame(), Ok(Some(Frame::Hello(Hello::ours()))));
        assert_eq!(d.next_frame(), Ok(Some(Frame::Message(Message::Start))));
        assert_eq!(d.next_frame(), Ok(None));
        d.finish().unwrap();
    }

    /// An `iperf3 -s` answers a cookie with one state byte: told from its
    /// first byte, without waiting for a frame's four.
    #[test]
    fn an_iperf3_servers_state_byte_is_told_at_once() {
        for (byte, want) in [
            (9, FrameError::Iperf3Server(9)),
            (0xff, FrameError::Iperf3Server(0xff)),
            (b'G', FrameError::NotAFrame(b'G')),
        ] {
            let mut d = FrameDecoder::new();
            d.push(&[byte]);
            assert_eq!(d.next_frame(), Err(want));
        }
    }

    #[test]
    fn truncated_frame_reported() {
        let mut d = FrameDecoder::new();
        let bytes = Frame::Message(Message::Done).to_bytes();
        d.push(&bytes[..bytes.len() - 1]);
        assert_eq!(d.next_frame(), Ok(None));
        assert!(matches!(d.finish(), Err(FrameError::Truncated { .. })));
    }

    #[test]
    fn bad_json_reported() {
        let mut d = FrameDecoder::new();
        d.push(&[0, 0, 0, 3, KIND_MESSAGE, b'{', b'x']);
        assert!(matches!(d.next_frame(), Err(FrameError::BadMessage(_))));
    }
}
