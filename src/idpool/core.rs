//! A pool's state and rules, without the server: the IDs 1..=max handed out
//! in cyclic order, each leased until an absolute time (Unix milliseconds of
//! the primary's clock) or forever.
//!
//! A lease is live while its expiry is not before now (as a key's TTL). Ended
//! leases are free at once; they are only removed ("reclaimed") by the next
//! write, each once, so every operation is O(log n) amortised. Reclaiming
//! changes what is stored, never what a command answers; only the primary
//! does it, and it replicates the removals (see `idpool.rs`), so a primary
//! and its replicas store the same leases.

#![forbid(unsafe_code)]

use super::leases::Leases;
use crate::common::lease::{self, NO_END};

#[derive(Clone, Debug)]
pub struct Pool {
    max: u32,
    /// Where the next search for a free ID starts (1..=max).
    next: u32,
    /// Milliseconds; 0 for leases that never end unless asked.
    default_ttl: u64,
    leases: Leases,
}

/// Why a stored pool was refused.
pub type Corrupt = &'static str;

impl Pool {
    /// An empty pool of `1..=max` (`max` ≥ 1, checked by the caller).
    pub fn new(max: u32, default_ttl: Option<u64>) -> Self {
        Self {
            max: max.max(1),
            next: 1,
            default_ttl: default_ttl.unwrap_or(0),
            leases: Leases::default(),
        }
    }

    /// A pool read back from storage, every invariant checked: IDs strictly
    /// increasing within 1..=max, `next` within 1..=max, times representable.
    pub fn restore(
        max: u64,
        next: u64,
        default_ttl: u64,
        leases: Vec<(u64, u64)>,
    ) -> Result<Self, Corrupt> {
        let max = u32::try_from(max)
            .ok()
            .filter(|&max| max >= 1)
            .ok_or("max out of range")?;
        let next = u32::try_from(next)
            .ok()
            .filter(|next| (1..=max).contains(next))
            .ok_or("next out of range")?;
        if default_ttl > i64::MAX as u64 {
            return Err("default TTL out of range");
        }
        let mut previous = 0;
        let mut checked = Vec::with_capacity(leases.len());
        for (id, expiry) in leases {
            if id <= previous || id > u64::from(max) {
                return Err("lease IDs out of order or out of range");
            }
            if !lease::valid(expiry) {
                return Err("lease expiry out of range");
            }
            previous = id;
            checked.push((id as u32, expiry));
        }
        Ok(Self {
            max,
            next,
            default_ttl,
            leases: Leases::from_sorted(checked).ok_or("too many leases")?,
        })
    }

    pub fn max(&self) -> u32 {
        self.max
    }

    pub fn next(&self) -> u32 {
        self.next
    }

    pub fn default_ttl(&self) -> Option<u64> {
        (self.default_ttl != 0).then_some(self.default_ttl)
    }

    /// The leases stored, ended ones included, in ID order.
    pub fn leases(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.leases.iter()
    }

    /// How many leases are stored (ended ones included).
    pub fn stored(&self) -> u64 {
        self.leases.len()
    }

    /// How many leases are live at `now`.
    pub fn live(&self, now: u64) -> u64 {
        self.leases.len() - self.leases.count_ended(now)
    }

    /// Bytes held, for `MEMORY USAGE`.
    pub fn memory(&self) -> usize {
        std::mem::size_of::<Self>() + self.leases.memory()
    }

    pub fn allocations(&self) -> usize {
        self.leases.allocations()
    }

    /// Removes the leases that ended before `now` and returns their IDs. Only
    /// the primary reclaims (and replicates the removals), at the start of
    /// each write that passed its checks, so the stored leases of a primary
    /// and its replicas stay identical.
    pub fn reclaim(&mut self, now: u64, mut reclaimed: impl FnMut(u32)) {
        // The earliest end is kept at the root: nothing to do is O(1).
        while self.leases.earliest_expiry() < now {
            let Some((id, _)) = self.leases.earliest() else {
                break;
            };
            self.leases.remove(id);
            reclaimed(id);
        }
    }

    /// The moment the first lease that ends will have ended, if any.
    pub fn next_end(&self) -> Option<u64> {
        match self.leases.earliest_expiry() {
            NO_END => None,
            at => Some(at.saturating_add(1)),
        }
    }

    /// Leases the first free ID at or after `next` (wrapping from max to 1)
    /// until `expiry`; `None` when every ID is leased. Ended leases must have
    /// been reclaimed.
    pub fn take(&mut self, expiry: u64) -> Option<u32> {
        if self.leases.len() >= u64::from(self.max) {
            return None;
        }
        // Most often the cursor itself is free: one descent leases it.
        // Otherwise count past the leased run that starts there.
        let id = if self.leases.insert_new(self.next, expiry) {
            self.next
        } else {
            let max = u64::from(self.max);
            let mut id = self.leases.first_missing_from(u64::from(self.next));
            if id > max {
                id = self.leases.first_missing_from(1);
            }
            // Fewer than max IDs are leased, all within 1..=max: found.
            let id = u32::try_from(id).ok().filter(|&id| id <= self.max)?;
            self.leases.insert(id, expiry);
            id
        };
        self.next = if id == self.max { 1 } else { id + 1 };
        Some(id)
    }

    /// The end of `id`'s stored lease (`NO_END`: never), `None` without one.
    pub fn lease(&self, id: u32) -> Option<u64> {
        self.leases.get(id)
    }

    /// Ends `id`'s lease; `true` when it had one (ended leases must have been
    /// reclaimed).
    pub fn release(&mut self, id: u32) -> bool {
        self.leases.remove(id)
    }

    /// Moves `id`'s lease end to `expiry`; `false` when it has no lease
    /// (ended leases must have been reclaimed).
    pub fn renew(&mut self, id: u32, expiry: u64) -> bool {
        if self.leases.get(id).is_none() {
            return false;
        }
        self.leases.insert(id, expiry);
        true
    }

    /// Whether the pool may become 1..=max at `now`: shrinking is refused,
    /// with the highest live ID, while a live lease lies above the new max.
    pub fn can_resize(&self, now: u64, max: u32) -> Result<(), u32> {
        match self.leases.last_live(now) {
            Some(last) if last > max => Err(last),
            _ => Ok(()),
        }
    }

    /// Applies a decision as the primary made it, whatever this server's
    /// clock says: the bounds (leases stored above `max` are dropped), the
    /// IDs freed, then each lease. The caller has checked `1 ≤ next ≤ max`
    /// and that every ID is within 1..=max.
    pub fn apply(&mut self, max: u32, next: u32, freed: &[u32], leases: &[(u32, u64)]) {
        while let Some(last) = self.leases.last_id().filter(|&last| last > max) {
            self.leases.remove(last);
        }
        self.max = max.max(1);
        self.next = if (1..=self.max).contains(&next) {
            next
        } else {
            1
        };
        for &id in freed {
            self.leases.remove(id);
        }
        for &(id, expiry) in leases {
            self.leases.insert(id, expiry);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};

    use super::{Pool, NO_END};
    use crate::common::tree::VISITS;

    const HOUR: u64 = 3_600_000;

    fn visits(f: impl FnOnce()) -> u64 {
        VISITS.with(|v| v.set(0));
        f();
        VISITS.with(|v| v.get())
    }

    /// A write as the primary runs it: reclaim, then decide.
    fn take(pool: &mut Pool, now: u64, expiry: u64) -> Option<u32> {
        pool.reclaim(now, |_| {});
        pool.take(expiry)
    }

    fn release(pool: &mut Pool, now: u64, id: u32) -> bool {
        pool.reclaim(now, |_| {});
        pool.release(id)
    }

    fn renew(pool: &mut Pool, now: u64, id: u32, expiry: u64) -> bool {
        pool.reclaim(now, |_| {});
        pool.renew(id, expiry)
    }

    fn resize(pool: &mut Pool, now: u64, max: u32) -> Result<(), u32> {
        pool.can_resize(now, max)?;
        pool.reclaim(now, |_| {});
        let next = pool.next();
        pool.apply(max, next, &[], &[]);
        Ok(())
    }

    #[test]
    fn seed_scenario() {
        let now = 1_000_000;
        let mut pool = Pool::new(100, None);
        for expected in 1..=100 {
            assert_eq!(take(&mut pool, now, now + HOUR), Some(expected));
        }
        assert_eq!(take(&mut pool, now, now + HOUR), None);
        assert!(release(&mut pool, now, 37));
        assert!(!release(&mut pool, now, 37));
        assert_eq!(take(&mut pool, now, now + HOUR), Some(37));
        assert_eq!(pool.next(), 38);
        // 5 gets a short lease; after it ends it is handed out in turn.
        assert!(release(&mut pool, now, 5));
        assert!(release(&mut pool, now, 60));
        assert_eq!(take(&mut pool, now, now + 10), Some(60));
        assert_eq!(take(&mut pool, now, now + 10), Some(5));
        assert!(release(&mut pool, now, 80));
        let later = now + 11;
        assert_eq!(pool.live(later), 97);
        assert_eq!(take(&mut pool, later, NO_END), Some(60));
        assert_eq!(take(&mut pool, later, NO_END), Some(80));
        assert_eq!(take(&mut pool, later, NO_END), Some(5));
        assert_eq!(take(&mut pool, later, NO_END), None);
    }

    #[test]
    fn renew_and_resize() {
        let mut pool = Pool::new(10, Some(50));
        assert_eq!(pool.default_ttl(), Some(50));
        assert_eq!(take(&mut pool, 100, 150), Some(1));
        assert!(renew(&mut pool, 120, 1, 1000));
        assert!(!renew(&mut pool, 120, 2, 1000));
        assert_eq!(pool.live(999), 1);
        assert_eq!(pool.live(1001), 0);
        assert!(!renew(&mut pool, 1001, 1, 5000));
        assert_eq!(take(&mut pool, 1001, NO_END), Some(2));
        assert_eq!(take(&mut pool, 1001, NO_END), Some(3));
        assert_eq!(resize(&mut pool, 1001, 2), Err(3));
        assert!(release(&mut pool, 1001, 3));
        assert_eq!(resize(&mut pool, 1001, 2), Ok(()));
        assert_eq!((pool.max(), pool.next()), (2, 1));
        assert_eq!(take(&mut pool, 1001, NO_END), Some(1));
        assert_eq!(take(&mut pool, 1001, NO_END), None);
        assert_eq!(resize(&mut pool, 1001, 4), Ok(()));
        assert_eq!(take(&mut pool, 1001, NO_END), Some(3));
    }

    #[test]
    fn restore_refuses_what_breaks_an_invariant() {
        assert!(Pool::restore(10, 1, 0, vec![(1, NO_END), (3, 5)]).is_ok());
        assert!(Pool::restore(0, 1, 0, vec![]).is_err());
        assert!(Pool::restore(1 << 32, 1, 0, vec![]).is_err());
        assert!(Pool::restore(10, 0, 0, vec![]).is_err());
        assert!(Pool::restore(10, 11, 0, vec![]).is_err());
        assert!(Pool::restore(10, 1, u64::MAX, vec![]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(3, 5), (3, 5)]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(3, 5), (2, 5)]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(0, 5)]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(11, 5)]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(1, 0)]).is_err());
        assert!(Pool::restore(10, 1, 0, vec![(1, 1 << 63)]).is_err());
    }

    /// Leases are saved in increasing ID order and loaded in one pass that
    /// checks each ID against the one before: 200,000 of them in that order
    /// make the pool they were saved from; in any other order (which no
    /// server writes) they are refused, not sorted.
    #[test]
    fn restore_takes_the_order_saved_only() {
        // Every other lease forever.
        let end = |id: u64| {
            if id.is_multiple_of(2) {
                NO_END
            } else {
                HOUR + id
            }
        };
        let leases: Vec<(u64, u64)> = (1..=200_000).map(|id| (id, end(id))).collect();
        let pool = Pool::restore(400_000, 150_000, 0, leases.clone()).expect("in order");
        pool.leases.check();
        let stored: Vec<(u64, u64)> = pool.leases().map(|(id, at)| (u64::from(id), at)).collect();
        assert_eq!(stored, leases);
        assert_eq!(
            (pool.max(), pool.next(), pool.stored()),
            (400_000, 150_000, 200_000)
        );
        let out_of_order = Err("lease IDs out of order or out of range");
        let mut reversed = leases.clone();
        reversed.reverse();
        let mut shuffled = leases.clone();
        shuffled.shuffle(&mut StdRng::seed_from_u64(3));
        let mut one_pair_swapped = leases;
        one_pair_swapped.swap(123_456, 123_457);
        for disordered in [reversed, shuffled, one_pair_swapped] {
            let refused = Pool::restore(400_000, 150_000, 0, disordered).map(|_| ());
            assert_eq!(refused, out_of_order);
        }
    }

    /// Against a model that walks every ID: the same IDs, in the same
    /// order, and never one ID in two live leases.
    #[test]
    fn matches_a_walking_model() {
        let mut rng = StdRng::seed_from_u64(11);
        let max = 64u32;
        let mut pool = Pool::new(max, None);
        let mut model: BTreeMap<u32, u64> = BTreeMap::new();
        let mut next = 1u32;
        let mut now = 1_000u64;
        for _ in 0..50_000 {
            now += rng.random_range(0..3);
            let live =
                |model: &BTreeMap<u32, u64>, id: u32| model.get(&id).is_some_and(|&e| e >= now);
            match rng.random_range(0..10) {
                0..=5 => {
                    let expiry = now + rng.random_range(0..40);
                    let expected = (0..max)
                        .map(|step| (next - 1 + step) % max + 1)
                        .find(|&id| !live(&model, id));
                    assert_eq!(take(&mut pool, now, expiry), expected);
                    if let Some(id) = expected {
                        model.insert(id, expiry);
                        next = id % max + 1;
                    }
                }
                6..=8 => {
                    let id = rng.random_range(1..=max);
                    assert_eq!(release(&mut pool, now, id), live(&model, id));
                    model.remove(&id);
                }
                _ => {
                    let id = rng.random_range(1..=max);
                    let expiry = now + rng.random_range(0..40);
                    let was_live = live(&model, id);
                    assert_eq!(renew(&mut pool, now, id, expiry), was_live);
                    if was_live {
                        model.insert(id, expiry);
                    }
                }
            }
            let expected_live = model.values().filter(|&&e| e >= now).count() as u64;
            assert_eq!(pool.live(now), expected_live);
            assert_eq!(pool.next(), next);
        }
        pool.leases.check();
    }

    /// The cost target, on node visits: taking an ID from a pool of ten
    /// million that is 99.99% leased — with the one free run right after the
    /// longest leased run, the worst case for a walk — costs about what it
    /// costs from an almost empty pool: a few root-to-leaf descents.
    #[test]
    fn next_costs_log_n_at_any_fill() {
        let max = 10_000_000u32;
        let leased = max - 1_000;
        let mut full = Pool::restore(
            u64::from(max),
            1,
            0,
            (1..=u64::from(leased)).map(|id| (id, NO_END)).collect(),
        )
        .expect("valid pool");
        full.leases.check();
        let depth = u64::from(full.leases.depth());
        assert!(depth <= 24, "depth {depth}"); // log2(10^7) ≈ 23.3
        let mut sparse = Pool::new(max, None);
        let mut sparse_cost = 0;
        let mut full_cost = 0;
        for round in 0..1_000u32 {
            sparse_cost = sparse_cost.max(visits(|| {
                assert_eq!(take(&mut sparse, 1, NO_END), Some(round + 1))
            }));
            full_cost = full_cost.max(visits(|| {
                assert_eq!(take(&mut full, 1, NO_END), Some(leased + round + 1))
            }));
        }
        assert_eq!(take(&mut full, 1, NO_END), None);
        // Insert, plus two counting descents; each at most the AVL height.
        assert!(full_cost <= 4 * depth, "full pool: {full_cost} visits");
        assert!(sparse_cost <= 4 * 11, "sparse pool: {sparse_cost} visits");
        // Releasing and re-taking in the middle of the leased run.
        assert!(release(&mut full, 1, 5_000_000));
        let cost = visits(|| assert_eq!(take(&mut full, 1, NO_END), Some(5_000_000)));
        assert!(cost <= 4 * depth, "middle: {cost} visits");
        // Memory: 40 bytes a lease, plus at most one chunk of slack.
        let per_lease = full.memory() as f64 / full.stored() as f64;
        assert!(per_lease <= 41.0, "{per_lease} bytes per lease");
        // An idle pool of the largest size.
        assert!(Pool::new(u32::MAX, None).memory() < 1024);
    }

    #[test]
    fn reclaiming_ended_leases_is_amortised() {
        let mut pool = Pool::new(100_000, None);
        for _ in 0..100_000 {
            take(&mut pool, 1, 10);
        }
        // Every lease ended: the next take reclaims all of them once.
        let first = visits(|| assert_eq!(take(&mut pool, 20, NO_END), Some(1)));
        assert!(first >= 100_000);
        assert_eq!(pool.stored(), 1);
        let second = visits(|| assert_eq!(take(&mut pool, 20, NO_END), Some(2)));
        assert!(second <= 4 * 17, "{second}");
    }
}
