//! `--verify`: every received byte is checked against the pattern senders write
//! (`fill_pattern`): byte `i` of each message is `i % 251`. TCP is checked by
//! stream offset, UDP per datagram past its 16-byte header. Off the hot path unless
//! asked for: the check costs a pass over every byte.

/// Counts bytes that differ from the pattern.
#[derive(Debug, Clone, Default)]
pub struct Verifier {
    size: u64,
    offset: u64,
    /// Bytes that did not match.
    pub errors: u64,
    /// Bytes checked.
    pub checked: u64,
}

impl Verifier {
    /// For messages of `size` bytes.
    pub fn new(size: u64) -> Verifier {
        Verifier {
            size: size.max(1),
            ..Verifier::default()
        }
    }

    /// A chunk of a TCP stream.
    pub fn stream(&mut self, data: &[u8]) {
        for &b in data {
            let want = ((self.offset % self.size) % 251) as u8;
            self.errors += u64::from(b != want);
            self.offset += 1;
        }
        self.checked += data.len() as u64;
    }

    /// A UDP datagram (header excluded from the check).
    pub fn datagram(&mut self, data: &[u8]) {
        for (i, &b) in data.iter().enumerate().skip(crate::datagram::HEADER) {
            self.errors += u64::from(b != (i % 251) as u8);
        }
        self.checked += data.len().saturating_sub(crate::datagram::HEADER) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_passes_and_damage_is_counted() {
        let mut msg = vec![0u8; 1000];
        crate::fill_pattern(&mut msg);
        let mut v = Verifier::new(1000);
        let mut stream = msg.clone();
        stream.extend_from_slice(&msg);
        v.stream(&stream[..700]);
        v.stream(&stream[700..]);
        assert_eq!((v.errors, v.checked), (0, 2000));
        stream[1500] ^= 1;
        let mut v = Verifier::new(1000);
        v.stream(&stream);
        assert_eq!(v.errors, 1);
        let mut d = msg.clone();
        crate::datagram::stamp(&mut d, 7, 9);
        let mut v = Verifier::new(1000);
        v.datagram(&d);
        assert_eq!(v.errors, 0);
        d[500] = 0;
        v.datagram(&d);
        assert_eq!(v.errors, 1);
    }
}
