//! A readers-writer lock's state and its rules, apart from the server: a
//! mode and its holders, each a token with its own lease end (absolute Unix
//! ms, [`lease::NO_END`] for none). Read-held by one or more tokens, or
//! write-held by exactly one.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
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
    /// The holders by token, each with its lease end: O(log N) to find, add
    /// or drop one, so admitting W waiting readers next to N holders costs
    /// O(W log N), and a loader O(N log N) whatever the stored order. One
    /// allocation per holder (its token) besides the tree's nodes.
    holders: BTreeMap<Box<[u8]>, u64>,
    /// The first and last lease ends of the holders (`None` without any),
    /// kept as holders come and go: looked at by every command (reclaim,
    /// the key's TTL), found again by a scan only when a holder at either
    /// end leaves or moves inward.
    ends: Option<(u64, u64)>,
}

impl Default for RwLock {
    fn default() -> Self {
        Self {
            mode: Mode::Read,
            holders: BTreeMap::new(),
            ends: None,
        }
    }
}

impl RwLock {
    /// The mode, `None` when nobody holds the lock.
    pub fn mode(&self) -> Option<Mode> {
        (!self.holders.is_empty()).then_some(self.mode)
    }

    /// The mode `token` holds.
    pub fn held_by(&self, token: &[u8]) -> Option<Mode> {
        self.holders.contains_key(token).then_some(self.mode)
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
        let others = self.holders.len() - usize::from(self.holders.contains_key(token));
        if (mode == Mode::Write || self.mode == Mode::Write) && others > 0 {
            self.holders.retain(|held, _| held.as_ref() == token);
            self.ends = None;
            self.find_ends();
        }
        self.mode = mode;
        match self.holders.get_mut(token) {
            Some(end) => {
                let before = std::mem::replace(end, until);
                self.moved(Some(before), Some(until));
            }
            None => {
                self.holders.insert(token.into(), until);
                self.moved(None, Some(until));
            }
        }
    }

    /// Lets `token` go; `true` when it held the lock.
    pub fn release(&mut self, token: &[u8]) -> bool {
        match self.holders.remove(token) {
            Some(end) => {
                self.moved(Some(end), None);
                true
            }
            None => false,
        }
    }

    /// Keeps [`RwLock::ends`] after a holder's end went from `before` to
    /// `after` (`None`: it came, or went).
    fn moved(&mut self, before: Option<u64>, after: Option<u64>) {
        let Some((first, last)) = self.ends else {
            self.find_ends();
            return;
        };
        // An end that leaves either extreme, or moves inward from it, may
        // have been the only one there: scan.
        let inward = match (before, after) {
            (Some(b), Some(a)) => (b == first && a > b) || (b == last && a < b),
            (Some(b), None) => b == first || b == last,
            (None, _) => false,
        };
        if inward {
            self.find_ends();
        } else if let Some(a) = after {
            self.ends = Some((first.min(a), last.max(a)));
        }
    }

    /// Finds the first and last lease ends by a scan of the holders.
    fn find_ends(&mut self) {
        let mut ends = self.holders.values().copied();
        self.ends = ends
            .next()
            .map(|end| ends.fold((end, end), |(first, last), e| (first.min(e), last.max(e))));
    }

    /// The lease end of `token`, when it holds the lock.
    pub fn end_of(&self, token: &[u8]) -> Option<u64> {
        self.holders.get(token).copied()
    }

    /// Lets go every holder whose lease ended before `now`, passing each
    /// token to `freed`.
    pub fn reclaim(&mut self, now: u64, mut freed: impl FnMut(&[u8])) {
        if self.first_end().is_none_or(|first| first >= now) {
            return;
        }
        self.holders.retain(|token, until| {
            let live = *until >= now;
            if !live {
                freed(token);
            }
            live
        });
        self.find_ends();
    }

    /// The first lease end (a holder may let go by itself then).
    pub fn first_end(&self) -> Option<u64> {
        self.ends.map(|(first, _)| first)
    }

    /// The last lease end ([`lease::NO_END`] when some holder has none):
    /// the key lives until then.
    pub fn last_end(&self) -> Option<u64> {
        self.ends.map(|(_, last)| last)
    }

    /// The holders and their lease ends, in token order.
    pub fn holders(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.holders
            .iter()
            .map(|(token, until)| (token.as_ref(), *until))
    }

    /// How many hold the lock.
    pub fn holder_count(&self) -> usize {
        self.holders.len()
    }

    /// The stored mode word (1 read, 2 write).
    pub fn stored_mode(&self) -> u64 {
        self.mode.stored()
    }

    /// A lock read back from its stored form, every field checked, in
    /// O(N log N) whatever the order of the holders.
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
            if lock.holders.insert(token.into(), until).is_some() {
                return Err("repeated token");
            }
        }
        lock.find_ends();
        Ok(lock)
    }

    /// Bytes held, for `MEMORY USAGE`: the tree's entries (a node holds up
    /// to 11, about two thirds full) and the tokens.
    pub fn memory(&self) -> usize {
        let entry = std::mem::size_of::<(Box<[u8]>, u64)>();
        std::mem::size_of::<Self>()
            + self.holders.len() * entry * 3 / 2
            + self.holders.keys().map(|token| token.len()).sum::<usize>()
    }

    /// Allocations owned, for the server's lazy-free decision: the tree's
    /// nodes and the tokens.
    pub fn allocations(&self) -> usize {
        1 + self.holders.len() + self.holders.len().div_ceil(7)
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

    /// The first and last ends as a scan finds them.
    fn scanned(l: &RwLock) -> Option<(u64, u64)> {
        let ends: Vec<u64> = l.holders().map(|(_, until)| until).collect();
        Some((*ends.iter().min()?, *ends.iter().max()?))
    }

    #[test]
    fn the_kept_ends_follow_every_change() {
        // A small generator: the same sequence every run.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut l = RwLock::default();
        for _ in 0..20_000 {
            let token = format!("t{}", next(40)).into_bytes();
            let until = match next(10) {
                0 => NO_END,
                _ => 1 + next(60),
            };
            match next(8) {
                0 => {
                    l.release(&token);
                }
                1 => l.reclaim(next(60), |_| {}),
                2 => l.hold(&token, Mode::Write, until),
                _ => l.hold(&token, Mode::Read, until),
            }
            assert_eq!((l.first_end(), l.last_end()), scanned(&l).unzip());
        }
    }

    #[test]
    fn restore_takes_any_order_in_n_log_n() {
        let n = 200_000;
        let descending: Vec<(Vec<u8>, u64)> = (0..n)
            .rev()
            .map(|i| (format!("reader:{i:08}").into_bytes(), 1_000 + i))
            .collect();
        let started = std::time::Instant::now();
        let Ok(l) = RwLock::restore(1, descending) else {
            panic!("refused");
        };
        assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
        assert_eq!(l.holders().count(), n as usize);
        assert_eq!(
            (l.first_end(), l.last_end()),
            (Some(1_000), Some(1_000 + n - 1))
        );
        let tokens: Vec<&[u8]> = l.holders().map(|(token, _)| token).collect();
        assert!(tokens.windows(2).all(|pair| pair[0] < pair[1]));
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
