//! CPU time of one thread, read from any thread of the process.
//!
//! Linux gives every thread a CPU-time clock; its id is the thread id encoded as
//! glibc's `pthread_getcpuclockid` does (`MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`
//! in `include/linux/posix-timers.h`: `(~tid << 3) | 6`), so a sampler can read a
//! flow thread's clock without the flow doing anything on its data path. The clock
//! counts the scheduler's exact run time (user and system, and any softirq run in the
//! thread's context), in nanoseconds.

use netsonde_model::units::Nanos;
use nix::time::{clock_gettime, ClockId};

/// The calling thread's id, for [`cpu_time`] later.
pub fn current_tid() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// CPU time thread `tid` of this process has run so far; `None` once it has
/// exited.
pub fn cpu_time(tid: i32) -> Option<Nanos> {
    let id = ((!tid) << 3) | 6;
    let t = clock_gettime(ClockId::from_raw(id)).ok()?;
    Some(Nanos(
        u64::try_from(t.tv_sec()).ok()? * 1_000_000_000 + u64::try_from(t.tv_nsec()).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn another_threads_clock_counts_what_it_ran() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let spinner = std::thread::spawn(move || {
            let me = current_tid();
            // Spin until this thread has run 50 ms of CPU (however loaded the
            // host), then say so and sleep: the clock stops.
            let mut x = 0u64;
            while cpu_time(me).unwrap() < Nanos::from_millis(50) {
                for _ in 0..10_000 {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            tx.send(me).unwrap();
            let _ = wait.recv();
        });
        let tid = rx.recv().unwrap();
        let ran = cpu_time(tid).unwrap();
        assert!(ran >= Nanos::from_millis(50), "{ran}");
        std::thread::sleep(Duration::from_millis(50));
        let later = cpu_time(tid).unwrap();
        assert!(
            later.0 - ran.0 < 5_000_000,
            "a sleeping thread's clock moved"
        );
        go.send(()).unwrap();
        spinner.join().unwrap();
        // Its clock is gone with it. `join` returns when the kernel clears the
        // thread's tid word, a little before it releases the thread, so wait up
        // to a second for that. (Another test's thread may get the id at once;
        // that thread's clock has not run the spinner's 50 ms.)
        let gone = || cpu_time(tid).is_none_or(|t| t < ran);
        let deadline = std::time::Instant::now() + Duration::from_secs(1);
        while !gone() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(
            gone(),
            "the ended thread's clock still reads {:?}",
            cpu_time(tid)
        );
    }
}
