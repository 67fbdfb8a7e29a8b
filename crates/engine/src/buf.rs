//! Page-aligned data buffers.
//!
//! Every buffer the data path sends from or receives into starts on a page
//! boundary, an anonymous mapping of its own. A heap `Vec` lands wherever the
//! allocator's history puts it, and the offset within the page changes how fast the
//! kernel copies into it: on this project's test host, a TCP receive buffer that
//! started 3408 bytes into a page read loopback at 18 Gbit/s where the same buffer
//! page-aligned read 29 Gbit/s (4 KiB aliasing between the copy's loads and stores).
//! Measured results must not depend on which allocation happened to come first.

use std::io;
use std::ops::{Deref, DerefMut};

use memmap2::MmapMut;

/// A zeroed, page-aligned buffer of a fixed length.
pub struct PageBuf {
    map: MmapMut,
    len: usize,
}

impl PageBuf {
    /// `len` zero bytes starting on a page boundary.
    pub fn zeroed(len: usize) -> io::Result<PageBuf> {
        // A mapping cannot be empty; an empty buffer maps one byte and shows none.
        let map = MmapMut::map_anon(len.max(1))?;
        Ok(PageBuf { map, len })
    }

    /// `len` bytes holding copies of the test pattern, one per `msg` bytes.
    pub fn pattern(len: usize, msg: usize) -> io::Result<PageBuf> {
        let mut b = PageBuf::zeroed(len)?;
        for m in b.chunks_mut(msg.max(1)) {
            crate::fill_pattern(m);
        }
        Ok(b)
    }
}

impl Deref for PageBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.map[..self.len]
    }
}

impl DerefMut for PageBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.map[..self.len]
    }
}

impl std::fmt::Debug for PageBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageBuf({} B)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_zeroed_and_sized() {
        for len in [0, 1, 64, 4096, 65_537] {
            let b = PageBuf::zeroed(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % 4096, 0);
            assert!(b.iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn pattern_repeats_per_message() {
        let b = PageBuf::pattern(300, 100).unwrap();
        assert_eq!(b[..100], b[100..200]);
        assert_eq!(b[..100], b[200..]);
        let mut one = vec![0u8; 100];
        crate::fill_pattern(&mut one);
        assert_eq!(b[..100], one[..]);
    }
}
