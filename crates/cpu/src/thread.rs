//! CPU time of one thread, read from any thread of the process.
//!
//! Linux gives every thread a CPU-time clock; its id is the thread id encoded as
//! glibc's `pthread_getcpuclockid` does (`MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`
//! in `include/linux/posix-timers.h`: `(~tid << 3) | 6`), so a sampler can read a
//! flow thread's clock without the flow doing anything on its data path. The clock
//! counts the scheduler's exact run time (user and system, and any softirq run in the
//! thread's context), in nanoseconds.

use netsonde_model::units::Nanos;

/// The calling thread's id, for [`cpu_time`] later.
pub fn current_tid() -> i32 {
    rustix::thread::gettid().as_raw_nonzero().get()
}

/// CPU time thread `tid` of this process has run so far; `None` once it has
/// exited.
pub fn cpu_time(tid: i32) -> Option<Nanos> {
    let id = ((!tid) << 3) | 6;
    let (sec, nsec) = crate::sys::usage::clock_time(id).ok()?;
    Some(Nanos(
        u64::try_from(sec).ok()? * 1_000_000_000 + u64::try_from(nsec).ok()?,
    ))
}

/// What `/proc/self/task/TID/stat` says of a thread: its user and system time so
/// far (at the kernel's tick, 10 ms on most hosts) and the core it last ran on.
/// The clock of [`cpu_time`] is exact but does not split user from system time;
/// this does, coarsely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskStat {
    /// User time.
    pub user: Nanos,
    /// System time (with the softirq work run in the thread's context, unless the
    /// kernel accounts irq time apart: `CONFIG_IRQ_TIME_ACCOUNTING`).
    pub sys: Nanos,
    /// The core it last ran on.
    pub core: Option<u32>,
    /// Time it waited on a run queue, runnable but not running
    /// (`/proc/self/task/TID/schedstat`, nanoseconds); `None` where the kernel
    /// does not keep it.
    pub wait: Option<Nanos>,
}

/// Parses one `/proc/PID/task/TID/stat` line; `tick` is the length of a clock
/// tick (`1 s / CLK_TCK`).
pub fn parse_task_stat(line: &str, tick: Nanos) -> Option<TaskStat> {
    // The command name is in parentheses and may hold spaces or parentheses.
    let rest = &line[line.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name, field k of proc(5) is at k - 3: utime 14, stime 15,
    // processor 39.
    let ticks = |i: usize| -> Option<Nanos> {
        let t: u64 = f.get(i)?.parse().ok()?;
        Some(Nanos(t.saturating_mul(tick.0)))
    };
    Some(TaskStat {
        user: ticks(11)?,
        sys: ticks(12)?,
        core: f.get(36).and_then(|c| c.parse().ok()),
        wait: None,
    })
}

/// The run-queue wait of a `schedstat` line: "run wait timeslices", in ns.
pub fn parse_schedstat(line: &str) -> Option<Nanos> {
    let f: Vec<u64> = line
        .split_whitespace()
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    match f.as_slice() {
        // A kernel that keeps no scheduler statistics says 0 for all.
        [0, 0, _] | [] => None,
        [_, wait, ..] => Some(Nanos(*wait)),
        _ => None,
    }
}

/// The length of a clock tick, from `CLK_TCK` (10 ms where it cannot be read).
pub fn tick() -> Nanos {
    Nanos(1_000_000_000 / clock_ticks())
}

/// Clock ticks per second (`CLK_TCK`, from the auxiliary vector; 100 where it
/// says 0).
pub(crate) fn clock_ticks() -> u64 {
    match rustix::param::clock_ticks_per_second() {
        0 => 100,
        hz => hz,
    }
}

/// Thread `tid` of this process's user and system time and last core; `None`
/// once it has exited.
pub fn task_stat(tid: i32) -> Option<TaskStat> {
    let line = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    let mut s = parse_task_stat(&line, tick())?;
    s.wait = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()
        .and_then(|l| parse_schedstat(&l));
    Some(s)
}

/// The calling thread's run-queue wait since it was born
/// (`/proc/thread-self/schedstat`): `None` where the kernel keeps none.
pub fn own_wait() -> Option<Nanos> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|l| parse_schedstat(&l))
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

    #[test]
    fn task_stat_lines_give_user_system_and_core() {
        let line = "4242 (flow (0) x) R 1 4242 4242 0 -1 4194368 10 0 0 0 7 93 0 0 20 0 3 0 \
                    500 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        let s = parse_task_stat(line, Nanos::from_millis(10)).unwrap();
        assert_eq!(s.user, Nanos::from_millis(70));
        assert_eq!(s.sys, Nanos::from_millis(930));
        assert_eq!(s.core, Some(1));
        assert_eq!(parse_task_stat("1 (x) R 1", Nanos(1)), None);
        assert_eq!(parse_task_stat("garbage", Nanos(1)), None);
        assert_eq!(
            parse_schedstat("240656516 22807369 833\n"),
            Some(Nanos(22_807_369))
        );
        assert_eq!(parse_schedstat("0 0 1"), None);
        assert_eq!(parse_schedstat("x y"), None);
    }

    #[test]
    fn this_threads_task_stat_reads() {
        let s = task_stat(current_tid()).expect("our own thread's stat");
        assert!(s.core.is_some(), "{s:?}");
    }
}
