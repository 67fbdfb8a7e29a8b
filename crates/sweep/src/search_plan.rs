//! The plan of a loss-free rate search: one point per frame size and I/O
//! strategy, each a UDP stream of the frame's payload or a TCP stream of one
//! segment per message (RFC 2544 counts frames with their MAC header and FCS).

use netsonde_model::spec::{Direction, IoStrategy, TestKind, TestSpec};
use netsonde_model::units::{Bytes, Nanos};

use crate::search::{FRAME_OVERHEAD, RFC2544_FRAMES, TCP_FRAME_OVERHEAD};
use crate::Plan;

/// What a search is asked to cover.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchPlan {
    /// A TCP connection's retransmissions, not UDP datagrams' loss.
    pub tcp: bool,
    /// Frame sizes in bytes; `None`: RFC 2544's (for TCP from 128 B).
    pub frames: Option<Vec<u32>>,
    /// Strategies, each searched on its own.
    pub io: Vec<IoStrategy>,
    /// One sender for every point.
    pub tx_io: Option<IoStrategy>,
    /// Measured time of a trial.
    pub trial: Nanos,
    /// Warm-up before it.
    pub warmup: Nanos,
    /// Both ends' socket buffers (`None`: the kernel's).
    pub window: Option<Bytes>,
    /// Whether back-to-back bursts are asked for too.
    pub back_to_back: bool,
}

impl SearchPlan {
    /// The plan, or why it cannot be searched.
    pub fn plan(&self) -> Result<Plan, String> {
        let tcp = self.tcp;
        // A TCP segment's payload is the frame less 70 B: from 128 B frames on.
        let frames: Vec<u32> = match &self.frames {
            Some(f) => f.clone(),
            None => RFC2544_FRAMES
                .into_iter()
                .filter(|&f| !tcp || f >= 128)
                .collect(),
        };
        if frames.is_empty() || self.io.is_empty() {
            return Err("nothing to search: give --frames and --io".into());
        }
        let (overhead, least, most, what) = if tcp {
            (
                TCP_FRAME_OVERHEAD,
                128,
                9_018,
                "a TCP segment's payload is the frame less 70 B: from 128 B frames, a 58 B payload",
            )
        } else {
            // The datagram carries a 16-byte sequence number and send time.
            (
                FRAME_OVERHEAD,
                FRAME_OVERHEAD + 16,
                65_535,
                "the UDP payload is the frame less 46 B and carries a 16-byte header",
            )
        };
        if let Some(f) = frames.iter().find(|f| !(least..=most).contains(*f)) {
            return Err(format!(
                "frame size {f} B: between {least} and {most} B ({what})"
            ));
        }
        if tcp && self.back_to_back {
            return Err(
                "--back-to-back is a UDP search's: a TCP sender's bursts are its congestion window's"
                    .into(),
            );
        }
        let test = if tcp {
            TestKind::TcpStream
        } else {
            TestKind::UdpStream
        };
        let mut base = TestSpec::new(test);
        base.duration = self.trial;
        base.warmup = self.warmup;
        base.window = self.window;
        // One segment per message, sent when written.
        base.nodelay = tcp;
        base.validate().map_err(|e| e.to_string())?;
        let mut plan = Plan::default_characterization();
        plan.base = base;
        plan.tests = vec![test];
        plan.directions = vec![Direction::Out];
        plan.sizes = frames
            .iter()
            .map(|&f| Bytes(u64::from(f - overhead)))
            .collect();
        plan.windows = vec![self.window];
        plan.parallel = vec![1];
        plan.io = self.io.clone();
        plan.tx_io = self.tx_io;
        plan.repeat = 1;
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn udp() -> SearchPlan {
        SearchPlan {
            tcp: false,
            frames: None,
            io: vec![IoStrategy::Copy],
            tx_io: None,
            trial: Nanos(1_000_000_000),
            warmup: Nanos(250_000_000),
            window: None,
            back_to_back: false,
        }
    }

    #[test]
    fn a_frame_becomes_its_payload_and_bad_frames_are_refused() {
        let p = udp().plan().unwrap();
        assert_eq!(p.sizes.first(), Some(&Bytes(64 - 46)));
        let tcp = SearchPlan { tcp: true, ..udp() };
        assert_eq!(tcp.plan().unwrap().sizes.first(), Some(&Bytes(128 - 70)));
        let small = SearchPlan {
            frames: Some(vec![60]),
            ..udp()
        };
        assert!(small.plan().unwrap_err().contains("frame size 60 B"));
        let burst = SearchPlan {
            back_to_back: true,
            ..tcp
        };
        assert!(burst.plan().unwrap_err().contains("--back-to-back"));
    }
}
