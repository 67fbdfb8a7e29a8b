//! Integration tests: one binary, themed modules, each against a real database file
//! under the system temp directory, or a throw-away PostgreSQL server.

mod pg_util;
mod util;

mod faults;
mod migrations;
mod postgres;
mod postgres_tls;
mod roundtrip;
