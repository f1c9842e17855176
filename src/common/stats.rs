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
/// loaded) or a gauge (a state, such as the pools stored now), with what it
/// counts (Markdown, for the module's spec and the manual).
pub struct Stat {
    pub(in crate::common) name: &'static CStr,
    // Read by the module's spec (`spec.rs`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(in crate::common) gauge: bool,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(in crate::common) doc: &'static str,
    value: AtomicI64,
}

impl Stat {
    pub const fn counter(name: &'static CStr, doc: &'static str) -> Self {
        Self {
            name,
            gauge: false,
            doc,
            value: AtomicI64::new(0),
        }
    }

    pub const fn gauge(name: &'static CStr, doc: &'static str) -> Self {
        Self {
            gauge: true,
            ..Self::counter(name, doc)
        }
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

/// A figure computed when `INFO` asks rather than counted: its name, whether
/// it is a gauge, and what it shows.
pub struct Shown {
    pub name: &'static CStr,
    #[cfg_attr(not(test), allow(dead_code))]
    pub gauge: bool,
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
}

/// The clients waiting in all families (`wait/info.rs`).
pub const CLIENTS_WAITING: Shown = Shown {
    name: c"clients_waiting",
    gauge: true,
    doc: "clients blocked in a `… WAIT` now",
};

/// Bugs contained (`ffi/panic.rs`).
pub const PANICS_CAUGHT: Shown = Shown {
    name: c"panics_caught",
    gauge: false,
    doc: "bugs the panic guard contained (see the server log); must stay 0",
};

/// What a waiting family's `<keys>_with_waiters` gauge shows.
#[cfg(test)]
pub const WITH_WAITERS: &str = "keys of the family with clients waiting on them";
