//! Any decodable frames, in any order and at any time, into the server and client
//! session state machines, keyed and open: they fail with a typed error or go on,
//! never panic, and a failed session stays over.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsonde_model::spec::{TestKind, TestSpec};
use netsonde_model::units::Nanos;
use netsonde_proto::auth::Key;
use netsonde_proto::{ClientSession, Deadlines, FrameDecoder, ServerSession};

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let auth = (mode & 1 == 1).then(|| (Key([7; 32]), [3; 32]));
    let mut server = ServerSession::new(Nanos::ZERO, Deadlines::default(), auth.clone());
    let mut client = ClientSession::new(
        Nanos::ZERO,
        TestSpec::new(TestKind::TcpStream),
        Deadlines::default(),
        auth,
    );
    let mut d = FrameDecoder::new();
    d.push(rest);
    let mut now = Nanos::ZERO;
    loop {
        match d.next_frame() {
            Ok(Some(f)) => {
                now = now.saturating_add(Nanos::from_millis(u64::from(mode >> 1)));
                server.handle_frame(now, f.clone());
                client.handle_frame(now, f);
                server.handle_timeout(now);
                client.handle_timeout(now);
                while server.poll_transmit().is_some() {}
                while client.poll_transmit().is_some() {}
                while server.poll_event().is_some() {}
                while client.poll_event().is_some() {}
            }
            Ok(None) => break,
            Err(e) => {
                server.handle_decode_error(now, e.clone());
                client.handle_decode_error(now, e);
                assert!(server.is_over() && client.is_over());
                break;
            }
        }
    }
});
