//! First-come-first-served waits for something a key holds (a lock, a
//! resource of a pool, an ID of an ID pool), shared by every family that
//! offers `… WAIT ms`.
//!
//! A client that finds nothing to take is parked in its key's queue, in
//! arrival order. Whenever the key may have something to hand out,
//! `serve.rs` offers it to the oldest waiter whose wait has not run out (the
//! family's [`Waitable::offer`] takes it as that waiter's command would, and
//! replicates it as its effect), and answers that waiter:
//! - freed by one of the family's commands (release, add, grow): the command
//!   calls [`serve_waiters`] itself, inside its own atomic unit;
//! - deleted, renamed, moved, restored, evicted or expired by anything else
//!   (keyspace events): in the same atomic unit as that command where the
//!   server has post-notification jobs (Redis 7.2+, Valkey), else on the next
//!   event-loop turn (a timer due now);
//! - a lease ends, or a family looks again by itself: a timer set to the
//!   moment the family named ([`Offer::Busy`]), so the hand-off does not wait
//!   for a client to touch the key (a latch, which plain string commands may
//!   open, is looked at again every few milliseconds while clients wait on
//!   it: no hook on other commands' path);
//! - `FLUSHDB`/`FLUSHALL`/`SWAPDB`: a timer due now.
//!
//! The same timer ends waits whose time ran out (null reply; a family whose
//! waiters take nothing answers from what the key holds then, see
//! `at_deadline` in `serve.rs`). Waits are kept here, not by the server's
//! blocking timeout, so a wait is either granted or timed out, never both.
//!
//! What the server allows decides when a queue is served (`pause.rs`), for
//! a family whose grants write ([`Waitable::WRITES`]; a latch's waiters take
//! nothing and are served anywhere, at any time): only a primary serves (a
//! server that turns replica answers its waiters nil); while it accepts no
//! writes (`CLIENT PAUSE … WRITE`, `FAILOVER`, a shutdown
//! waiting for its replicas, loading) nothing is handed out — writing then
//! would re-add keys the pause keeps from expiring, or propagate while the
//! server forbids it — and the queue is served when writes resume, waits
//! that run out meanwhile being answered nil at their deadline. In a cluster,
//! a key whose slot this node no longer serves is never handed on here: its
//! waiters are told to retry where the slot lives (`ffi/cluster.rs`).
//!
//! A waiter for several keys (`LOCK.MACQUIRE`) waits in one key's queue at
//! a time: offered that key while another of its keys is busy, the family
//! answers [`Offer::Elsewhere`] and the waiter moves to that key's queue, in
//! its place by arrival, while the first key goes on to the next waiter.
//!
//! A waiter leaves its queue in O(log n) when it disconnects, is killed or is
//! unblocked (see `ffi/block.rs`); an emptied queue goes with its timer at
//! once. A grant whose reply never reaches its client (unblocked or gone in
//! that moment) is given back ([`Waitable::revoke`]) and goes to the next
//! waiter.
//!
//! The files, one job each: `waitable.rs` (what a family gives the queues),
//! `queues.rs` (the queues and where each client waits), `db.rs` (which key:
//! database and name), `park.rs` (a client into its queue, and out of it),
//! `serve.rs` (hand-offs and grants given back), `timers.rs` (when a queue
//! is looked at), `pause.rs` (while writes are paused), `events.rs` (the
//! keyspace and server events watched) and `info.rs` (`INFO` figures).

#![forbid(unsafe_code)]

mod db;
mod events;
mod info;
mod park;
mod pause;
mod queues;
mod serve;
mod timers;
mod waitable;

pub use events::{init, Watcher};
pub use info::figures_all;
#[cfg(test)]
pub use info::keys_waited_on;
pub use park::{park, parse_wait, waiting_on};
pub use queues::{Cause, Waits};
pub use serve::serve_waiters;
pub use waitable::{Event, Offer, Take, TakenFor, WaitStats, Waitable};

/// The watcher of family `F` (its `FamilySpec`'s `waiting`), for [`init`].
pub const fn watcher<F: Waitable>() -> Watcher {
    Watcher {
        key_changed: events::key_changed::<F>,
        all_changed: events::all_changed::<F>,
        figures: info::figures::<F>,
    }
}
