//! A readers-writer lock's state and its rules, apart from the server: a
//! mode and its holders, each a token with its own lease end (absolute Unix
//! ms, [`lease::NO_END`] for none). Read-held by one or more tokens, or
//! write-held by exactly one.

use std::ffi::CStr;

use crate::common::lease;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    Read,
    Write,
}

impl Mode {
    /// The word the commands and their effects use.
    pub fn word(self) -> &'static CStr {
        match self {
            Mode::Read => c"READ",
            Mode::Write => c"WRITE",
        }
    }

    fn stored(self) -> u64 {
        match self {
            Mode::Read => 1,
            Mode::Write => 2,
        }
    }

    fn from_stored(value: u64) -> Option<Mode> {
        match value {
            1 => Some(Mode::Read),
            2 => Some(Mode::Write),
            _ => None,
        }
    }
}

/// What an acquisition of `want` by a token may do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Decision {
    /// Granted to a token that held nothing.
    New,
    /// The token already holds this mode: granted again, lease reset.
    Again,
    /// The token holds WRITE and asks READ: it becomes a reader.
    Downgrade,
    /// The token holds READ and asks WRITE: refused (two readers upgrading
    /// would wait for each other forever).
    Upgrade,
    /// Not now.
    Busy,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RwLock {
    mode: Mode,
    /// The holders in token order, each with its lease end. A plain vector:
    /// a lock has few holders, and one allocation per holder (its token)
    /// keeps an acquisition as cheap as `LOCK.ACQUIRE`'s.
    holders: Vec<(Box<[u8]>, u64)>,
}

impl Default for RwLock {
    fn default() -> Self {
        Self {
            mode: Mode::Read,
            holders: Vec::new(),
        }
    }
}

impl RwLock {
    /// The mode, `None` when nobody holds the lock.
    pub fn mode(&self) -> Option<Mode> {
        (!self.holders.is_empty()).then_some(self.mode)
    }

    /// Where `token` is among the holders, or where it would go.
    fn find(&self, token: &[u8]) -> Result<usize, usize> {
        self.holders
            .binary_search_by(|(held, _)| held.as_ref().cmp(token))
    }

    /// The mode `token` holds.
    pub fn held_by(&self, token: &[u8]) -> Option<Mode> {
        self.find(token).is_ok().then_some(self.mode)
    }

    /// What asking for `want` with `token` may do at time `now` (a holder
    /// whose lease ended before then counts as gone, reclaimed or not).
    /// `others_wait`: clients wait for the lock, and this asker is not the
    /// first of them (a new arrival never passes a waiter; a token already
    /// holding may still retry or downgrade).
    pub fn decide(&self, token: &[u8], want: Mode, others_wait: bool, now: u64) -> Decision {
        let holds = self
            .end_of(token)
            .filter(|&until| until >= now)
            .map(|_| self.mode);
        let mode = self
            .last_end()
            .filter(|&until| until >= now)
            .map(|_| self.mode);
        match (holds, want) {
            (Some(held), _) if held == want => Decision::Again,
            (Some(Mode::Write), Mode::Read) => Decision::Downgrade,
            (Some(_), _) => Decision::Upgrade,
            (None, _) if others_wait => Decision::Busy,
            (None, Mode::Read) if mode != Some(Mode::Write) => Decision::New,
            (None, Mode::Write) if mode.is_none() => Decision::New,
            (None, _) => Decision::Busy,
        }
    }

    /// Makes `token` hold `mode` until `until`. A writer holds alone: the
    /// other holders go (the primary drops them first; a stream that did
    /// not still leaves a lock one writer holds).
    pub fn hold(&mut self, token: &[u8], mode: Mode, until: u64) {
        if mode == Mode::Write || self.mode == Mode::Write {
            self.holders.retain(|(held, _)| held.as_ref() == token);
        }
        self.mode = mode;
        match self.find(token) {
            Ok(at) => {
                if let Some((_, end)) = self.holders.get_mut(at) {
                    *end = until;
                }
            }
            Err(at) => self.holders.insert(at, (token.into(), until)),
        }
    }

    /// Lets `token` go; `true` when it held the lock.
    pub fn release(&mut self, token: &[u8]) -> bool {
        match self.find(token) {
            Ok(at) => {
                self.holders.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// The lease end of `token`, when it holds the lock.
    pub fn end_of(&self, token: &[u8]) -> Option<u64> {
        let at = self.find(token).ok()?;
        self.holders.get(at).map(|(_, until)| *until)
    }

    /// Lets go every holder whose lease ended before `now`, passing each
    /// token to `freed`.
    pub fn reclaim(&mut self, now: u64, mut freed: impl FnMut(&[u8])) {
        if self.first_end().is_none_or(|first| first >= now) {
            return;
        }
        self.holders.retain(|(token, until)| {
            let live = *until >= now;
            if !live {
                freed(token);
            }
            live
        });
    }

    /// The first lease end (a holder may let go by itself then).
    pub fn first_end(&self) -> Option<u64> {
        self.holders.iter().map(|(_, until)| *until).min()
    }

    /// The last lease end ([`lease::NO_END`] when some holder has none):
    /// the key lives until then.
    pub fn last_end(&self) -> Option<u64> {
        self.holders.iter().map(|(_, until)| *until).max()
    }

    /// The holders and their lease ends, in token order.
    pub fn holders(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.holders
            .iter()
            .map(|(token, until)| (token.as_ref(), *until))
    }

    /// The stored mode word (1 read, 2 write).
    pub fn stored_mode(&self) -> u64 {
        self.mode.stored()
    }

    /// A lock read back from its stored form, every field checked.
    pub fn restore(mode: u64, holders: Vec<(Vec<u8>, u64)>) -> Result<RwLock, &'static str> {
        let mode = Mode::from_stored(mode).ok_or("unknown mode")?;
        if holders.is_empty() {
            return Err("no holder");
        }
        if mode == Mode::Write && holders.len() > 1 {
            return Err("more than one writer");
        }
        let mut lock = RwLock {
            mode,
            ..RwLock::default()
        };
        for (token, until) in holders {
            if token.is_empty() {
                return Err("empty token");
            }
            if !lease::valid(until) {
                return Err("lease end out of range");
            }
            if lock.find(&token).is_ok() {
                return Err("repeated token");
            }
            lock.hold(&token, mode, until);
        }
        Ok(lock)
    }

    /// Bytes held, for `MEMORY USAGE`.
    pub fn memory(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.holders.capacity() * std::mem::size_of::<(Box<[u8]>, u64)>()
            + self
                .holders
                .iter()
                .map(|(token, _)| token.len())
                .sum::<usize>()
    }

    /// Allocations owned, for the server's lazy-free decision.
    pub fn allocations(&self) -> usize {
        2 + self.holders.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::lease::NO_END;

    fn lock(mode: Mode, holders: &[(&str, u64)]) -> RwLock {
        let mut lock = RwLock::default();
        for (token, until) in holders {
            lock.hold(token.as_bytes(), mode, *until);
        }
        lock
    }

    #[test]
    fn readers_share_and_a_writer_holds_alone() {
        let free = RwLock::default();
        assert_eq!(free.mode(), None);
        assert_eq!(free.decide(b"a", Mode::Read, false, 5), Decision::New);
        assert_eq!(free.decide(b"a", Mode::Write, false, 5), Decision::New);
        let read = lock(Mode::Read, &[("a", 10), ("b", 20)]);
        assert_eq!(read.mode(), Some(Mode::Read));
        assert_eq!(read.decide(b"c", Mode::Read, false, 5), Decision::New);
        assert_eq!(read.decide(b"c", Mode::Write, false, 5), Decision::Busy);
        let write = lock(Mode::Write, &[("w", 10)]);
        assert_eq!(write.decide(b"c", Mode::Read, false, 5), Decision::Busy);
        assert_eq!(write.decide(b"c", Mode::Write, false, 5), Decision::Busy);
    }

    #[test]
    fn a_new_arrival_never_passes_a_waiter_but_a_holder_may_retry() {
        let read = lock(Mode::Read, &[("a", 10)]);
        assert_eq!(read.decide(b"c", Mode::Read, true, 5), Decision::Busy);
        assert_eq!(
            RwLock::default().decide(b"c", Mode::Write, true, 5),
            Decision::Busy
        );
        assert_eq!(read.decide(b"a", Mode::Read, true, 5), Decision::Again);
        assert_eq!(read.decide(b"a", Mode::Write, true, 5), Decision::Upgrade);
        assert_eq!(read.decide(b"a", Mode::Write, false, 5), Decision::Upgrade);
        let write = lock(Mode::Write, &[("w", 10)]);
        assert_eq!(write.decide(b"w", Mode::Write, true, 5), Decision::Again);
        assert_eq!(write.decide(b"w", Mode::Read, true, 5), Decision::Downgrade);
    }

    #[test]
    fn an_ended_lease_counts_as_gone_before_it_is_reclaimed() {
        let write = lock(Mode::Write, &[("w", 10)]);
        assert_eq!(write.decide(b"c", Mode::Read, false, 10), Decision::Busy);
        assert_eq!(write.decide(b"c", Mode::Read, false, 11), Decision::New);
        assert_eq!(write.decide(b"c", Mode::Write, false, 11), Decision::New);
        assert_eq!(write.decide(b"w", Mode::Read, false, 11), Decision::New);
        let read = lock(Mode::Read, &[("a", 10), ("b", 20)]);
        assert_eq!(read.decide(b"a", Mode::Write, false, 11), Decision::Busy);
        assert_eq!(read.decide(b"c", Mode::Write, false, 21), Decision::New);
    }

    #[test]
    fn holding_write_drops_the_others_and_downgrading_keeps_the_holder() {
        let mut l = lock(Mode::Read, &[("a", 10), ("b", 20)]);
        l.hold(b"w", Mode::Write, 30);
        assert_eq!(l.holders().collect::<Vec<_>>(), vec![(&b"w"[..], 30)]);
        assert_eq!(l.first_end(), Some(30));
        l.hold(b"w", Mode::Read, 40);
        assert_eq!(l.mode(), Some(Mode::Read));
        assert_eq!(l.holders().collect::<Vec<_>>(), vec![(&b"w"[..], 40)]);
        assert_eq!((l.first_end(), l.last_end()), (Some(40), Some(40)));
        // A read hold onto a write-held lock (a stream that did not drop the
        // writer first) still leaves a valid lock.
        let mut l = lock(Mode::Write, &[("w", 10)]);
        l.hold(b"r", Mode::Read, 20);
        assert_eq!(l.holders().collect::<Vec<_>>(), vec![(&b"r"[..], 20)]);
    }

    #[test]
    fn ended_leases_go_one_by_one_and_the_ends_follow() {
        let mut l = lock(Mode::Read, &[("a", 10), ("b", 20), ("c", NO_END)]);
        assert_eq!((l.first_end(), l.last_end()), (Some(10), Some(NO_END)));
        let mut freed = Vec::new();
        l.reclaim(10, |t| freed.push(t.to_vec()));
        assert!(freed.is_empty(), "a lease lasts through its end");
        l.reclaim(21, |t| freed.push(t.to_vec()));
        assert_eq!(freed, vec![b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(l.holders().count(), 1);
        l.hold(b"c", Mode::Read, 50);
        assert_eq!((l.first_end(), l.last_end()), (Some(50), Some(50)));
        assert!(l.release(b"c"));
        assert!(!l.release(b"c"));
        assert_eq!(l.mode(), None);
        assert_eq!((l.first_end(), l.last_end()), (None, None));
    }

    #[test]
    fn restore_checks_every_field() {
        let ok = RwLock::restore(1, vec![(b"a".to_vec(), 5), (b"b".to_vec(), NO_END)]);
        assert_eq!(ok, Ok(lock(Mode::Read, &[("a", 5), ("b", NO_END)])));
        assert!(RwLock::restore(2, vec![(b"w".to_vec(), 5)]).is_ok());
        assert_eq!(
            RwLock::restore(0, vec![(b"a".to_vec(), 5)]),
            Err("unknown mode")
        );
        assert_eq!(
            RwLock::restore(3, vec![(b"a".to_vec(), 5)]),
            Err("unknown mode")
        );
        assert_eq!(RwLock::restore(1, vec![]), Err("no holder"));
        assert_eq!(
            RwLock::restore(2, vec![(b"a".to_vec(), 5), (b"b".to_vec(), 5)]),
            Err("more than one writer")
        );
        assert_eq!(RwLock::restore(1, vec![(vec![], 5)]), Err("empty token"));
        assert_eq!(
            RwLock::restore(1, vec![(b"a".to_vec(), 0)]),
            Err("lease end out of range")
        );
        assert_eq!(
            RwLock::restore(1, vec![(b"a".to_vec(), 5), (b"a".to_vec(), 6)]),
            Err("repeated token")
        );
    }
}
