//! The keyspace and server events that may free something a queue waits
//! for, heard for every family that waits ([`Watcher`]): a key changed
//! schedules a check of its queue, a changed database one of every queue.
//! Keyspace events are watched only once some client has waited, so a
//! server that never uses WAIT pays nothing for them.

#![forbid(unsafe_code)]

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use redis_module::Context;

use super::db::{key_id, KeyId};
use super::queues::Cause;
use super::timers::schedule;
use super::waitable::Waitable;
use crate::common::ffi::events::{self, Watch};

/// A family as the shared event handlers see it.
#[derive(Clone, Copy)]
pub struct Watcher {
    pub(super) key_changed: fn(&Context, &[u8], Cause),
    pub(super) all_changed: fn(&Context),
    pub(super) figures: fn() -> (&'static CStr, usize, usize),
}

/// Key `name` changed: its queue in family `F`, if it has one, is checked
/// soon.
pub fn key_changed<F: Waitable>(ctx: &Context, name: &[u8], cause: Cause) {
    if F::waits().idle() {
        return;
    }
    let id = key_id(ctx, name);
    if F::waits().lock().queues.contains_key(&id) {
        schedule::<F>(ctx, id, cause);
    }
}

/// Keys changed without per-key events: every queue of family `F` is
/// checked soon.
pub fn all_changed<F: Waitable>(ctx: &Context) {
    let ids: Vec<KeyId> = F::waits().lock().queues.keys().cloned().collect();
    for id in ids {
        schedule::<F>(ctx, id, Cause::Delete);
    }
}

static WATCHERS: OnceLock<Vec<Watcher>> = OnceLock::new();
/// Some client has waited: keyspace events are watched from then on.
static WATCHING: AtomicBool = AtomicBool::new(false);
static SUBSCRIBED: AtomicBool = AtomicBool::new(false);

pub fn watchers() -> &'static [Watcher] {
    WATCHERS.get().map(Vec::as_slice).unwrap_or_default()
}

/// A client waits: keyspace events are watched from now on (subscribed
/// once).
pub fn start_watching(ctx: &Context) {
    WATCHING.store(true, Ordering::Relaxed);
    if SUBSCRIBED.swap(true, Ordering::Relaxed) {
        return;
    }
    events::subscribe_keyspace::<Watchers>(ctx);
}

/// Called once at load with every family that waits.
pub fn init(ctx: &Context, families: impl IntoIterator<Item = Watcher>) {
    let _ = WATCHERS.set(families.into_iter().collect());
    events::subscribe_databases::<Watchers>(ctx);
}

/// Every family's watcher, as the server's events reach them.
struct Watchers;

impl Watch for Watchers {
    /// If some family has waiters on the key, it is checked soon.
    fn key_changed(ctx: &Context, name: &[u8], expired: bool) {
        let cause = if expired {
            Cause::Expiry
        } else {
            Cause::Delete
        };
        for watcher in watchers() {
            (watcher.key_changed)(ctx, name, cause);
        }
    }

    /// Every key that has waiters is checked.
    fn databases_changed(ctx: &Context) {
        if !WATCHING.load(Ordering::Relaxed) {
            return;
        }
        for watcher in watchers() {
            (watcher.all_changed)(ctx);
        }
    }
}
