//! A family's queues: one per key with waiters, each holding its waiters
//! in arrival order and by deadline, the timer it is due at and the check
//! it is due for; and where each parked client waits.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::db::KeyId;
use crate::common::ffi::block::{Parked, ParkedId};
use crate::common::ffi::timer::Timer;

/// What may have made something free (counted in `INFO recipes`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cause {
    /// One of the family's own commands (release, add, grow).
    Release,
    /// Anything else changed the key (delete, rename, restore, flush).
    Delete,
    /// A lease ran out.
    Expiry,
}

pub struct Waiter<R> {
    pub client: Parked,
    pub request: R,
    /// Server time (ms) at which the wait runs out.
    pub deadline: i64,
}

pub struct Queue<R> {
    /// The waiters by arrival number: the oldest first.
    pub waiters: BTreeMap<u64, Waiter<R>>,
    /// `(deadline, arrival)` of every waiter: the first to run out first.
    pub deadlines: BTreeSet<(i64, u64)>,
    /// The pending timer and the time it is due.
    pub timer: Option<(Timer<KeyId>, i64)>,
    /// A check is already due (job or timer); more events add none.
    pub scheduled: bool,
    /// What the due check answers (the event that scheduled it).
    pub cause: Option<Cause>,
    /// Put off until the server accepts writes again.
    pub deferred: bool,
}

impl<R> Default for Queue<R> {
    fn default() -> Self {
        Self {
            waiters: BTreeMap::new(),
            deadlines: BTreeSet::new(),
            timer: None,
            scheduled: false,
            cause: None,
            deferred: false,
        }
    }
}

impl<R> Queue<R> {
    pub fn first_deadline(&self) -> Option<i64> {
        self.deadlines.first().map(|&(deadline, _)| deadline)
    }
}

/// A family's queues, one per key with waiters, and where each parked client
/// waits.
pub struct Book<R> {
    pub queues: BTreeMap<KeyId, Queue<R>>,
    pub places: BTreeMap<ParkedId, (KeyId, u64)>,
    pub arrivals: u64,
}

impl<R> Book<R> {
    pub fn push(&mut self, id: &KeyId, waiter: Waiter<R>) -> bool {
        self.arrivals += 1;
        let arrival = self.arrivals;
        self.move_to(id, arrival, waiter)
    }

    /// Takes a waiter out of `id`'s queue (its place is forgotten).
    pub fn take(&mut self, id: &KeyId, arrival: u64) -> Option<Waiter<R>> {
        let queue = self.queues.get_mut(id)?;
        let waiter = queue.waiters.remove(&arrival)?;
        queue.deadlines.remove(&(waiter.deadline, arrival));
        self.places.remove(&waiter.client.id());
        Some(waiter)
    }

    /// Takes the oldest waiter, with its arrival number.
    pub fn take_first(&mut self, id: &KeyId) -> Option<(u64, Waiter<R>)> {
        let arrival = *self.queues.get(id)?.waiters.keys().next()?;
        self.take(id, arrival).map(|waiter| (arrival, waiter))
    }

    /// Puts a waiter taken by [`Book::take_first`] back in its place; `Err`
    /// gives it back when its queue is gone.
    pub fn put_back(
        &mut self,
        id: &KeyId,
        arrival: u64,
        waiter: Waiter<R>,
    ) -> Result<(), Waiter<R>> {
        let Some(queue) = self.queues.get_mut(id) else {
            return Err(waiter);
        };
        self.places
            .insert(waiter.client.id(), (id.clone(), arrival));
        queue.deadlines.insert((waiter.deadline, arrival));
        queue.waiters.insert(arrival, waiter);
        Ok(())
    }

    /// Puts a waiter taken by [`Book::take_first`] in `id`'s queue (made if
    /// missing), in its place by arrival: older waiters of that queue stay
    /// ahead of it, newer ones come after. `true` when the queue was made.
    pub fn move_to(&mut self, id: &KeyId, arrival: u64, waiter: Waiter<R>) -> bool {
        self.places
            .insert(waiter.client.id(), (id.clone(), arrival));
        let created = !self.queues.contains_key(id);
        let queue = self.queues.entry(id.clone()).or_default();
        queue.deadlines.insert((waiter.deadline, arrival));
        queue.waiters.insert(arrival, waiter);
        created
    }

    /// Takes every waiter of `id` whose wait ran out by `now`.
    pub fn take_timed_out(&mut self, id: &KeyId, now: i64) -> Vec<Waiter<R>> {
        let mut gone = Vec::new();
        while let Some(&(deadline, arrival)) = self.queues.get(id).and_then(|q| q.deadlines.first())
        {
            if deadline > now {
                break;
            }
            match self.take(id, arrival) {
                Some(waiter) => gone.push(waiter),
                None => break,
            }
        }
        gone
    }
}

/// A family's waits.
pub struct Waits<R> {
    book: Mutex<Book<R>>,
    /// How many queues exist; lets the hot paths skip the map when nobody
    /// waits.
    pub count: AtomicUsize,
}

impl<R> Waits<R> {
    pub const fn new() -> Self {
        Self {
            book: Mutex::new(Book {
                queues: BTreeMap::new(),
                places: BTreeMap::new(),
                arrivals: 0,
            }),
            count: AtomicUsize::new(0),
        }
    }

    /// The queues. Never held across a call that may reach back into this
    /// module (key writes fire keyspace events, finishing a wait may run
    /// callbacks).
    pub fn lock(&self) -> MutexGuard<'_, Book<R>> {
        self.book
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn idle(&self) -> bool {
        self.count.load(Ordering::Relaxed) == 0
    }

    /// How many keys have waiters.
    pub fn keys(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Removes `id`'s queue; its waiters (forgotten) and timer are the
    /// caller's.
    pub fn remove(&self, book: &mut Book<R>, id: &KeyId) -> Option<Queue<R>> {
        let queue = book.queues.remove(id)?;
        self.count.fetch_sub(1, Ordering::Relaxed);
        for waiter in queue.waiters.values() {
            book.places.remove(&waiter.client.id());
        }
        Some(queue)
    }

    /// Removes `id`'s queue if nobody waits in it; its timer is the
    /// caller's to stop.
    pub fn remove_if_empty(&self, book: &mut Book<R>, id: &KeyId) -> Option<(Timer<KeyId>, i64)> {
        if book.queues.get(id)?.waiters.is_empty() {
            return self
                .remove(book, id)
                .and_then(|mut queue| queue.timer.take());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiter(client: usize, deadline: i64) -> Waiter<&'static str> {
        Waiter {
            client: Parked::stand_in(client),
            request: "r",
            deadline,
        }
    }

    fn key(name: &str) -> KeyId {
        (0, name.as_bytes().to_vec())
    }

    #[test]
    fn waiters_come_out_in_arrival_order_and_put_back_keeps_the_place() {
        let mut book: Book<&str> = Book {
            queues: BTreeMap::new(),
            places: BTreeMap::new(),
            arrivals: 0,
        };
        let (a, b) = (key("a"), key("b"));
        assert!(book.push(&a, waiter(1, 500)));
        assert!(!book.push(&a, waiter(2, 100)));
        assert!(book.push(&b, waiter(3, 300)));
        assert!(!book.push(&a, waiter(4, 900)));
        assert_eq!(book.places.len(), 4);
        let (arrival, first) = book.take_first(&a).expect("a waiter");
        assert_eq!((arrival, first.client.id()), (1, Parked::stand_in(1).id()));
        assert_eq!(book.places.len(), 3, "taken out, its place forgotten");
        assert!(book.put_back(&a, arrival, first).is_ok());
        assert_eq!(book.places.len(), 4);
        let order: Vec<u64> = book.queues[&a].waiters.keys().copied().collect();
        assert_eq!(order, [1, 2, 4], "back at the head");
        assert_eq!(book.queues[&a].first_deadline(), Some(100));
        assert!(book.put_back(&key("gone"), 9, waiter(9, 1)).is_err());
        assert_eq!(book.queues[&b].waiters.len(), 1);
    }

    #[test]
    fn a_moved_waiter_keeps_its_age_in_the_other_queue() {
        let mut book: Book<&str> = Book {
            queues: BTreeMap::new(),
            places: BTreeMap::new(),
            arrivals: 0,
        };
        let (a, b) = (key("a"), key("b"));
        book.push(&b, waiter(1, 500));
        book.push(&a, waiter(2, 400));
        book.push(&b, waiter(3, 300));
        let (arrival, moved) = book.take_first(&a).expect("a waiter");
        assert!(!book.move_to(&b, arrival, moved), "b's queue exists");
        let order: Vec<u64> = book.queues[&b].waiters.keys().copied().collect();
        assert_eq!(order, [1, 2, 3], "between the older and the newer");
        assert_eq!(book.places[&Parked::stand_in(2).id()], (b.clone(), 2));
        assert_eq!(book.queues[&b].first_deadline(), Some(300));
        let (arrival, moved) = book.take_first(&b).expect("a waiter");
        assert!(book.move_to(&key("c"), arrival, moved), "c's queue is made");
        assert_eq!(book.places.len(), 3);
    }

    #[test]
    fn waits_run_out_in_deadline_order_whatever_their_arrival() {
        let mut book: Book<&str> = Book {
            queues: BTreeMap::new(),
            places: BTreeMap::new(),
            arrivals: 0,
        };
        let a = key("a");
        for (client, deadline) in [(1, 500), (2, 100), (3, 300), (4, 900)] {
            book.push(&a, waiter(client, deadline));
        }
        assert!(book.take_timed_out(&a, 99).is_empty());
        let gone: Vec<i64> = book
            .take_timed_out(&a, 300)
            .iter()
            .map(|w| w.deadline)
            .collect();
        assert_eq!(gone, [100, 300], "a deadline counts as run out at its time");
        let left: Vec<u64> = book.queues[&a].waiters.keys().copied().collect();
        assert_eq!(left, [1, 4]);
        assert_eq!(book.places.len(), 2);
        assert_eq!(book.queues[&a].first_deadline(), Some(500));
        let taken = book.take(&a, 4).expect("waiter 4");
        assert_eq!(taken.deadline, 900);
        assert!(book.take(&a, 4).is_none(), "taken once");
        assert_eq!(book.places.len(), 1);
    }
}
