//! Experiment files (`netsonde run FILE.toml`) and the lab's link settings in
//! them: any text parses, or is refused with a typed error; a plan that parses
//! expands into its points (bounded in number), and a `[link]` table into a
//! validated link, without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use netsonde_sweep::file::Experiment;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(exp) = Experiment::parse(text) else {
        return;
    };
    if let Some(link) = &exp.link {
        if let Ok(spec) = link.spec() {
            let _ = spec.validate();
        }
    }
    if let Ok(plan) = exp.plan() {
        let (points, skipped) = plan.points();
        assert!(points.len() + skipped.len() <= netsonde_sweep::plan::MAX_POINTS);
        let order = plan.order(points.len());
        assert_eq!(order.len(), points.len() * plan.repeat as usize);
    }
});
