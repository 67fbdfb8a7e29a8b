//! Integration tests: one binary, themed modules, each against a real database file
//! under the system temp directory.

mod util;

mod faults;
mod migrations;
mod roundtrip;
