//! Unit tests of `link.rs`.

use super::*;

fn settings(f: impl FnOnce(&mut LinkSettings)) -> Result<LinkSpec, LinkError> {
    let mut s = LinkSettings::default();
    f(&mut s);
    s.spec()
}

#[test]
fn one_value_sets_both_directions_and_slash_splits() {
    let s = settings(|s| {
        s.delay = Some("10ms".into());
        s.rate = Some("100M/1G".into());
        s.mtu = Some("9000".into());
    })
    .unwrap();
    assert_eq!(s.up.delay, Nanos::from_millis(10));
    assert_eq!(s.down.delay, Nanos::from_millis(10));
    assert_eq!(s.up.rate, Some(BitRate(1e8)));
    assert_eq!(s.down.rate, Some(BitRate(1e9)));
    assert_eq!((s.up.mtu, s.down.mtu), (9000, 9000));
    assert!(s.impaired());
    assert_eq!(
        s.to_string(),
        "client->server mtu 9000, rate 100.00 Mbit/s, delay 10.00 ms; server->client mtu 9000, rate 1.00 Gbit/s, delay 10.00 ms"
    );
    // A rate written with bit/s is not split.
    let s = settings(|s| s.rate = Some("10Mbit/s".into())).unwrap();
    assert_eq!(s.down.rate, Some(BitRate(1e7)));
    assert!(!s.impaired());
}

#[test]
fn loss_models_parse() {
    assert_eq!("0".parse::<Loss>().unwrap(), Loss::None);
    assert_eq!(
        "1.5%".parse::<Loss>().unwrap(),
        Loss::Random { percent: 1.5 }
    );
    let ge = "gemodel:1%,30%".parse::<Loss>().unwrap();
    assert_eq!(
        ge,
        Loss::GilbertElliott {
            p: 1.0,
            r: 30.0,
            bad: 100.0,
            good: 0.0
        }
    );
    assert!((ge.mean_percent() - 100.0 / 31.0).abs() < 1e-9);
    assert_eq!(ge.to_string().parse::<Loss>().unwrap(), ge);
    assert!("gemodel:1%".parse::<Loss>().is_err());
    assert!("101%".parse::<Loss>().is_err());
    assert!("x".parse::<Loss>().is_err());
}

#[test]
fn queues_parse() {
    assert_eq!("100p".parse::<Queue>().unwrap(), Queue::Packets(100));
    assert_eq!("64K".parse::<Queue>().unwrap(), Queue::Bytes(65536));
    assert_eq!(
        "50ms".parse::<Queue>().unwrap(),
        Queue::Time(Nanos::from_millis(50))
    );
    assert!("0ms".parse::<Queue>().is_err());
    for q in ["100p", "64K", "50ms"] {
        let q: Queue = q.parse().unwrap();
        assert_eq!(q.axis_value().parse::<Queue>().unwrap(), q);
    }
    assert!("0p".parse::<Queue>().is_err());
}

#[test]
fn bad_values_name_the_setting() {
    let e = settings(|s| s.mtu = Some("67".into())).unwrap_err();
    assert!(e.to_string().starts_with("--mtu:"), "{e}");
    let e = settings(|s| s.mtu = Some("64K".into())).unwrap_err();
    assert!(e.to_string().contains("65535"), "{e}");
    assert_eq!(
        settings(|s| s.mtu = Some("16K".into())).unwrap().up.mtu,
        16384
    );
    let e = settings(|s| s.rate = Some("1kbit/s".into())).unwrap_err();
    assert!(e.to_string().starts_with("--rate:"), "{e}");
    let e = settings(|s| s.reorder = Some("5%".into())).unwrap_err();
    assert!(e.to_string().contains("needs a --delay"), "{e}");
    let e = settings(|s| s.shaper = Some("cake".into())).unwrap_err();
    assert!(e.to_string().contains("tbf, htb"), "{e}");
}

#[test]
fn points_override_both_directions() {
    let base = settings(|s| s.delay = Some("5ms/7ms".into())).unwrap();
    let mut axes = std::collections::BTreeMap::new();
    axes.insert("mtu".to_string(), "9000".to_string());
    axes.insert("rate".to_string(), "0".to_string());
    axes.insert("loss".to_string(), "1%".to_string());
    let p = LinkPoint::from_axes(&axes).unwrap();
    let s = base.with_point(&p);
    assert_eq!(s.up.mtu, 9000);
    assert_eq!(s.up.rate, None);
    assert_eq!(s.down.delay, Nanos::from_millis(7));
    assert_eq!(s.down.loss, Loss::Random { percent: 1.0 });
    assert!(LinkPoint::from_axes(&Default::default())
        .unwrap()
        .is_empty());
}

#[test]
fn records_round_trip_as_json() {
    let spec = settings(|s| {
        s.loss = Some("gemodel:1%,20%".into());
        s.queue = Some("50p".into());
    })
    .unwrap();
    let r = LinkRecord {
        spec,
        mechanism: Mechanism::Emulator,
        detail: "x".into(),
    };
    let j = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<LinkRecord>(&j).unwrap(), r);
}

#[test]
fn a_second_path_adds_its_rate_for_mptcp_only() {
    let spec = settings(|s| {
        s.rate = Some("100M".into());
        s.second_path = Some("50M".into());
    })
    .unwrap();
    assert_eq!(
        spec.to_string(),
        "mtu 1500, rate 100.00 Mbit/s each way; second path 50.00 Mbit/s each way"
    );
    let rec = LinkRecord {
        spec: spec.clone(),
        mechanism: Mechanism::Veth,
        detail: String::new(),
    };
    assert_eq!(rec.rate_bps_over(false), Some(100e6));
    assert_eq!(rec.rate_bps_over(true), Some(150e6));
    // Each path counts its slower direction; an unshaped second path leaves
    // MPTCP's rate unbounded.
    let slow = settings(|s| {
        s.rate = Some("100M".into());
        s.second_path = Some("50M/20M".into());
    })
    .unwrap();
    let rec = LinkRecord { spec: slow, ..rec };
    assert_eq!(rec.rate_bps_over(true), Some(120e6));
    let open = settings(|s| {
        s.rate = Some("100M".into());
        s.second_path = Some("0".into());
    })
    .unwrap();
    let rec = LinkRecord { spec: open, ..rec };
    assert_eq!(rec.rate_bps_over(true), None);
    assert_eq!(rec.rate_bps_over(false), Some(100e6));
    // Stored records without a second path still read.
    let json = serde_json::to_string(&LinkSpec::default()).unwrap();
    assert!(!json.contains("second"));
    assert!(settings(|s| s.second_path = Some("fast".into()))
        .unwrap_err()
        .to_string()
        .starts_with("--second-path: "));
}

#[test]
fn offloads_are_on_unless_turned_off_each_way() {
    let s = settings(|_| {}).unwrap();
    assert!(s.up.offloads && s.down.offloads);
    let json = serde_json::to_string(&s).unwrap();
    assert!(!json.contains("offloads"), "on is not written: {json}");
    let s = settings(|s| s.offloads = Some("off/on".into())).unwrap();
    assert!(!s.up.offloads && s.down.offloads);
    let back: LinkSpec = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    let e = settings(|s| s.offloads = Some("maybe".into())).unwrap_err();
    assert_eq!(e.to_string(), "--offloads: 'maybe' is not on or off");
    let mut axes = std::collections::BTreeMap::new();
    axes.insert("offloads".to_string(), "off".to_string());
    let p = LinkPoint::from_axes(&axes).unwrap();
    let s = LinkSpec::default().with_point(&p);
    assert!(!s.up.offloads && !s.down.offloads);
}
