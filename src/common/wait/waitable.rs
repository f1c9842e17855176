//! What a family whose commands may wait gives the queues ([`Waitable`]),
//! and what they exchange: the offer of a key to a waiter, what a take
//! found, whom it is for, and the events the family counts.

#![forbid(unsafe_code)]

use std::ffi::CStr;

use redis_module::{Context, RedisError, RedisValue};

use super::queues::{Cause, Waits};
use crate::common::command::CommandSpec;
use crate::common::ffi::args::Arg;
use crate::common::stats::Stat;

/// What a family answers when offered the key for its oldest waiter.
pub enum Offer<G> {
    /// Taken for the waiter: its reply, and what was taken (given back with
    /// [`Waitable::revoke`] if the reply never reaches the waiter).
    Granted(RedisValue, G),
    /// Refused with an error, which answers that waiter; nothing was taken.
    Refused(RedisError),
    /// Nothing to take; `Some(t)`: look again at server time `t` (ms), when
    /// a lease ends.
    Busy(Option<i64>),
    /// Nothing to take because of another key (a waiter for several keys,
    /// one of which is busy): the waiter moves to that key's queue, in its
    /// place by arrival, to be offered that key when it may be free (`Some(t)`
    /// as in [`Offer::Busy`]). The other key is in the same database (and, in
    /// a cluster, the same slot: the command's keys are).
    Elsewhere(Vec<u8>, Option<i64>),
}

/// What a family's take found.
pub enum Take<T> {
    Got(T),
    /// Nothing free; `Some(t)`: something may be at server time `t` (ms),
    /// when a lease ends.
    Nothing(Option<i64>),
}

impl<T> Take<T> {
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Take<U> {
        match self {
            Take::Got(taken) => Take::Got(f(taken)),
            Take::Nothing(next) => Take::Nothing(next),
        }
    }
}

/// Whom a take is for: the running command's own client, whose command may
/// then replicate as it came, or a waiter served outside its command, whose
/// grant always replicates as its effect.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TakenFor {
    Command,
    Waiter,
}

impl<G> Offer<G> {
    /// The offer a family's take makes: the waiter's reply and the grant, or
    /// why not.
    pub fn of(taken: Result<Take<(RedisValue, G)>, RedisError>) -> Offer<G> {
        match taken {
            Ok(Take::Got((reply, grant))) => Offer::Granted(reply, grant),
            Ok(Take::Nothing(next)) => Offer::Busy(next),
            Err(error) => Offer::Refused(error),
        }
    }
}

/// What happened to a wait, for the family's counters.
pub enum Event {
    Parked,
    TimedOut,
    Served(Cause),
}

/// What a family whose commands may wait (`… WAIT ms`) gives the queues
/// (its registration is its `FamilySpec`: "family" names that alone).
pub trait Waitable: 'static {
    /// What a waiter asked for, carried until its turn.
    type Request: Send + 'static;
    /// What a grant took, enough to give exactly that back.
    type Grant: Send + 'static;
    /// `INFO recipes` name of the count of keys with waiters.
    const KEYS_WAITED_ON: &'static CStr;
    /// Whether serving a waiter writes (takes something, replicated as an
    /// effect). A family whose waiters only watch a key (a latch opening)
    /// serves them on a replica and while writes are paused too.
    const WRITES: bool = true;
    fn waits() -> &'static Waits<Self::Request>;
    /// The command that waits for `request` (`LOCK.ACQUIRE`, …): the name an
    /// error refusing its grant answers with (`{command}`).
    fn command(request: &Self::Request) -> &'static CommandSpec;
    /// Takes what the key holds for `request`, as the waiter's command would
    /// have when it arrived (the caller has selected the key's database), and
    /// replicates it as an effect.
    fn offer(ctx: &Context, key: Arg, request: &Self::Request) -> Offer<Self::Grant>;
    /// Gives back what `grant` took, if the key still holds it as granted,
    /// and replicates that as an effect. `true` when something was given
    /// back (the caller then serves the queue).
    fn revoke(ctx: &Context, key: Arg, grant: &Self::Grant) -> bool;
    /// Counts a wait's events in `INFO recipes`.
    fn count(event: Event);
}

/// The `INFO recipes` counters of a family's waits: begun, ran out, and
/// served (a hand-off).
pub struct WaitStats {
    pub started: Stat,
    pub timed_out: Stat,
    pub handoffs: Stat,
}

impl WaitStats {
    /// The counters `<family>_waits`, `<family>_waits_timed_out` and
    /// `<family>_handoffs`, each named in full with what it counts.
    pub const fn new(
        started: (&'static CStr, &'static str),
        timed_out: (&'static CStr, &'static str),
        handoffs: (&'static CStr, &'static str),
    ) -> Self {
        Self {
            started: Stat::counter(started.0, started.1),
            timed_out: Stat::counter(timed_out.0, timed_out.1),
            handoffs: Stat::counter(handoffs.0, handoffs.1),
        }
    }

    /// Counts one event of a wait ([`Waitable::count`]).
    pub fn count(&self, event: Event) {
        match event {
            Event::Parked => self.started.incr(),
            Event::TimedOut => self.timed_out.incr(),
            Event::Served(_) => self.handoffs.incr(),
        }
    }
}
