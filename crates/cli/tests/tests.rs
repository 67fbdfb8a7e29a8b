//! Integration tests: one binary, themed modules. They drive the real `netsonde`
//! executable on loopback (and, as root, across network namespaces).

mod util;

mod architecture;
mod bad_input;
mod control_plane;
mod figures;
mod fleet;
#[allow(dead_code)]
mod fleet_util;
mod golden;
mod io_strategies;
mod iperf3;
mod lab;
#[allow(dead_code)]
mod lab_util;
mod loopback;
mod namespaces;
mod regression;
mod server;
mod studies;
mod sweeps;
