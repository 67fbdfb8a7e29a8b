//! Unit tests of `spec.rs`.

use super::*;

#[test]
fn defaults_validate() {
    for k in TestKind::ALL {
        TestSpec::new(k).validate().unwrap();
    }
}

#[test]
fn bad_sizes_refused() {
    let mut s = TestSpec::new(TestKind::TcpStream);
    s.size = Bytes(0);
    assert!(matches!(
        s.validate(),
        Err(SpecError::SizeOutOfRange { .. })
    ));
    s.size = Bytes(Bytes::GIB + 1);
    assert!(matches!(
        s.validate(),
        Err(SpecError::SizeOutOfRange { .. })
    ));
    let mut u = TestSpec::new(TestKind::UdpStream);
    u.size = Bytes(8);
    assert!(matches!(u.validate(), Err(SpecError::DatagramSize { .. })));
}

#[test]
fn bad_combinations_refused() {
    let mut s = TestSpec::new(TestKind::TcpRr);
    s.direction = Direction::Bidir;
    let e = s.validate().unwrap_err();
    assert!(
        e.to_string().contains("--bidir makes no sense with tcp-rr"),
        "{e}"
    );
    let mut u = TestSpec::new(TestKind::UdpStream);
    u.mss = Some(1000);
    assert!(matches!(u.validate(), Err(SpecError::NotApplicable { .. })));
    let mut d = TestSpec::new(TestKind::TcpStream);
    d.duration = Nanos::ZERO;
    assert!(matches!(
        d.validate(),
        Err(SpecError::DurationOutOfRange { .. })
    ));
    d.duration = Nanos::from_secs(100 * 3600);
    assert!(matches!(
        d.validate(),
        Err(SpecError::DurationOutOfRange { .. })
    ));
    let mut c = TestSpec::new(TestKind::TcpStream);
    c.congestion = Some("bbr; rm -rf".into());
    assert!(matches!(c.validate(), Err(SpecError::BadCongestion(_))));
}

#[test]
fn unknown_test_named() {
    let e = "tcp-foo".parse::<TestKind>().unwrap_err();
    assert!(e.to_string().contains("unknown test 'tcp-foo'"));
}

#[test]
fn flows_per_direction() {
    let mut s = TestSpec::new(TestKind::TcpStream);
    s.parallel = 2;
    s.direction = Direction::Bidir;
    assert_eq!(
        s.flows(),
        vec![
            (0, FlowDir::Up),
            (1, FlowDir::Up),
            (2, FlowDir::Down),
            (3, FlowDir::Down)
        ]
    );
    let r = TestSpec::new(TestKind::TcpRr);
    assert_eq!(r.flows(), vec![(0, FlowDir::Up)]);
}

#[test]
fn io_strategies_apply_where_they_make_sense() {
    let mut s = TestSpec::new(TestKind::UdpStream);
    s.tx_io = IoStrategy::Sendfile;
    assert!(s
        .validate()
        .unwrap_err()
        .to_string()
        .contains("--tx-io sendfile makes no sense with udp-stream"));
    let mut s = TestSpec::new(TestKind::TcpRr);
    s.tx_io = IoStrategy::Busypoll;
    s.rx_io = IoStrategy::Busypoll;
    s.validate().unwrap();
    s.rx_io = IoStrategy::Batch;
    assert!(s.validate().is_err());
    let mut s = TestSpec::new(TestKind::TcpStream);
    s.rx_io = IoStrategy::Zerocopy;
    s.validate().unwrap();
    s.verify = true;
    assert!(s.validate().is_err());
    assert_eq!("uring".parse::<IoStrategy>().unwrap(), IoStrategy::Uring);
    assert!("dpdk"
        .parse::<IoStrategy>()
        .unwrap_err()
        .to_string()
        .contains("unknown I/O strategy"));
}

#[test]
fn a_one_sided_strategy_pairs_with_copy_on_its_other_side() {
    use IoStrategy::*;
    assert_eq!(Xdp.sides(TestKind::UdpStream), (Copy, Xdp));
    assert_eq!(Sendfile.sides(TestKind::TcpStream), (Sendfile, Copy));
    assert_eq!(Batch.sides(TestKind::UdpStream), (Batch, Batch));
    // Neither side: kept, and validation says why.
    assert_eq!(Xdp.sides(TestKind::TcpStream), (Xdp, Xdp));
    let mut s = TestSpec::new(TestKind::TcpStream);
    (s.tx_io, s.rx_io) = Xdp.sides(s.test);
    assert!(s
        .validate()
        .unwrap_err()
        .to_string()
        .contains("xdp receives UDP"));
    let mut u = TestSpec::new(TestKind::UdpStream);
    (u.tx_io, u.rx_io) = Xdp.sides(u.test);
    u.validate().unwrap();
    u.parallel = 2;
    assert!(u
        .validate()
        .unwrap_err()
        .to_string()
        .contains("for one flow"));
}

#[test]
fn spec_rejects_unknown_fields() {
    let mut v = serde_json::to_value(TestSpec::new(TestKind::TcpRr)).unwrap();
    v["bogus"] = serde_json::json!(1);
    assert!(serde_json::from_value::<TestSpec>(v).is_err());
}

/// Issue 37.5: a stored single test says its direction and streams.
#[test]
fn a_label_says_direction_and_streams_as_iperf3_flags() {
    let mut s = TestSpec::new(TestKind::TcpStream);
    assert_eq!(s.label(), "tcp-stream");
    s.direction = Direction::In;
    s.parallel = 4;
    assert_eq!(s.label(), "tcp-stream -R -P 4");
    s.direction = Direction::Bidir;
    s.parallel = 1;
    assert_eq!(s.label(), "tcp-stream --bidir");
}
