//! The wait queues' `INFO recipes` figures: keys with waiters per family,
//! and the clients waiting in all.

#![forbid(unsafe_code)]

use std::ffi::CStr;

use super::events::watchers;
use super::waitable::Waitable;

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
    figures.push((c"clients_waiting", clients as i64));
    figures
}
