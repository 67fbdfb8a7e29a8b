//! Integration tests: one binary, themed modules. They drive the real `netsonde`
//! executable on loopback (and, as root, across network namespaces).

#[path = "../../store/tests/pg_util.rs"]
mod pg_util;
mod util;

mod architecture;
mod bad_input;
mod containers;
mod control_plane;
mod encrypted;
mod figures;
mod fleet;
mod fleet_attacks;
#[allow(dead_code)]
mod fleet_util;
mod golden;
mod io_strategies;
mod iperf3;
mod iperf3_habits;
mod iperf3_swap;
mod lab;
mod lab_physics;
#[allow(dead_code)]
mod lab_util;
mod loopback;
mod monitor;
mod multipath;
mod namespaces;
mod quic_perf;
mod regression;
mod regression_input;
mod searches;
mod server;
mod shared_store;
mod studies;
mod summaries;
mod sweeps;
mod webdriver;
