//! Real servers for the integration tests: redis-server and valkey-server on
//! free loopback ports with the freshly built module loaded, as a standalone
//! server, a primary with a replica, an AOF server that can be restarted, or a
//! 3-primary cluster. Every server is killed and its directory removed when
//! its handle drops, also when a test fails. A server that is not installed
//! skips its tests, or fails them under `make test` and CI
//! ([`servers_required`]).
//!
//! Also what the suites share, one file a job: `servers.rs` (starting,
//! stopping and configuring servers), `calls.rs` (commands and their exact
//! replies, the servers' standard errors, clients blocked in a wait),
//! `state.rs` (whole-dataset snapshots, the round trips through a replica,
//! an AOF and `DUMP`/`RESTORE`), `events.rs` (keyspace events, tracking
//! invalidations), `meta.rs` (command metadata), `forge.rs` (hostile `DUMP`
//! payloads), `families.rs` (the families' `INFO` replies), `fuzz.rs`,
//! `samples.rs` (`tests/samples/`), `errors.rs` (the
//! error catalogue, `docs/spec.json`) and `resp.rs` (a bare RESP client). Each
//! suite is compiled with all of it and uses some (hence the `allow`s).
#![allow(dead_code)]

pub mod resp;
pub mod samples;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

pub use redis::{Connection, Value};

#[macro_use]
mod servers;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use servers::*;
mod calls;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use calls::*;
mod state;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use state::*;
mod fuzz;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use fuzz::*;
mod events;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use events::*;
mod meta;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use meta::*;
mod errors;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use errors::*;
mod forge;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use forge::*;
mod families;
#[allow(unused_imports)] // each suite uses some of the helpers
pub use families::*;
