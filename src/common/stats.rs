//! The counters behind `INFO recipes` (`ffi/stats.rs` shows them): what an
//! operator needs to see the module's state and trouble at a glance. Each is
//! one atomic add where the event happens (the pool gauges also change from
//! the server's lazy-free thread), and nothing walks keys when `INFO` asks.
//! Counters count from the module's load, as other modules' INFO fields do:
//! `CONFIG RESETSTAT` does not reach them, since noticing it would take a
//! command filter, which runs on every command of every application sharing
//! the server.

#![forbid(unsafe_code)]

use std::ffi::CStr;
use std::sync::atomic::{AtomicI64, Ordering};

/// One figure of the INFO section: a counter (events since the module was
/// loaded) or a gauge (a state, such as the pools stored now).
pub struct Stat {
    pub(in crate::common) name: &'static CStr,
    value: AtomicI64,
}

impl Stat {
    pub const fn counter(name: &'static CStr) -> Self {
        Self {
            name,
            value: AtomicI64::new(0),
        }
    }

    pub const fn gauge(name: &'static CStr) -> Self {
        Self::counter(name)
    }

    pub fn add(&self, n: i64) {
        self.value.fetch_add(n, Ordering::Relaxed);
    }

    pub fn incr(&self) {
        self.add(1);
    }

    pub fn get(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
    }
}
