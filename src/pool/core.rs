//! A resource pool's state and rules, without the server: named resources,
//! each free or held by one owner until an absolute time (Unix milliseconds
//! of the primary's clock) or forever.
//!
//! Free resources are handed out in the order they became free (the one free
//! the longest first), which spreads wear and is the same on every replica.
//! A lease is live while its end is not before now (as a key's TTL); an
//! ended lease's resource is free at once for what a command answers, and is
//! moved back to the free list ("reclaimed") by the next write on the
//! primary, which replicates the move (see `pool.rs`), so a primary and its
//! replicas store the same state.

#![forbid(unsafe_code)]

use crate::common::lease::{self, NO_END};
use crate::common::memory::block;
use std::collections::{BTreeMap, BTreeSet};
use std::mem::{size_of, MaybeUninit};

type Name = Box<[u8]>;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Slot {
    /// Free since the pool's `seq` was this.
    Free(u64),
    Held {
        owner: Name,
        until: u64,
    },
}

#[derive(Clone, Debug, Default)]
pub struct Pool {
    slots: BTreeMap<Name, Slot>,
    /// Free resources in the order they became free.
    free: BTreeMap<u64, Name>,
    /// Leases that end, by end then name.
    ending: BTreeSet<(u64, Name)>,
    /// Bumped every time a resource becomes free.
    seq: u64,
}

/// A held resource as it is listed: name, owner, lease end.
pub type Holder<'a> = (&'a [u8], &'a [u8], u64);

/// Why a stored pool was refused.
pub type Corrupt = &'static str;

fn live(until: u64, now: u64) -> bool {
    until >= now
}

/// The entries a B-tree node holds at most (the standard library's).
const NODE_CAPACITY: usize = 11;

/// A node of the standard library's B-tree maps and sets, as it is laid
/// out: the parent's address, the node's place in it and its length, then
/// room for `NODE_CAPACITY` keys and values. Only its size is used.
#[allow(dead_code)]
#[repr(C)]
struct LeafNode<K, V> {
    parent: usize,
    parent_idx: u16,
    len: u16,
    keys: [MaybeUninit<K>; NODE_CAPACITY],
    vals: [MaybeUninit<V>; NODE_CAPACITY],
}

/// A node above the leaves: a leaf's fields and the addresses of its
/// children, one more than its keys.
#[allow(dead_code)]
#[repr(C)]
struct InternalNode<K, V> {
    data: LeafNode<K, V>,
    edges: [usize; NODE_CAPACITY + 1],
}

/// The keys a node holds, plus one (its share of the keys above it), in a
/// tree always added to at its end, as `free` is: a full node splits into
/// 6 keys kept, 1 moved up and the rest with the new entry, so nodes are
/// left with 6 keys: 7.
const APPEND_FILL: usize = 7;

/// The same in a tree added to in any order, as `slots` (keyed by name)
/// and `ending` (by lease end, then name): 7 when entries come in order,
/// about 9 in random order (a B-tree filled at random is about 70% full);
/// 8 lies between.
const ANY_ORDER_FILL: usize = 8;

/// Bytes of a B-tree map of `len` entries from `K` to `V` (a set has no
/// values) whose nodes hold `fill` - 1 keys: its leaves, then each level
/// of nodes above them, up to the root. How full the nodes are depends on the
/// order entries came and went, which the map does not tell, so `fill` is
/// the usual fill of this map.
fn tree_bytes<K, V>(len: usize, fill: usize) -> usize {
    if len == 0 {
        return 0;
    }
    // A tree of n entries in L leaves keeps L - 1 of them in the nodes
    // above, so n + 1 = L × (keys a leaf + 1) = L × `fill`; each level
    // above has one node per `fill` nodes below.
    let mut nodes = nodes_holding(len + 1, fill);
    let mut bytes = nodes * block(size_of::<LeafNode<K, V>>());
    while nodes > 1 {
        nodes = nodes_holding(nodes, fill);
        bytes += nodes * block(size_of::<InternalNode<K, V>>());
    }
    bytes
}

/// Nodes that hold `items` (entries plus one, or nodes below) at `fill` a
/// node: one while one node holds them all, else the nearest whole number,
/// at least two (a node split).
fn nodes_holding(items: usize, fill: usize) -> usize {
    if items <= NODE_CAPACITY + 1 {
        1
    } else {
        ((items + fill / 2) / fill).max(2)
    }
}

impl Pool {
    /// A pool read back from storage, every invariant checked: the free
    /// resources in order, then the held ones with their owners and ends.
    pub fn restore(
        free: Vec<Vec<u8>>,
        held: Vec<(Vec<u8>, Vec<u8>, u64)>,
    ) -> Result<Self, Corrupt> {
        let mut pool = Pool::default();
        for name in free {
            if !pool.add(&name) {
                return Err("a resource is stored twice");
            }
        }
        for (name, owner, until) in held {
            if owner.is_empty() {
                return Err("a holder without an owner");
            }
            if !lease::valid(until) {
                return Err("a lease end out of range");
            }
            if pool.slots.contains_key(name.as_slice()) {
                return Err("a resource is stored twice");
            }
            pool.hold(&name, &owner, until);
        }
        if pool.is_empty() {
            return Err("a pool without resources");
        }
        Ok(pool)
    }

    /// No resource at all: the key is deleted.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// Resources held by a live lease at `now`.
    pub fn held(&self, now: u64) -> usize {
        let ended = self.ending.range(..(now, Name::default())).count();
        self.slots.len() - self.free.len() - ended
    }

    /// The moment the first lease that ends will have ended, if any.
    pub fn next_end(&self) -> Option<u64> {
        self.ending
            .first()
            .map(|(until, _)| until.saturating_add(1))
    }

    /// Adds a free resource at the end of the free list; `false` if the pool
    /// has it already (free or held).
    pub fn add(&mut self, name: &[u8]) -> bool {
        if self.slots.contains_key(name) {
            return false;
        }
        self.push_free(name.into());
        true
    }

    fn push_free(&mut self, name: Name) {
        self.seq += 1;
        self.free.insert(self.seq, name.clone());
        self.slots.insert(name, Slot::Free(self.seq));
    }

    /// Takes `name`'s slot out of the free list or the endings.
    fn unlink(&mut self, name: &[u8], slot: &Slot) {
        match slot {
            Slot::Free(seq) => {
                self.free.remove(seq);
            }
            Slot::Held { until, .. } => {
                if *until != NO_END {
                    self.ending.remove(&(*until, Name::from(name)));
                }
            }
        }
    }

    /// Gives back the node a tree keeps when its last entry is removed (the
    /// standard library keeps it until the tree itself goes), at the end of
    /// each change: a pool whose resources are all held, or whose leases all
    /// ended, then holds nothing for the empty list, and [`Pool::memory`]
    /// counts an empty tree as nothing.
    fn drop_empty_nodes(&mut self) {
        if self.free.is_empty() {
            self.free = BTreeMap::new();
        }
        if self.ending.is_empty() {
            self.ending = BTreeSet::new();
        }
    }

    /// Removes a resource, free or held; `false` if the pool lacks it.
    pub fn remove(&mut self, name: &[u8]) -> bool {
        match self.slots.remove(name) {
            Some(slot) => {
                self.unlink(name, &slot);
                self.drop_empty_nodes();
                true
            }
            None => false,
        }
    }

    /// Frees every resource whose lease ended before `now`, in the order the
    /// leases ended, calling `freed` with each.
    pub fn reclaim(&mut self, now: u64, mut freed: impl FnMut(&[u8])) {
        while let Some((until, _)) = self.ending.first() {
            if live(*until, now) {
                break;
            }
            let Some((_, name)) = self.ending.pop_first() else {
                break;
            };
            freed(&name);
            self.slots.remove(&name);
            self.push_free(name);
        }
        self.drop_empty_nodes();
    }

    /// Hands the resource free the longest to `owner` until `until`; `None`
    /// when none is free. Ended leases must have been reclaimed.
    pub fn take(&mut self, owner: &[u8], until: u64) -> Option<&[u8]> {
        let (_, name) = self.free.pop_first()?;
        self.drop_empty_nodes();
        self.slots.remove(&name);
        self.set_held(name.clone(), owner, until);
        self.slots.get_key_value(&name).map(|(name, _)| &**name)
    }

    fn set_held(&mut self, name: Name, owner: &[u8], until: u64) {
        if until != NO_END {
            self.ending.insert((until, name.clone()));
        }
        self.slots.insert(
            name,
            Slot::Held {
                owner: owner.into(),
                until,
            },
        );
    }

    /// Makes `name` held by `owner` until `until`, whatever it was (a
    /// missing resource is added): a primary's decision applied as made.
    pub fn hold(&mut self, name: &[u8], owner: &[u8], until: u64) {
        if let Some(slot) = self.slots.remove(name) {
            self.unlink(name, &slot);
        }
        self.set_held(name.into(), owner, until);
        self.drop_empty_nodes();
    }

    /// Makes a held resource free (at the end of the free list); `false` if
    /// it is not held. A primary's decision, applied as made.
    pub fn free(&mut self, name: &[u8]) -> bool {
        match self.slots.get(name) {
            Some(slot @ Slot::Held { .. }) => {
                let slot = slot.clone();
                self.unlink(name, &slot);
                self.slots.remove(name);
                self.push_free(name.into());
                self.drop_empty_nodes();
                true
            }
            _ => false,
        }
    }

    /// The owner and lease end of a held resource (ended leases included:
    /// the caller reclaims first, or checks the end).
    pub fn holder(&self, name: &[u8]) -> Option<(&[u8], u64)> {
        match self.slots.get(name) {
            Some(Slot::Held { owner, until }) => Some((owner, *until)),
            _ => None,
        }
    }

    /// Whether the pool has `name` and, if so, whether it is held by a live
    /// lease at `now` (`Some(true)`), or free (`Some(false)`: free, or its
    /// lease ended, as the next write will see it). O(log M).
    pub fn is_held(&self, name: &[u8], now: u64) -> Option<bool> {
        match self.slots.get(name)? {
            Slot::Free(_) => Some(false),
            Slot::Held { until, .. } => Some(live(*until, now)),
        }
    }

    /// Frees `name` if `owner` holds it; `false` otherwise. Ended leases
    /// must have been reclaimed.
    pub fn release(&mut self, name: &[u8], owner: &[u8]) -> bool {
        self.holder(name)
            .is_some_and(|(held_by, _)| held_by == owner)
            && self.free(name)
    }

    /// Moves the end of `owner`'s lease on `name` to `until`; `false` if
    /// `owner` does not hold it. Ended leases must have been reclaimed.
    pub fn renew(&mut self, name: &[u8], owner: &[u8], until: u64) -> bool {
        let holds = self.holds(name, owner);
        if holds {
            self.hold(name, owner, until);
        }
        holds
    }

    fn holds(&self, name: &[u8], owner: &[u8]) -> bool {
        self.holder(name)
            .is_some_and(|(held_by, _)| held_by == owner)
    }

    /// Free resources, the one free the longest first (ended leases not
    /// included).
    pub fn free_list(&self) -> impl Iterator<Item = &[u8]> {
        self.free.values().map(|name| &**name)
    }

    /// Every held resource in name order, ended leases included.
    pub fn holders(&self) -> impl Iterator<Item = Holder<'_>> {
        self.slots.iter().filter_map(|(name, slot)| match slot {
            Slot::Held { owner, until } => Some((&**name, &**owner, *until)),
            Slot::Free(_) => None,
        })
    }

    /// Bytes held, for `MEMORY USAGE`: every block the pool allocates, as
    /// the allocator rounds it (see [`block`]). The server adds its own share
    /// (the key's object and name) itself.
    pub fn memory(&self) -> usize {
        // The pool itself: the server keeps it in a block of its own.
        let pool = block(size_of::<Self>());
        // The trees' nodes.
        let nodes = tree_bytes::<Name, Slot>(self.slots.len(), ANY_ORDER_FILL)
            + tree_bytes::<u64, Name>(self.free.len(), APPEND_FILL)
            + tree_bytes::<(u64, Name), ()>(self.ending.len(), ANY_ORDER_FILL);
        // Every name is stored once in `slots`, again in `free` while it is
        // free and again in `ending` while its lease has an end; every
        // holder's owner once.
        let slots: usize = self
            .slots
            .iter()
            .map(|(name, slot)| match slot {
                Slot::Free(_) => 2 * block(name.len()),
                Slot::Held { owner, .. } => block(name.len()) + block(owner.len()),
            })
            .sum();
        let ending: usize = self.ending.iter().map(|(_, name)| block(name.len())).sum();
        pool + nodes + slots + ending
    }

    /// Allocations the value owns, for the server's lazy-free decision.
    pub fn allocations(&self) -> usize {
        1 + 2 * self.slots.len() + self.free.len() + self.ending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pool: &Pool) -> Vec<&[u8]> {
        pool.free_list().collect()
    }

    fn pool(names: &[&str]) -> Pool {
        let mut pool = Pool::default();
        for name in names {
            assert!(pool.add(name.as_bytes()));
        }
        pool
    }

    #[test]
    fn hands_out_the_resource_free_the_longest() {
        let mut pool = pool(&["a", "b", "c"]);
        assert!(!pool.add(b"b"), "already there");
        assert_eq!(pool.take(b"o1", NO_END), Some(&b"a"[..]));
        assert_eq!(pool.take(b"o2", NO_END), Some(&b"b"[..]));
        assert!(pool.release(b"a", b"o1"));
        // c was free before a came back.
        assert_eq!(names(&pool), [&b"c"[..], b"a"]);
        assert_eq!(pool.take(b"o3", NO_END), Some(&b"c"[..]));
        assert_eq!(pool.take(b"o4", NO_END), Some(&b"a"[..]));
        assert_eq!(pool.take(b"o5", NO_END), None);
        assert_eq!((pool.size(), pool.held(0)), (3, 3));
    }

    #[test]
    fn only_the_holder_releases_or_renews() {
        let mut pool = pool(&["a"]);
        pool.take(b"me", 100);
        assert!(!pool.release(b"a", b"you"));
        assert!(!pool.renew(b"a", b"you", 500));
        assert!(!pool.release(b"b", b"me"), "no such resource");
        assert!(pool.renew(b"a", b"me", 500));
        assert_eq!(pool.holder(b"a"), Some((&b"me"[..], 500)));
        assert_eq!(pool.next_end(), Some(501));
        assert!(pool.release(b"a", b"me"));
        assert!(!pool.release(b"a", b"me"), "already free");
        assert_eq!(pool.next_end(), None);
    }

    #[test]
    fn ended_leases_come_back_in_the_order_they_ended() {
        let mut pool = pool(&["a", "b", "c", "d"]);
        pool.take(b"x", 300);
        pool.take(b"y", 100);
        pool.take(b"z", NO_END);
        assert_eq!((pool.held(100), pool.held(101), pool.held(301)), (3, 2, 1));
        let mut freed = Vec::new();
        pool.reclaim(100, |name| freed.push(name.to_vec()));
        assert!(freed.is_empty(), "a lease is live through its end");
        pool.reclaim(301, |name| freed.push(name.to_vec()));
        assert_eq!(freed, [b"b".to_vec(), b"a".to_vec()]);
        assert_eq!(names(&pool), [&b"d"[..], b"b", b"a"]);
        assert_eq!(
            pool.holders().collect::<Vec<_>>(),
            [(&b"c"[..], &b"z"[..], NO_END)]
        );
    }

    #[test]
    fn a_resource_is_held_while_its_lease_lives() {
        let mut pool = pool(&["a", "b", "c"]);
        pool.take(b"x", 100);
        pool.take(b"y", NO_END);
        assert_eq!(pool.is_held(b"a", 100), Some(true), "live through its end");
        assert_eq!(pool.is_held(b"a", 101), Some(false), "ended: free");
        assert_eq!(pool.is_held(b"b", u64::MAX - 1), Some(true));
        assert_eq!(pool.is_held(b"c", 0), Some(false));
        assert_eq!(pool.is_held(b"d", 0), None);
        pool.remove(b"a");
        assert_eq!(pool.is_held(b"a", 0), None);
    }

    #[test]
    fn removing_a_held_resource_ends_its_lease() {
        let mut pool = pool(&["a", "b"]);
        pool.take(b"me", 100);
        assert!(pool.remove(b"a"));
        assert!(!pool.remove(b"a"));
        assert!(!pool.release(b"a", b"me"));
        assert_eq!(pool.next_end(), None);
        assert!(pool.remove(b"b"));
        assert!(pool.is_empty());
    }

    #[test]
    fn hold_and_free_apply_a_decision_as_made() {
        let mut pool = pool(&["a", "b"]);
        pool.hold(b"b", b"w", 50);
        pool.hold(b"b", b"w", 70);
        assert_eq!(pool.holder(b"b"), Some((&b"w"[..], 70)));
        assert_eq!(pool.next_end(), Some(71));
        pool.hold(b"new", b"v", NO_END);
        assert_eq!(pool.size(), 3);
        assert!(pool.free(b"b"));
        assert!(!pool.free(b"b"));
        assert_eq!(names(&pool), [&b"a"[..], b"b"]);
    }

    #[test]
    fn restore_checks_every_field() {
        let ok = Pool::restore(
            vec![b"a".to_vec(), b"b".to_vec()],
            vec![(b"c".to_vec(), b"o".to_vec(), 10)],
        )
        .unwrap();
        assert_eq!(names(&ok), [&b"a"[..], b"b"]);
        assert_eq!(ok.holder(b"c"), Some((&b"o"[..], 10)));
        let dup = Pool::restore(
            vec![b"a".to_vec()],
            vec![(b"a".to_vec(), b"o".to_vec(), 10)],
        );
        assert!(dup.is_err());
        assert!(Pool::restore(vec![b"a".to_vec(), b"a".to_vec()], vec![]).is_err());
        assert!(Pool::restore(vec![], vec![(b"a".to_vec(), vec![], 10)]).is_err());
        assert!(Pool::restore(vec![], vec![(b"a".to_vec(), b"o".to_vec(), 0)]).is_err());
        assert!(Pool::restore(vec![], vec![]).is_err());
    }

    /// A stored pool's resources go into its B-tree maps as they are read,
    /// each in O(log n) whatever the order: holders listed reversed or
    /// shuffled (a pool is saved with them in name order) make the same
    /// pool. The free list's order is its own (the one free the longest
    /// first), kept as read.
    #[test]
    fn restore_takes_holders_in_any_order() {
        let resources: Vec<Vec<u8>> = (0..200_000)
            .map(|n| format!("resource-{n:06}").into_bytes())
            .collect();
        let (free, held) = resources.split_at(100_000);
        let held: Vec<(Vec<u8>, Vec<u8>, u64)> = held
            .iter()
            .enumerate()
            .map(|(n, name)| {
                let until = if n.is_multiple_of(3) {
                    NO_END
                } else {
                    1_000 + n as u64
                };
                (name.clone(), format!("owner-{}", n % 7).into_bytes(), until)
            })
            .collect();
        let saved = Pool::restore(free.to_vec(), held.clone()).expect("in name order");
        let listed = |pool: &Pool| -> Vec<(Vec<u8>, Vec<u8>, u64)> {
            pool.holders()
                .map(|(name, owner, until)| (name.to_vec(), owner.to_vec(), until))
                .collect()
        };
        assert_eq!(listed(&saved), held);
        assert_eq!(
            names(&saved),
            free.iter().map(Vec::as_slice).collect::<Vec<_>>()
        );
        let mut reversed = held.clone();
        reversed.reverse();
        let mut shuffled = held.clone();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for i in (1..shuffled.len()).rev() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            shuffled.swap(i, (state % (i as u64 + 1)) as usize);
        }
        for holders in [reversed, shuffled] {
            let pool = Pool::restore(free.to_vec(), holders).expect("any order");
            assert_eq!(listed(&pool), held);
            assert_eq!(names(&pool), names(&saved));
            // Ended before 1,500: the 333 of n < 500 not a multiple of 3.
            assert_eq!((pool.size(), pool.held(1_500)), (200_000, 100_000 - 333));
            assert_eq!(pool.next_end(), saved.next_end());
        }
        let mut free_reversed = free.to_vec();
        free_reversed.reverse();
        let pool = Pool::restore(free_reversed.clone(), held.clone()).expect("any order");
        assert_eq!(
            names(&pool),
            free_reversed.iter().map(Vec::as_slice).collect::<Vec<_>>()
        );
        // A name twice, however far apart, is refused.
        let mut twice = held;
        twice.push((free[0].clone(), b"o".to_vec(), NO_END));
        assert!(Pool::restore(free.to_vec(), twice).is_err());
    }

    /// The nodes as the standard library lays them out on a 64-bit machine:
    /// 11 keys and values after 12 bytes of header, and 12 child addresses
    /// above the leaves.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn nodes_have_the_standard_librarys_layout() {
        assert_eq!(size_of::<LeafNode<Name, Slot>>(), 16 + 11 * 16 + 11 * 24);
        assert_eq!(size_of::<InternalNode<Name, Slot>>(), 456 + 12 * 8);
        assert_eq!(size_of::<LeafNode<u64, Name>>(), 16 + 11 * 8 + 11 * 16);
        assert_eq!(size_of::<LeafNode<(u64, Name), ()>>(), 16 + 11 * 24);
        assert_eq!(size_of::<InternalNode<(u64, Name), ()>>(), 280 + 12 * 8);
    }

    #[test]
    fn a_tree_is_its_leaves_and_the_levels_above() {
        let leaf = block(size_of::<LeafNode<u64, Name>>());
        let internal = block(size_of::<InternalNode<u64, Name>>());
        assert_eq!(tree_bytes::<u64, Name>(0, APPEND_FILL), 0);
        assert_eq!(tree_bytes::<u64, Name>(1, APPEND_FILL), leaf);
        assert_eq!(tree_bytes::<u64, Name>(11, APPEND_FILL), leaf);
        // The 12th entry splits the root leaf in two under a new root.
        assert_eq!(
            tree_bytes::<u64, Name>(12, APPEND_FILL),
            2 * leaf + internal
        );
        // 200,000 entries added at the end fill 28,571 leaves of 7 (6 keys
        // and one above); 4,082, 583, 83, 12 and 1 nodes above them.
        assert_eq!(
            tree_bytes::<u64, Name>(200_000, APPEND_FILL),
            28_572 * leaf + (4_082 + 583 + 83 + 12 + 1) * internal
        );
    }

    /// Three resources, one held with a lease: exactly what jemalloc gives
    /// such a pool.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn memory_counts_every_block_of_a_small_pool() {
        let mut pool = pool(&["r1", "r2", "r3"]);
        assert_eq!(pool.memory(), 80 + 512 + 320 + 3 * 8 + 3 * 8);
        pool.take(b"worker", 600_000);
        // The pool, a leaf each for `slots`, `free` and `ending`; the names
        // 3 times in `slots`, twice in `free`, once in `ending`; the owner.
        assert_eq!(pool.memory(), 80 + 512 + 320 + 320 + 6 * 8 + 8);
        assert_eq!(pool.memory(), 1288);
        // Released: `ending` is empty and gives its node back.
        assert!(pool.release(b"r1", b"worker"));
        assert_eq!(pool.memory(), 80 + 512 + 320 + 3 * 8 + 3 * 8);
        // Everything held forever: `free` is empty too.
        for owner in [&b"a"[..], b"b", b"c"] {
            pool.take(owner, NO_END);
        }
        assert_eq!(pool.memory(), 80 + 512 + 3 * 8 + 3 * 8);
        // Long names and owners take the blocks their lengths round to.
        let mut long = Pool::default();
        long.add(&[b'n'; 100]);
        long.take(&[b'o'; 1000], 5);
        assert_eq!(long.memory(), 80 + 512 + 320 + 2 * 112 + 1024);
    }

    /// A pool of 200,000 resources named in order, 10,000 held with a
    /// lease: the servers give it 175 bytes a resource, its trees holding 7
    /// entries a node; counting `slots` at 8 makes 162. Within 10% of 175.
    #[test]
    fn memory_of_a_large_pool_grows_with_its_trees() {
        let mut pool = Pool::default();
        for n in 0..200_000 {
            pool.add(format!("resource-{n:06}").as_bytes());
        }
        for _ in 0..10_000 {
            pool.take(b"worker", 600_000);
        }
        let per_resource = pool.memory() / pool.size();
        assert!((158..=192).contains(&per_resource), "{per_resource}");
    }

    /// Against a model that keeps a plain list: the same resources handed
    /// out, and never one resource held twice.
    #[test]
    fn matches_a_model() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut rand = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let mut pool = Pool::default();
        // name → (owner, until) or free; free order as a list.
        let mut model_free: Vec<Vec<u8>> = Vec::new();
        let mut model_held: BTreeMap<Vec<u8>, (Vec<u8>, u64)> = BTreeMap::new();
        let mut now = 1;
        for _ in 0..20_000 {
            now += rand(3);
            let name = format!("r{}", rand(12)).into_bytes();
            let owner = format!("o{}", rand(4)).into_bytes();
            // The primary's order: reclaim, then act.
            let mut ended: Vec<(u64, Vec<u8>)> = model_held
                .iter()
                .filter(|(_, (_, until))| *until < now)
                .map(|(name, (_, until))| (*until, name.clone()))
                .collect();
            ended.sort();
            let mut freed = Vec::new();
            pool.reclaim(now, |name| freed.push(name.to_vec()));
            assert_eq!(
                freed,
                ended.iter().map(|(_, n)| n.clone()).collect::<Vec<_>>()
            );
            for (_, name) in ended {
                model_held.remove(&name);
                model_free.push(name);
            }
            let until = if rand(4) == 0 { NO_END } else { now + rand(20) };
            match rand(5) {
                0 => {
                    let known = model_held.contains_key(&name) || model_free.contains(&name);
                    assert_eq!(pool.add(&name), !known);
                    if !known {
                        model_free.push(name);
                    }
                }
                1 => {
                    let known = model_held.remove(&name).is_some() || {
                        let at = model_free.iter().position(|n| *n == name);
                        at.map(|at| model_free.remove(at)).is_some()
                    };
                    assert_eq!(pool.remove(&name), known);
                }
                2 => {
                    let expected = (!model_free.is_empty()).then(|| model_free.remove(0));
                    assert_eq!(pool.take(&owner, until).map(<[u8]>::to_vec), expected);
                    if let Some(name) = expected {
                        assert!(model_held.insert(name, (owner, until)).is_none());
                    }
                }
                3 => {
                    let holds = model_held.get(&name).is_some_and(|(o, _)| *o == owner);
                    assert_eq!(pool.release(&name, &owner), holds);
                    if holds {
                        model_held.remove(&name);
                        model_free.push(name);
                    }
                }
                _ => {
                    let holds = model_held.get(&name).is_some_and(|(o, _)| *o == owner);
                    assert_eq!(pool.renew(&name, &owner, until), holds);
                    if holds {
                        model_held.insert(name, (owner, until));
                    }
                }
            }
            assert_eq!(
                names(&pool),
                model_free.iter().map(Vec::as_slice).collect::<Vec<_>>()
            );
            assert_eq!(pool.size(), model_free.len() + model_held.len());
            assert_eq!(pool.held(now), model_held.len());
        }
    }
}
