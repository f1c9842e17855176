//! The leases of a pool: an ordered map from ID to absolute expiry time, an
//! AVL tree in a chunked arena (`common/tree.rs`) whose nodes each know
//! their subtree's earliest expiry. With the subtrees' sizes, the two
//! questions a pool asks are each one descent from the root, O(log n)
//! whatever the IDs:
//!
//! - "the first ID ≥ c not in the map": the number of IDs missing below a
//!   node is its ID minus one minus the count of smaller IDs, which the sizes
//!   give (see [`Leases::first_missing_from`]);
//! - "which lease ends first": follow the subtree holding the earliest expiry.
//!
//! Memory is one 40-byte node per lease in chunks of 1,024 nodes (no
//! per-node allocation), each grown as a `Vec` is; the arena always holds
//! exactly the leases.

#![forbid(unsafe_code)]

use std::cmp::Ordering;
use std::convert::Infallible;

use crate::common::lease::NO_END;
use crate::common::tree::{visit, Arena, Item, Node, Tree, NIL};

/// A lease, and the earliest expiry of its subtree.
#[derive(Clone, Debug)]
pub struct Lease {
    id: u32,
    expiry: u64,
    min_expiry: u64,
}

impl Item for Lease {
    /// The earliest expiry in the subtree.
    type Summary = u64;
    const CHUNK: usize = 1024;
    const ARENA: Arena = Arena::Doubling;

    fn order(&self, other: &Self) -> Ordering {
        self.id.cmp(&other.id)
    }

    #[inline]
    fn summarise(node: &Node<Self>, left: Option<&Node<Self>>, right: Option<&Node<Self>>) -> u64 {
        let below = |child: Option<&Node<Self>>| child.map_or(NO_END, |child| child.min_expiry);
        node.expiry.min(below(left)).min(below(right))
    }

    #[inline]
    fn keep(node: &mut Node<Self>, min_expiry: u64) -> bool {
        let changed = min_expiry != node.min_expiry;
        node.min_expiry = min_expiry;
        changed
    }
}

fn leaf(id: u32, expiry: u64) -> Node<Lease> {
    Node::leaf(
        Lease {
            id,
            expiry,
            min_expiry: expiry,
        },
        0,
    )
}

#[derive(Clone, Debug, Default)]
pub struct Leases {
    tree: Tree<Lease>,
}

impl Leases {
    /// The leases `entries`, which must be in strictly increasing ID order
    /// (the caller checks). O(n): the tree is built balanced, not inserted.
    pub fn from_sorted(entries: Vec<(u32, u64)>) -> Option<Self> {
        let nodes = entries.into_iter().map(|(id, expiry)| leaf(id, expiry));
        Some(Leases {
            tree: Tree::from_sorted(nodes)?,
        })
    }

    /// The number of leases.
    pub fn len(&self) -> u64 {
        u64::from(self.tree.len())
    }

    /// Bytes held, for `MEMORY USAGE`.
    pub fn memory(&self) -> usize {
        self.tree.memory(|bytes| bytes)
    }

    /// Separate allocations held (for the server's lazy-free decision).
    pub fn allocations(&self) -> usize {
        self.tree.allocations()
    }

    fn min_expiry(&self, at: u32) -> u64 {
        if at == NIL {
            NO_END
        } else {
            self.tree.node(at).min_expiry
        }
    }

    /// Leases `id` until `expiry`, replacing its expiry if it is present.
    pub fn insert(&mut self, id: u32, expiry: u64) {
        let _ = self.tree.upsert(
            |lease| id.cmp(&lease.id),
            |node| {
                node.expiry = expiry;
                Ok::<_, Infallible>(true)
            },
            || Ok(leaf(id, expiry)),
        );
    }

    /// Leases `id` until `expiry` if it is absent: `false` (and no change)
    /// when it is present. One descent either way.
    pub fn insert_new(&mut self, id: u32, expiry: u64) -> bool {
        let added = self.tree.upsert(
            |lease| id.cmp(&lease.id),
            |_| Err(()),
            || Ok(leaf(id, expiry)),
        );
        matches!(added, Ok(Some(_)))
    }

    /// Removes `id`; `true` when it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        self.tree.remove(|_, node| id.cmp(&node.id)).is_some()
    }

    /// The expiry of `id`'s lease, if it has one here.
    pub fn get(&self, id: u32) -> Option<u64> {
        let at = self.tree.find(|lease| id.cmp(&lease.id))?;
        Some(self.tree.node(at).expiry)
    }

    /// The highest ID present.
    pub fn last_id(&self) -> Option<u32> {
        let mut at = self.tree.root();
        let mut last = None;
        while at != NIL {
            visit();
            let node = self.tree.node(at);
            last = Some(node.id);
            at = node.right();
        }
        last
    }

    /// The highest ID whose lease has not ended before `now`. O(log n) plus
    /// the ended leases above it, which it steps over.
    pub fn last_live(&self, now: u64) -> Option<u32> {
        self.last_live_at(self.tree.root(), now)
    }

    fn last_live_at(&self, at: u32, now: u64) -> Option<u32> {
        if at == NIL {
            return None;
        }
        visit();
        let node = self.tree.node(at);
        self.last_live_at(node.right(), now)
            .or_else(|| (node.expiry >= now).then_some(node.id))
            .or_else(|| self.last_live_at(node.left(), now))
    }

    /// When the first lease ends (`NO_END` for none): O(1).
    pub fn earliest_expiry(&self) -> u64 {
        self.min_expiry(self.tree.root())
    }

    /// The lease that ends first (any one of them on a tie).
    pub fn earliest(&self) -> Option<(u32, u64)> {
        let mut at = self.tree.root();
        while at != NIL {
            visit();
            let node = self.tree.node(at);
            if node.expiry == node.min_expiry {
                return Some((node.id, node.expiry));
            }
            at = if self.min_expiry(node.left()) == node.min_expiry {
                node.left()
            } else {
                node.right()
            };
        }
        None
    }

    /// The smallest integer ≥ `from` (≥ 1) that is not an ID here; may be
    /// past every valid ID, which the caller checks.
    pub fn first_missing_from(&self, from: u64) -> u64 {
        let before = from.saturating_sub(1);
        // Missing integers in 1..=before, plus one: the rank among missing
        // integers of the one wanted.
        let wanted = before - self.count_up_to(before) + 1;
        self.nth_missing(wanted)
    }

    /// How many IDs are ≤ `limit`.
    fn count_up_to(&self, limit: u64) -> u64 {
        let mut at = self.tree.root();
        let mut count = 0;
        while at != NIL {
            visit();
            let node = self.tree.node(at);
            if u64::from(node.id) <= limit {
                count += u64::from(self.tree.size(node.left())) + 1;
                at = node.right();
            } else {
                at = node.left();
            }
        }
        count
    }

    /// The `n`-th (from 1) positive integer that is not an ID here.
    fn nth_missing(&self, n: u64) -> u64 {
        let mut at = self.tree.root();
        let mut smaller = 0; // IDs known to be below the answer
        while at != NIL {
            visit();
            let node = self.tree.node(at);
            let before = smaller + u64::from(self.tree.size(node.left())); // IDs below node.id
            let missing = u64::from(node.id) - 1 - before;
            if missing >= n {
                at = node.left();
            } else {
                smaller = before + 1;
                at = node.right();
            }
        }
        n + smaller
    }

    /// How many leases ended before `now` (they may stay stored until the
    /// next write reclaims them). O(k log n) for k such leases.
    pub fn count_ended(&self, now: u64) -> u64 {
        let mut count = 0;
        let mut stack = Vec::new();
        if self.tree.root() != NIL {
            stack.push(self.tree.root());
        }
        while let Some(at) = stack.pop() {
            visit();
            let node = self.tree.node(at);
            if node.min_expiry >= now {
                continue;
            }
            if node.expiry < now {
                count += 1;
            }
            for child in [node.left(), node.right()] {
                if child != NIL {
                    stack.push(child);
                }
            }
        }
        count
    }

    /// The leases in increasing ID order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.tree.iter().map(|node| (node.id, node.expiry))
    }

    /// Checks every structural invariant; for the unit tests.
    #[cfg(test)]
    pub fn check(&self) {
        self.tree.check();
    }

    /// The tree's height; for the unit tests.
    #[cfg(test)]
    pub fn depth(&self) -> u8 {
        self.tree.height(self.tree.root())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::{Lease, Leases, Node, NO_END};

    #[test]
    fn node_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Node<Lease>>(), 40);
        // The list of chunks, the root and a count: a pool takes 48 bytes.
        assert_eq!(std::mem::size_of::<Leases>(), 32);
        assert_eq!(std::mem::size_of::<super::super::core::Pool>(), 48);
    }

    #[test]
    fn matches_an_ordered_map_under_random_changes() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut tree = Leases::default();
        let mut model = BTreeMap::new();
        for step in 0..20_000 {
            let id = rng.random_range(1..=300u32);
            if rng.random_bool(0.6) {
                let expiry = rng.random_range(0..1_000u64);
                tree.insert(id, expiry);
                model.insert(id, expiry);
            } else {
                assert_eq!(tree.remove(id), model.remove(&id).is_some());
            }
            if step % 97 == 0 {
                tree.check();
            }
            assert_eq!(tree.len(), model.len() as u64);
            assert_eq!(tree.get(id), model.get(&id).copied());
            let from = u64::from(rng.random_range(1..=310u32));
            let missing =
                (from..).find(|&x| u32::try_from(x).map_or(true, |x| !model.contains_key(&x)));
            assert_eq!(Some(tree.first_missing_from(from)), missing);
            let earliest = model.values().min().copied();
            assert_eq!(tree.earliest().map(|(_, at)| at), earliest);
            let now = rng.random_range(0..1_000u64);
            let ended = model.values().filter(|&&at| at < now).count() as u64;
            assert_eq!(tree.count_ended(now), ended);
        }
        tree.check();
        let listed: Vec<_> = tree.iter().collect();
        let expected: Vec<_> = model.into_iter().collect();
        assert_eq!(listed, expected);
    }

    #[test]
    fn built_from_sorted_entries_is_balanced() {
        for n in [0u32, 1, 2, 3, 10, 1000, 4097] {
            let tree = Leases::from_sorted((1..=n).map(|id| (id * 2, NO_END)).collect()).unwrap();
            tree.check();
            assert_eq!(tree.len(), u64::from(n));
            assert_eq!(tree.first_missing_from(1), 1);
            assert_eq!(tree.first_missing_from(2), if n == 0 { 2 } else { 3 });
        }
    }

    #[test]
    fn removing_everything_frees_the_arena() {
        let mut tree = Leases::default();
        for id in 1..=5000 {
            tree.insert(id, u64::from(id));
        }
        for id in (1..=5000).rev().step_by(2).chain((1..=5000).step_by(2)) {
            assert!(tree.remove(id));
        }
        tree.check();
        assert_eq!(tree.len(), 0);
        assert_eq!(tree.memory(), 0);
    }
}
