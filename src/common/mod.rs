//! What every recipe family shares: argument parsing, command registration and
//! dispatch, the low-level key API, replication and panic handling. A family
//! module (`idgen.rs`, …) holds only its own behaviour.

pub mod args;
pub mod block;
pub mod cluster;
pub mod command;
pub mod config;
pub mod datatype;
pub mod errors;
pub mod family;
pub mod key;
pub mod lease;
pub mod panic;
pub mod replicate;
pub mod reply;
pub mod stats;
pub mod strings;
pub mod time;
pub mod wait;
