//! The host's memory-copy bandwidth: the ceiling of any data path that copies
//! each byte (the reference study 004 sets throughput against it).

use std::time::{Duration, Instant};

/// Bytes per second `copy_from_slice` moves between two buffers of `size` bytes:
/// the best of the rounds that fit in `budget` (at least three), so a round
/// disturbed by another process does not lower it. Buffers far larger than the
/// last-level cache measure main memory; small ones, the cache.
pub fn copy_bandwidth(size: usize, budget: Duration) -> f64 {
    let size = size.max(4096);
    let src: Vec<u8> = (0..size).map(|i| i as u8).collect();
    let mut dst = vec![0u8; size];
    // Touch both once so page faults are not timed.
    dst.copy_from_slice(&src);
    // Enough copies per round for about 1 ms even in cache.
    let per_round = (64 << 20) / size + 1;
    let start = Instant::now();
    let mut best = 0f64;
    let mut rounds = 0;
    while rounds < 3 || start.elapsed() < budget {
        let t = Instant::now();
        for _ in 0..per_round {
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
        }
        let secs = t.elapsed().as_secs_f64();
        if secs > 0.0 {
            best = best.max((per_round * size) as f64 / secs);
        }
        rounds += 1;
        if rounds >= 1000 {
            break;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_copy_moves_a_plausible_number_of_bytes() {
        // Three rounds only (about 30 ms): other tests here time spinning processes.
        let b = super::copy_bandwidth(1 << 20, std::time::Duration::ZERO);
        // Anything from a slow VM (100 MB/s) to a fast cache (1 TB/s).
        assert!((1e8..1e12).contains(&b), "{b}");
    }
}
