//! Any bytes, in any split, into the control-frame decoder: it returns frames or a
//! typed error, never panics, and never buffers past its frame limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsonde_proto::FrameDecoder;

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(1, |b| usize::from(*b).max(1));
    let mut d = FrameDecoder::new();
    for chunk in data.chunks(split) {
        d.push(chunk);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    // What decodes must encode back to something that decodes.
                    let mut again = FrameDecoder::new();
                    again.push(&f.to_bytes());
                    assert!(matches!(again.next_frame(), Ok(Some(_))));
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
        assert!(d.buffered() <= netsonde_proto::frame::MAX_FRAME + 4 + chunk.len());
    }
    let _ = d.finish();
});
