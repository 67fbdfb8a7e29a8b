//! Unit tests of the `iperf3` module.

use super::*;
use netsonde_model::spec::{Direction, TestKind, TestSpec};
use netsonde_model::units::{BitRate, Bytes, Nanos};

fn cookie() -> Cookie {
    Cookie::from_random([7u8; 36])
}

/// Runs both machines against each other, byte by byte where it matters.
#[test]
fn a_whole_session_between_the_two_machines() {
    let spec = {
        let mut s = TestSpec::new(TestKind::TcpStream);
        s.parallel = 4;
        s.duration = Nanos::from_secs(3);
        s.warmup = Nanos::from_secs(1);
        s.direction = Direction::Bidir;
        s
    };
    let params = Params::from_spec(&spec).unwrap();
    let mut c = ClientMachine::new(cookie(), params.clone());
    let mut s = ServerMachine::new();
    // The cookie, one byte at a time: nothing until all 37 are in.
    for b in c.take_output() {
        assert_eq!(s.poll(), None);
        s.feed(&[b]);
    }
    assert_eq!(s.poll(), Some(Iperf3Event::Cookie(cookie())));
    s.accept();
    c.feed(&s.take_output());
    s.feed(&c.take_output());
    let Some(Iperf3Event::Params(p)) = s.poll() else {
        panic!("no parameters")
    };
    assert_eq!(*p, params);
    let back = p.to_spec().unwrap();
    assert_eq!(
        (back.parallel, back.direction, back.duration, back.warmup),
        (4, Direction::Bidir, spec.duration, spec.warmup)
    );
    s.create_streams();
    c.feed(&s.take_output());
    assert_eq!(c.poll(), Some(Iperf3Event::CreateStreams));
    s.start();
    c.feed(&s.take_output());
    assert_eq!(c.poll(), Some(Iperf3Event::TestStart));
    assert_eq!(c.poll(), Some(Iperf3Event::TestRunning));
    c.test_end();
    s.feed(&c.take_output());
    assert_eq!(s.poll(), Some(Iperf3Event::TestEnd));
    s.exchange_results();
    c.feed(&s.take_output());
    assert_eq!(c.poll(), Some(Iperf3Event::ExchangeResults));
    let mine = Results {
        cpu_util_total: 12.5,
        sender_has_retransmits: 1,
        streams: (0..8)
            .map(|k| StreamResult {
                id: stream_id(k),
                bytes: 1000 * k as u64,
                ..StreamResult::default()
            })
            .collect(),
        ..Results::default()
    };
    c.send_results(&mine);
    s.feed(&c.take_output());
    assert_eq!(
        s.poll(),
        Some(Iperf3Event::PeerResults(Box::new(mine.clone())))
    );
    let theirs = Results {
        server_output_text: Some("hello".into()),
        ..mine.clone()
    };
    s.send_results(&theirs);
    c.feed(&s.take_output());
    assert_eq!(c.poll(), Some(Iperf3Event::PeerResults(Box::new(theirs))));
    assert_eq!(c.poll(), Some(Iperf3Event::Done));
    assert!(c.is_over());
    s.feed(&c.take_output());
    assert_eq!(s.poll(), Some(Iperf3Event::Done));
    assert!(s.is_over());
}

#[test]
fn a_busy_or_failing_server_ends_the_client_with_its_reason() {
    let mut c = ClientMachine::new(cookie(), Params::default());
    c.feed(&[State::AccessDenied.byte()]);
    assert_eq!(c.poll(), Some(Iperf3Event::Failed(Iperf3Error::Denied)));
    assert!(c.is_over());

    let mut c = ClientMachine::new(cookie(), Params::default());
    let mut s = ServerMachine::new();
    s.feed(&c.take_output());
    s.poll();
    s.error(IE_RECV_PARAMS, 0);
    c.feed(&s.take_output());
    assert_eq!(
        c.poll(),
        Some(Iperf3Event::Failed(Iperf3Error::ServerError {
            code: IE_RECV_PARAMS,
            errno: 0
        }))
    );
}

#[test]
fn garbage_fails_in_one_step_and_never_buffers_without_bound() {
    let mut s = ServerMachine::new();
    s.feed(&[0u8; 37]);
    assert_eq!(s.poll(), Some(Iperf3Event::Failed(Iperf3Error::BadCookie)));
    let mut s = ServerMachine::new();
    s.feed(&cookie().0);
    s.poll();
    s.accept();
    s.feed(&u32::MAX.to_be_bytes());
    assert!(matches!(
        s.poll(),
        Some(Iperf3Event::Failed(Iperf3Error::TooLong { .. }))
    ));
    let mut s = ServerMachine::new();
    s.feed(&cookie().0);
    s.poll();
    s.accept();
    let mut bad = 5u32.to_be_bytes().to_vec();
    bad.extend_from_slice(b"{oops");
    s.feed(&bad);
    assert!(matches!(
        s.poll(),
        Some(Iperf3Event::Failed(Iperf3Error::BadJson { .. }))
    ));
    // A state byte out of turn.
    let mut c = ClientMachine::new(cookie(), Params::default());
    c.feed(&[State::DisplayResults.byte()]);
    assert!(matches!(
        c.poll(),
        Some(Iperf3Event::Failed(Iperf3Error::UnexpectedState {
            got: 14,
            ..
        }))
    ));
}

#[test]
fn parameters_of_a_real_iperf3_client_become_a_spec() {
    // What iperf3 3.12 sends for `-u -b 0 -l 1400 -P 2 -R -t 5 -O 1`.
    let json = br#"{"udp":true,"omit":1,"time":5,"num":0,"blockcount":0,"parallel":2,"reverse":true,"len":1400,"pacing_timer":1000,"client_version":"3.12"}"#;
    let p: Params = serde_json::from_slice(json).unwrap();
    let s = p.to_spec().unwrap();
    assert_eq!(s.test, TestKind::UdpStream);
    assert_eq!(s.direction, Direction::In);
    assert_eq!(s.size, Bytes(1400));
    // -b 0 sends no bandwidth: unpaced (iperf3's UDP default of 1 Mbit/s is
    // set by its client, and then sent).
    assert_eq!(s.rate, None, "-b 0 is unpaced");
    let paced: Params = serde_json::from_slice(
        br#"{"udp":true,"time":5,"parallel":1,"len":1400,"bandwidth":1048576}"#,
    )
    .unwrap();
    assert_eq!(paced.to_spec().unwrap().rate, Some(BitRate(1_048_576.0)));
    assert_eq!(
        (s.parallel, s.duration, s.warmup),
        (2, Nanos::from_secs(5), Nanos::from_secs(1))
    );
    let by_bytes: Params =
        serde_json::from_slice(br#"{"tcp":true,"time":0,"num":1000000,"parallel":1}"#).unwrap();
    let s = by_bytes.to_spec().unwrap();
    assert_eq!(s.volume, Some(Bytes(1_000_000)));
    assert_eq!(
        s.duration,
        netsonde_model::spec::VOLUME_CAP,
        "time 0 is capped"
    );
    // -k: blocks of the write length; -O comes off the cap.
    let by_blocks: Params = serde_json::from_slice(
        br#"{"tcp":true,"time":0,"omit":2,"blockcount":10,"len":1000,"parallel":2}"#,
    )
    .unwrap();
    let s = by_blocks.to_spec().unwrap();
    assert_eq!(s.volume, Some(Bytes(10_000)));
    assert_eq!(s.stream_volume(), Some(5_000));
    assert_eq!(
        s.duration.saturating_add(s.warmup),
        netsonde_model::spec::VOLUME_CAP
    );
    // And back: one end condition, as iperf3 insists.
    let p = Params::from_spec(&s).unwrap();
    assert_eq!((p.num, p.time), (10_000, 0));
}

#[test]
fn results_as_iperf3_writes_them_parse() {
    // iperf3 3.12's receiver results: -1 retransmits printed unsigned.
    let json = br#"{"cpu_util_total":1.5,"cpu_util_user":0.2,"cpu_util_system":1.3,"sender_has_retransmits":18446744073709551615,"streams":[{"id":1,"bytes":5423218688,"retransmits":18446744073709551615,"jitter":0,"errors":0,"omitted_errors":0,"packets":0,"omitted_packets":0,"start_time":0,"end_time":2.000114}]}"#;
    let r: Results = serde_json::from_slice(json).unwrap();
    assert_eq!(r.sender_has_retransmits, -1);
    assert_eq!(r.streams[0].retransmits, -1);
    assert_eq!(r.streams[0].bytes, 5_423_218_688);
    assert_eq!(r.streams[0].end_time, Some(2.000114));
}

#[test]
fn cookies_and_stream_numbers_are_iperf3s() {
    let c = cookie();
    assert_eq!(c.0[36], 0);
    assert!(Cookie::parse(&c.0).is_ok());
    assert!(Cookie::may_start_with(c.0[0]));
    assert!(!Cookie::may_start_with(0), "a netsonde frame starts with 0");
    assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
    assert_eq!(LEGACY_UDP_CONNECT_REPLY, [0xb1, 0x68, 0xde, 0x3a]);
}
