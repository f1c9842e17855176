//! What every recipe family shares: argument parsing, command registration and
//! dispatch, the low-level key API, replication and panic handling. A family
//! module (`idgen.rs`, …) holds only its own behaviour.

pub mod args;
pub mod command;
pub mod config;
pub mod datatype;
pub mod errors;
pub mod family;
pub mod ffi;
pub mod fitting;
pub mod lease;
pub mod reply;
pub mod stats;
pub mod time;
pub mod wait;
