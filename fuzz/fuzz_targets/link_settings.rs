//! The lab's link settings as the command line gives them (`--rate 100M/1G`,
//! `--delay 10ms`, `--loss 1%`, ...): any strings in any field give a validated link
//! or a typed error, never a panic; a link axis point applies to any valid link.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsonde_model::link::{LinkPoint, LinkSettings};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut f = text.split('\u{0}').map(|s| (!s.is_empty()).then(|| s.to_string()));
    let mut next = || f.next().flatten();
    let settings = LinkSettings {
        mtu: next(),
        rate: next(),
        delay: next(),
        jitter: next(),
        loss: next(),
        reorder: next(),
        duplicate: next(),
        queue: next(),
        shaper: next(),
        mechanism: next(),
        seed: next().and_then(|s| s.parse().ok()),
        second_path: next(),
        offloads: next(),
    };
    if let Ok(spec) = settings.spec() {
        let _ = spec.validate();
        let mut axes = std::collections::BTreeMap::new();
        for (k, v) in ["mtu", "rate", "delay", "loss", "offloads"]
            .into_iter()
            .zip([next(), next(), next(), next(), next()])
        {
            if let Some(v) = v {
                axes.insert(k.to_string(), v);
            }
        }
        if let Ok(p) = LinkPoint::from_axes(&axes) {
            let _ = spec.with_point(&p).validate();
        }
    }
});
