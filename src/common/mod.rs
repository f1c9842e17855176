//! What every recipe family shares, in two layers. `ffi/` wraps the server's
//! module API and holds every `unsafe` of the crate. The modules here are the
//! frameworks built on it, in safe Rust (`#![forbid(unsafe_code)]` in each):
//! argument parsing, what a family declares (`family.rs`: its commands,
//! settings, data types and counters), the waits (`wait/`), errors, times,
//! leases, and the arena AVL tree of the ordered data types (`tree.rs`). A
//! name found in both (`command`, `config`, `datatype`, `reply`, `stats`) is
//! declared here and told to the server in `ffi/`. A family module
//! (`idgen.rs`, …) holds only its own behaviour.

pub mod args;
pub mod command;
pub mod config;
pub mod datatype;
pub mod errors;
pub mod family;
pub mod ffi;
pub mod fitting;
pub mod lease;
pub mod memory;
pub mod reply;
pub mod spec;
pub mod stats;
pub mod time;
pub mod tree;
pub mod wait;
