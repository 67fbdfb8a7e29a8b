//! What the other processes on the host ran: the foreign load.
//!
//! Every user process's CPU time (`utime` + `stime` in `/proc/PID/stat`, in clock
//! ticks) except this process's own, summed at the start and at the end of an
//! interval. Kernel threads are left out: their busy time (ksoftirqd, the NIC's
//! workers), with the interrupt work no process is charged for, is the kernel's
//! network work, which `netsonde-model`'s attribution shares between the test and
//! the foreign load by the test's share of the bytes the host's interfaces
//! counted (read here too, over every network namespace a process is in).
//! Processes that start during the interval count all their time; those that exit
//! during it count nothing, so the figure can only err low.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Mutex;

use netsonde_model::cpu::ForeignProcess;
use netsonde_model::units::Nanos;

/// Other processes that are part of the test, not foreign load: a peer tool's
/// server on this host (an `iperf3 -s` the client found listening), or the lab
/// that carries the test's packets through its emulator.
static PART_OF_TEST: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Counts process `pid` as part of the test from now on: [`Others`] leaves it
/// out of the foreign load.
pub fn count_as_test(pid: u32) {
    let mut v = PART_OF_TEST.lock().unwrap_or_else(|e| e.into_inner());
    if !v.contains(&pid) {
        v.push(pid);
    }
}

/// The processes counted as part of the test.
pub fn part_of_test() -> Vec<u32> {
    PART_OF_TEST
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
}

/// One socket of `/proc/net/tcp` or `tcp6`: its local address, its state (10 is
/// LISTEN) and its inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpSocket {
    /// Local address and port.
    pub local: SocketAddr,
    /// The kernel's TCP state number.
    pub state: u8,
    /// The socket's inode, as `/proc/PID/fd` links name it (`socket:[N]`).
    pub inode: u64,
}

/// The sockets of a `/proc/net/tcp` or `/proc/net/tcp6` table. Addresses are
/// hex, each 32-bit word in the host's byte order (little-endian here).
pub fn parse_proc_net_tcp(text: &str) -> Vec<TcpSocket> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (addr, port) = f.get(1)?.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let ip = match addr.len() {
                8 => IpAddr::V4(Ipv4Addr::from(
                    u32::from_str_radix(addr, 16).ok()?.swap_bytes(),
                )),
                32 => {
                    let mut b = [0u8; 16];
                    for (i, w) in b.chunks_mut(4).enumerate() {
                        let word = u32::from_str_radix(addr.get(8 * i..8 * i + 8)?, 16).ok()?;
                        w.copy_from_slice(&word.to_le_bytes());
                    }
                    IpAddr::V6(Ipv6Addr::from(b))
                }
                _ => return None,
            };
            Some(TcpSocket {
                local: SocketAddr::new(ip, port),
                state: u8::from_str_radix(f.get(3)?, 16).ok()?,
                inode: f.get(9)?.parse().ok()?,
            })
        })
        .collect()
}

/// The process on this host (and in this network namespace) listening on `addr`
/// (its exact address or the wildcard), found through its socket's inode in
/// `/proc/PID/fd`: the server a client reached on loopback or a local address.
/// `None` when no process here listens there (the server is elsewhere), or it
/// cannot be read.
pub fn listener_of(addr: SocketAddr) -> Option<u32> {
    const LISTEN: u8 = 10;
    owner_of(addr, ["/proc/net/tcp", "/proc/net/tcp6"], LISTEN)
}

/// As [`listener_of`], for a UDP socket bound to `addr` and not connected (a
/// QUIC server's).
pub fn udp_server_of(addr: SocketAddr) -> Option<u32> {
    /// `TCP_CLOSE`, as `/proc/net/udp` shows an unconnected socket.
    const UNCONNECTED: u8 = 7;
    owner_of(addr, ["/proc/net/udp", "/proc/net/udp6"], UNCONNECTED)
}

/// The process holding the socket of `tables` in `state` bound to `addr`.
fn owner_of(addr: SocketAddr, tables: [&str; 2], state: u8) -> Option<u32> {
    let sockets: Vec<TcpSocket> = tables
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .flat_map(|t| parse_proc_net_tcp(&t))
        .collect();
    let inode = sockets
        .iter()
        .find(|s| {
            s.state == state
                && s.local.port() == addr.port()
                && (s.local.ip() == addr.ip() || s.local.ip().is_unspecified())
        })?
        .inode;
    let want = format!("socket:[{inode}]");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == want.as_str()))
            .then_some(pid)
    })
}

/// `PF_KTHREAD` in `/proc/PID/stat`'s flags: a kernel thread.
const PF_KTHREAD: u64 = 0x0020_0000;

/// What one other process ran: its CPU ticks, its name and the core it last ran on.
#[derive(Debug, Clone, Default)]
struct Proc {
    ticks: u64,
    name: String,
    core: Option<u32>,
}

/// What the rest of the host did, read at one instant: every other user
/// process's CPU ticks (by pid, with its name and last core), the processes that
/// are part of the test ([`count_as_test`]) apart, and the bytes every network
/// interface of every network namespace a process is in had counted (received
/// plus sent): the traffic the host's stack handled, against which a test's
/// share of the kernel's network work is taken.
#[derive(Debug, Clone, Default)]
pub struct Others {
    procs: HashMap<u32, Proc>,
    partners: HashMap<u32, u64>,
    /// Interface bytes of each network namespace found (by its `net:[N]`
    /// name); empty when not even this process's namespace could be read.
    stack_bytes: HashMap<String, u64>,
}

/// One `/proc/PID/stat` line's fields that matter here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatLine {
    /// The command name (`comm`).
    pub name: String,
    /// The kernel's task flags (`PF_KTHREAD` marks a kernel thread).
    pub flags: u64,
    /// utime + stime, and the cutime + cstime of its children it reaped (a
    /// shell loop's short-lived commands, which no reading ever sees alive),
    /// in clock ticks.
    pub ticks: u64,
    /// The core it last ran on (field 39).
    pub core: Option<u32>,
}

/// One `/proc/PID/stat` line, whole.
pub fn parse_stat_line(line: &str) -> Option<StatLine> {
    // The command name is in parentheses and may hold spaces or parentheses.
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let name = line.get(open + 1..close)?.to_string();
    let f: Vec<&str> = line[close + 1..].split_whitespace().collect();
    // After the name: state is field 3, flags 9, utime 14, stime 15, processor 39.
    let flags = f.get(6)?.parse().ok()?;
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    let reaped: u64 = [13, 14]
        .iter()
        .filter_map(|&i| f.get(i)?.parse::<u64>().ok())
        .sum();
    Some(StatLine {
        name,
        flags,
        ticks: utime + stime + reaped,
        core: f.get(36).and_then(|c| c.parse().ok()),
    })
}

/// The bytes every interface of a `/proc/net/dev` table counted, received plus
/// sent.
pub fn parse_net_dev(text: &str) -> Option<u64> {
    let mut total = None;
    for line in text.lines().skip(2) {
        let Some((_, fields)) = line.split_once(':') else {
            continue;
        };
        let f: Vec<u64> = fields
            .split_whitespace()
            .filter_map(|v| v.parse().ok())
            .collect();
        // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes ...
        if let (Some(rx), Some(tx)) = (f.first(), f.get(8)) {
            total = Some(total.unwrap_or(0u64) + rx + tx);
        }
    }
    total
}

/// The network namespace of process `pid`, by its inode (`net:[N]`).
fn netns_of(pid: &str) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/net")).ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// What the processes of `later` grew by since `earlier` (a new one by all it
/// has), less the ticks that the ones gone by then had at `earlier`.
fn grown<T>(earlier: &HashMap<u32, T>, later: &HashMap<u32, T>, ticks: impl Fn(&T) -> u64) -> u64 {
    let grew: u64 = later
        .iter()
        .map(|(pid, p)| ticks(p).saturating_sub(earlier.get(pid).map_or(0, &ticks)))
        .sum();
    let gone: u64 = earlier
        .iter()
        .filter(|(pid, _)| !later.contains_key(pid))
        .map(|(_, p)| ticks(p))
        .sum();
    grew.saturating_sub(gone)
}

impl Others {
    /// Reads every process's figures, and every namespace's interfaces, now.
    pub fn read() -> Others {
        let me = std::process::id();
        let ours = part_of_test();
        let mut out = Others::default();
        let mut seen_ns = std::collections::HashSet::new();
        let mut add_ns = |out: &mut Others, pid: &str| {
            // A namespace is read through the first process found in it.
            let Some(ns) = netns_of(pid) else { return };
            if seen_ns.insert(ns.clone()) {
                let dev = std::fs::read_to_string(format!("/proc/{pid}/net/dev")).ok();
                if let Some(b) = dev.as_deref().and_then(parse_net_dev) {
                    out.stack_bytes.insert(ns, b);
                }
            }
        };
        add_ns(&mut out, "self");
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Some(name) = e.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let Ok(pid) = name.parse::<u32>() else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(line) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            let Some(st) = parse_stat_line(&line) else {
                continue;
            };
            if st.flags & PF_KTHREAD != 0 {
                continue;
            }
            add_ns(&mut out, &name);
            if ours.contains(&pid) {
                out.partners.insert(pid, st.ticks);
            } else {
                out.procs.insert(
                    pid,
                    Proc {
                        ticks: st.ticks,
                        name: st.name,
                        core: st.core,
                    },
                );
            }
        }
        out
    }

    fn ticks_to_nanos(ticks: u64) -> Nanos {
        Nanos(ticks.saturating_mul(1_000_000_000) / crate::thread::clock_ticks())
    }

    /// The CPU time the other processes ran between `self` (earlier) and
    /// `later`: each one's growth, its reaped children's included (so a shell
    /// loop's short-lived commands count, through the shell), less what the
    /// processes that ended in between had run before (a parent that reaped
    /// one gained its whole life, of which only the part after `self` is in
    /// the interval).
    pub fn since(&self, later: &Others) -> Nanos {
        Others::ticks_to_nanos(grown(&self.procs, &later.procs, |p| p.ticks))
    }

    /// The CPU time the processes that are part of the test (a peer tool's
    /// server, the lab's emulator) ran between `self` and `later`.
    pub fn partners_since(&self, later: &Others) -> Nanos {
        Others::ticks_to_nanos(grown(&self.partners, &later.partners, |t| *t))
    }

    /// The bytes the host's interfaces counted between `self` and `later`,
    /// over the namespaces seen at both readings: one that vanished in between
    /// (its last process exited) or appeared takes its bytes with it, so it is
    /// left out of both rather than counted as a fall to nothing (which made
    /// the whole host's kernel work the test's) or as all it ever carried.
    pub fn stack_bytes_since(&self, later: &Others) -> Option<u64> {
        let mut both = self
            .stack_bytes
            .iter()
            .filter_map(|(ns, a)| Some(later.stack_bytes.get(ns)?.saturating_sub(*a)))
            .peekable();
        both.peek()?;
        Some(both.sum())
    }

    /// The `n` other processes that ran most between `self` and `later`, with
    /// the core each last ran on: who the foreign load was.
    pub fn top_since(&self, later: &Others, n: usize) -> Vec<ForeignProcess> {
        let mut v: Vec<ForeignProcess> = later
            .procs
            .iter()
            .filter_map(|(pid, p)| {
                let t = p
                    .ticks
                    .saturating_sub(self.procs.get(pid).map_or(0, |q| q.ticks));
                (t > 0).then(|| ForeignProcess {
                    pid: *pid,
                    name: p.name.clone(),
                    cpu: Others::ticks_to_nanos(t),
                    core: p.core,
                })
            })
            .collect();
        v.sort_by(|a, b| b.cpu.cmp(&a.cpu).then(a.pid.cmp(&b.pid)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn stat_lines_parse_whatever_the_name() {
        let line =
            "1234 (a (weird) name) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 40 0 0 20 0 1 0 5 0 0";
        let st = parse_stat_line(line).unwrap();
        assert_eq!((st.flags, st.ticks), (4194560, 290));
        assert_eq!(st.name, "a (weird) name");
        let kthread = "12 (ksoftirqd/0) S 2 0 0 0 -1 69238848 0 0 0 0 7 31 0 0 20 0 1 0 5 0 0";
        let st = parse_stat_line(kthread).unwrap();
        assert!(st.flags & PF_KTHREAD != 0);
        assert_eq!(st.ticks, 38);
        assert_eq!(parse_stat_line("garbage"), None);
    }

    /// Issue 50: a shell loop forking short-lived commands. None of them is
    /// ever seen alive; the shell's reaped children's time is theirs. A
    /// process that ended and was reaped counts only what it ran after the
    /// first reading; a namespace that vanished (its last process exited)
    /// leaves the stack's bytes as the namespaces seen twice counted them.
    #[test]
    fn reaped_children_count_and_ended_processes_count_only_their_interval() {
        let line = "77 (sh) S 1 77 77 0 -1 4194560 0 0 0 0 10 20 300 400 20 0 1 0 5 0 0";
        assert_eq!(parse_stat_line(line).unwrap().ticks, 730);
        let m = |v: &[(u32, u64)]| -> HashMap<u32, u64> { v.iter().copied().collect() };
        // A fork loop's shell: 30 ticks of commands reaped.
        assert_eq!(grown(&m(&[(1, 100)]), &m(&[(1, 130)]), |t| *t), 30);
        // A child seen at 50 ticks ran 5 more, ended, and its parent (which
        // ran 10 itself) reaped its 55: 15 in the interval, not 65.
        assert_eq!(grown(&m(&[(1, 100), (2, 50)]), &m(&[(1, 165)]), |t| *t), 15);
        // A new process counts all it ran.
        assert_eq!(grown(&m(&[(1, 100)]), &m(&[(1, 100), (3, 7)]), |t| *t), 7);
        let ns = |v: &[(&str, u64)]| Others {
            stack_bytes: v.iter().map(|(n, b)| (n.to_string(), *b)).collect(),
            ..Others::default()
        };
        let (a, b) = (
            ns(&[("net:[1]", 100), ("net:[2]", 5000)]),
            ns(&[("net:[1]", 150)]),
        );
        assert_eq!(a.stack_bytes_since(&b), Some(50));
        let c = ns(&[("net:[1]", 180), ("net:[3]", 1 << 40)]);
        assert_eq!(b.stack_bytes_since(&c), Some(30));
        assert_eq!(ns(&[]).stack_bytes_since(&c), None);
    }

    #[test]
    fn proc_net_tcp_tables_parse() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:14B3 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 81234 1 0000000000000000 100 0 0 10 0
   1: 0100007F:9C40 0100007F:14B3 01 00000000:00000000 00:00000000 00000000     0        0 81299 1 0000000000000000 20 4 30 10 -1
";
        let s = parse_proc_net_tcp(v4);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].local, "127.0.0.1:5299".parse().unwrap());
        assert_eq!((s[0].state, s[0].inode), (10, 81234));
        let v6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:14B3 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 90001 1 0000000000000000 100 0 0 10 0
";
        let s = parse_proc_net_tcp(v6);
        assert_eq!(s[0].local, "[::1]:5299".parse().unwrap());
        assert!(parse_proc_net_tcp("garbage\n1: zz:zz").is_empty());
    }

    /// A listener of this process is found by its address.
    #[test]
    fn the_listener_of_a_local_port_is_its_process() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        assert_eq!(listener_of(addr), Some(std::process::id()));
        drop(l);
        assert_eq!(listener_of(addr), None);
    }

    /// A child that spins shows up; this process, spinning too, does not.
    /// Judged per process, not on the total: the test runner's other test
    /// processes run alongside and are (rightly) other load too.
    #[test]
    fn another_process_spinning_is_counted_and_this_one_is_not() {
        let before = Others::read();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        // Spin until the child has run 100 ms (at most 5 s: a loaded host
        // schedules it late).
        let until = Instant::now() + Duration::from_secs(5);
        let mut x = 0u64;
        let mut after = Others::read();
        while Instant::now() < until && after.procs.get(&pid).map_or(0, |p| p.ticks) < 10 {
            for _ in 0..1_000_000 {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            after = Others::read();
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            after.procs.get(&pid).map_or(0, |p| p.ticks) >= 10,
            "{after:?}"
        );
        assert!(!after.procs.contains_key(&std::process::id()));
        let top = before.top_since(&after, 3);
        assert!(
            top.iter().any(|p| p.pid == pid && p.name == "sh"),
            "{top:?}"
        );
        assert!(before.since(&after) >= Nanos::from_millis(100));
    }
}
