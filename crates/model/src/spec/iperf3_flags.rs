//! A test as the iperf3 command line that asks for it: what a stored iperf3
//! client's session is labelled with, so its flags (-u -b 0 -l 64 -w 8K)
//! say what ran.

use super::{Direction, TestKind, TestSpec};

/// `n` bytes as iperf3 writes a size: `64K`, `1M`, or plain.
fn size(n: u64) -> String {
    match n {
        0 => "0".into(),
        n if n % (1 << 30) == 0 => format!("{}G", n >> 30),
        n if n % (1 << 20) == 0 => format!("{}M", n >> 20),
        n if n % (1 << 10) == 0 => format!("{}K", n >> 10),
        n => n.to_string(),
    }
}

/// A rate in bit/s as iperf3's -b takes it: `100M`, `1G`, or plain.
fn rate(bps: f64) -> String {
    let b = bps.round() as u64;
    match b {
        0 => "0".into(),
        b if b % 1_000_000_000 == 0 => format!("{}G", b / 1_000_000_000),
        b if b % 1_000_000 == 0 => format!("{}M", b / 1_000_000),
        b if b % 1_000 == 0 => format!("{}K", b / 1_000),
        b => b.to_string(),
    }
}

impl TestSpec {
    /// The iperf3 client's flags for this test of a stream kind:
    /// `-u -b 0 -l 64 -w 8K -P 2 -R -t 10`.
    pub fn iperf3_flags(&self) -> String {
        let mut f: Vec<String> = Vec::new();
        let udp = self.test == TestKind::UdpStream;
        if udp {
            f.push("-u".into());
        }
        match (self.rate, udp) {
            (Some(r), _) => f.push(format!("-b {}", rate(r.0))),
            // Unpaced UDP is asked for: iperf3's own default is 1 Mbit/s.
            (None, true) => f.push("-b 0".into()),
            (None, false) => {}
        }
        f.push(format!("-l {}", size(self.size.0)));
        if let Some(w) = self.window {
            f.push(format!("-w {}", size(w.0)));
        }
        if let Some(m) = self.mss {
            f.push(format!("-M {m}"));
        }
        if let Some(c) = &self.congestion {
            f.push(format!("-C {c}"));
        }
        if self.nodelay {
            f.push("-N".into());
        }
        if self.parallel > 1 {
            f.push(format!("-P {}", self.parallel));
        }
        match self.direction {
            Direction::Out => {}
            Direction::In => f.push("-R".into()),
            Direction::Bidir => f.push("--bidir".into()),
        }
        match self.volume {
            Some(v) => f.push(format!("-n {}", size(v.0))),
            None => f.push(format!("-t {}", self.duration.as_secs_f64())),
        }
        if self.warmup.0 > 0 {
            f.push(format!("-O {}", self.warmup.as_secs_f64()));
        }
        f.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use crate::spec::{Direction, TestKind, TestSpec};
    use crate::units::{BitRate, Bytes, Nanos};

    #[test]
    fn a_test_reads_as_the_iperf3_flags_that_ask_for_it() {
        let mut s = TestSpec::new(TestKind::UdpStream);
        s.size = Bytes(64);
        s.window = Some(Bytes(8192));
        s.rate = None;
        s.duration = Nanos::from_secs(1);
        s.warmup = Nanos(0);
        assert_eq!(s.iperf3_flags(), "-u -b 0 -l 64 -w 8K -t 1");
        let mut t = TestSpec::new(TestKind::TcpStream);
        t.size = Bytes(128 * 1024);
        t.rate = Some(BitRate(100e6));
        t.mss = Some(1400);
        t.congestion = Some("cubic".into());
        t.parallel = 2;
        t.direction = Direction::In;
        t.volume = Some(Bytes(1 << 30));
        t.warmup = Nanos::from_secs(1);
        assert_eq!(
            t.iperf3_flags(),
            "-b 100M -l 128K -M 1400 -C cubic -P 2 -R -n 1G -O 1"
        );
    }
}
