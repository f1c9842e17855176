//! The wait queues' `INFO recipes` figures: keys with waiters per family,
//! and the clients waiting in all.

#![forbid(unsafe_code)]

use std::ffi::CStr;

use super::events::watchers;
use super::waitable::Waitable;
use crate::common::stats::CLIENTS_WAITING;

/// Family `F`'s figures: its `INFO` name for keys with waiters, their
/// count, and the clients waiting on them.
pub fn figures<F: Waitable>() -> (&'static CStr, usize, usize) {
    let book = F::waits().lock();
    (F::KEYS_WAITED_ON, book.queues.len(), book.places.len())
}

/// Keys with waiters per family, then the clients waiting in all, for
/// `INFO recipes`.
pub fn figures_all() -> Vec<(&'static CStr, i64)> {
    let mut clients = 0;
    let mut figures = Vec::new();
    for watcher in watchers() {
        let (name, keys, waiting) = (watcher.figures)();
        figures.push((name, keys as i64));
        clients += waiting;
    }
    figures.push((CLIENTS_WAITING.name, clients as i64));
    figures
}

/// The name of the `INFO` gauge of the keys `watcher`'s family has waiters
/// on (for the module's spec).
#[cfg(test)]
pub fn keys_waited_on(watcher: &super::events::Watcher) -> &'static CStr {
    (watcher.figures)().0
}
