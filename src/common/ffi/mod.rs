//! The wrappers over the server's module API: key handles, server strings,
//! replies, blocked clients, timers, data-type callbacks, event
//! subscriptions, replication, and the registration of commands, settings
//! and `INFO`. The only modules with `unsafe` (each block with its `SAFETY:`
//! note); the rest of `common/` and every family use them from safe Rust.

pub mod api;
pub mod args;
pub mod block;
pub mod cluster;
pub mod command;
pub mod config;
pub mod context;
pub mod datatype;
pub mod dispatch;
pub mod events;
pub mod io;
pub mod key;
pub mod panic;
pub mod replicate;
pub mod reply;
pub mod stats;
pub mod strings;
pub mod timer;
