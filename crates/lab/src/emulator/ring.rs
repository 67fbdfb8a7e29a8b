//! A FIFO of packets in one preallocated byte buffer: packets are read from the
//! TUN device straight into it and written out from it, so the data path copies
//! each packet once in and once out and never allocates.
//!
//! Entries are a 16-byte header (due time, length, copies) followed by the packet,
//! rounded up to 8 bytes. The writer asks for a slot big enough for the largest
//! packet ([`Ring::slot`]), the read fills it, and [`Ring::commit`] keeps what was
//! used. When the end of the buffer is too close, the next entry starts at offset 0
//! and the reader jumps there after the last entry before the gap.

/// Header bytes per entry.
const HDR: usize = 16;

fn round8(n: usize) -> usize {
    (n + 7) & !7
}

/// A packet FIFO in a fixed buffer.
#[derive(Debug)]
pub struct Ring {
    buf: Vec<u8>,
    head: usize,
    tail: usize,
    /// Where valid data ends before the writer wrapped to 0 (meaningful while
    /// `wrapped`).
    wrap: usize,
    wrapped: bool,
    count: usize,
    bytes: usize,
    /// Offset of the slot handed out by `slot`, to be committed.
    pending: Option<usize>,
}

/// The packet at the front.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// When it is due (ns on the emulator's clock).
    pub due: u64,
    /// How many times to deliver it (2 for a duplicate).
    pub copies: u32,
    /// The IP packet.
    pub data: &'a [u8],
}

impl Ring {
    /// A ring of `capacity` bytes (allocated once, zero pages until touched).
    pub fn new(capacity: usize) -> Ring {
        Ring {
            buf: vec![0; round8(capacity.max(HDR * 2))],
            head: 0,
            tail: 0,
            wrap: 0,
            wrapped: false,
            count: 0,
            bytes: 0,
            pending: None,
        }
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Packet bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// A slot for a packet of up to `max` bytes, or `None` when the ring is too
    /// full. The slot is only kept by [`Ring::commit`].
    pub fn slot(&mut self, max: usize) -> Option<&mut [u8]> {
        let need = HDR + round8(max);
        let cap = self.buf.len();
        let off = if self.count == 0 {
            self.head = 0;
            self.tail = 0;
            self.wrapped = false;
            (need <= cap).then_some(0)?
        } else if !self.wrapped {
            if cap - self.tail >= need {
                self.tail
            } else if self.head >= need {
                0
            } else {
                return None;
            }
        } else if self.head - self.tail >= need {
            self.tail
        } else {
            return None;
        };
        self.pending = Some(off);
        Some(&mut self.buf[off + HDR..off + HDR + max])
    }

    /// Keeps the slot just handed out, holding a packet of `len` bytes.
    pub fn commit(&mut self, len: usize, due: u64, copies: u32) {
        let off = self.pending.take().expect("commit follows slot");
        if off == 0 && self.count > 0 && !self.wrapped {
            self.wrap = self.tail;
            self.wrapped = true;
        }
        self.buf[off..off + 8].copy_from_slice(&due.to_ne_bytes());
        self.buf[off + 8..off + 12].copy_from_slice(&(len as u32).to_ne_bytes());
        self.buf[off + 12..off + 16].copy_from_slice(&copies.to_ne_bytes());
        self.tail = off + HDR + round8(len);
        self.count += 1;
        self.bytes += len;
    }

    fn header(&self, off: usize) -> (u64, usize, u32) {
        let b = &self.buf[off..off + HDR];
        (
            u64::from_ne_bytes(b[0..8].try_into().expect("8 bytes")),
            u32::from_ne_bytes(b[8..12].try_into().expect("4 bytes")) as usize,
            u32::from_ne_bytes(b[12..16].try_into().expect("4 bytes")),
        )
    }

    /// When the front packet is due.
    pub fn front_due(&self) -> Option<u64> {
        (self.count > 0).then(|| self.header(self.head).0)
    }

    /// The front packet.
    pub fn front(&self) -> Option<Entry<'_>> {
        if self.count == 0 {
            return None;
        }
        let (due, len, copies) = self.header(self.head);
        Some(Entry {
            due,
            copies,
            data: &self.buf[self.head + HDR..self.head + HDR + len],
        })
    }

    /// Drops the front packet.
    pub fn pop(&mut self) {
        if self.count == 0 {
            return;
        }
        let (_, len, _) = self.header(self.head);
        self.head += HDR + round8(len);
        self.count -= 1;
        self.bytes -= len;
        if self.wrapped && self.head == self.wrap {
            self.head = 0;
            self.wrapped = false;
        }
        if self.count == 0 {
            self.head = 0;
            self.tail = 0;
            self.wrapped = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(r: &mut Ring, v: &[u8], due: u64) -> bool {
        match r.slot(100) {
            Some(s) => {
                s[..v.len()].copy_from_slice(v);
                r.commit(v.len(), due, 1);
                true
            }
            None => false,
        }
    }

    #[test]
    fn fifo_order_survives_wrapping() {
        // Room for a few 100-byte slots only, so it wraps often.
        let mut r = Ring::new(600);
        let mut next_in = 0u64;
        let mut next_out = 0u64;
        for round in 0..200 {
            // Push until full, then pop a varying number.
            while push(
                &mut r,
                &[next_in as u8; 37][..(next_in % 37 + 1) as usize],
                next_in,
            ) {
                next_in += 1;
            }
            assert!(r.len() >= 3, "round {round}: {}", r.len());
            for _ in 0..(round % 3 + 1) {
                let e = r.front().unwrap();
                assert_eq!(e.due, next_out);
                assert_eq!(e.data.len() as u64, next_out % 37 + 1);
                assert!(e.data.iter().all(|&b| b == next_out as u8));
                r.pop();
                next_out += 1;
            }
        }
        while let Some(e) = r.front() {
            assert_eq!(e.due, next_out);
            r.pop();
            next_out += 1;
        }
        assert_eq!(next_in, next_out);
        assert!(r.is_empty());
        assert_eq!(r.bytes(), 0);
    }

    #[test]
    fn an_uncommitted_slot_is_not_kept() {
        let mut r = Ring::new(1000);
        assert!(push(&mut r, b"a", 1));
        let _ = r.slot(100).unwrap();
        assert_eq!(r.len(), 1);
        assert!(push(&mut r, b"b", 2));
        assert_eq!(r.front().unwrap().data, b"a");
        r.pop();
        assert_eq!(r.front().unwrap().data, b"b");
        assert_eq!(r.front_due(), Some(2));
    }

    #[test]
    fn too_small_for_one_packet() {
        let mut r = Ring::new(64);
        assert!(r.slot(100).is_none());
    }
}
