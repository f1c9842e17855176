//! The leases of a pool: an ordered map from ID to absolute expiry time, kept
//! as an AVL tree in a chunked arena. Each node also holds its subtree's size
//! and earliest expiry, so the two questions a pool asks are each one descent
//! from the root, O(log n) whatever the IDs:
//!
//! - "the first ID ≥ c not in the map": the number of IDs missing below a
//!   node is its ID minus one minus the count of smaller IDs, which the sizes
//!   give (see [`Tree::first_missing_from`]);
//! - "which lease ends first": follow the subtree holding the earliest expiry.
//!
//! Memory is one 40-byte node per lease in chunks of [`CHUNK`] nodes (no
//! per-node allocation); a removed node's slot is filled with the last node,
//! so the arena always holds exactly the leases.

#![forbid(unsafe_code)]

use crate::common::lease::NO_END;

/// No node (an empty subtree).
const NIL: u32 = u32::MAX;

/// Nodes per arena chunk: growth never copies more than one chunk.
const CHUNK: usize = 1024;

#[derive(Clone, Copy, Debug)]
struct Node {
    expiry: u64,
    /// The earliest expiry in this node's subtree.
    min_expiry: u64,
    id: u32,
    left: u32,
    right: u32,
    /// Nodes in this subtree.
    size: u32,
    height: u8,
}

/// What inserting a lease did to a subtree.
#[derive(Clone, Copy)]
struct Inserted {
    /// The subtree's root after any rotation.
    root: u32,
    /// A lease was added (not an expiry replaced).
    added: bool,
    /// The subtree grew one level taller.
    taller: bool,
}

#[derive(Clone, Debug)]
pub struct Tree {
    /// Every chunk but the last holds exactly `CHUNK` nodes.
    chunks: Vec<Vec<Node>>,
    root: u32,
}

#[cfg(test)]
thread_local! {
    /// Nodes visited, for the unit tests of the cost bounds.
    pub static VISITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[inline]
fn visit() {
    #[cfg(test)]
    VISITS.with(|visits| visits.set(visits.get() + 1));
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            root: NIL,
        }
    }
}

impl Tree {
    /// A tree of `entries`, which must be in strictly increasing ID order
    /// (the caller checks). O(n): the tree is built balanced, not inserted.
    pub fn from_sorted(entries: impl IntoIterator<Item = (u32, u64)>) -> Self {
        let mut tree = Self::default();
        for (id, expiry) in entries {
            tree.alloc(id, expiry);
        }
        let len = tree.len_u32();
        tree.root = tree.build(0, len);
        tree
    }

    /// Links the nodes at indices `lo..hi` (in ID order) into a balanced
    /// subtree and returns its root.
    fn build(&mut self, lo: u32, hi: u32) -> u32 {
        if lo >= hi {
            return NIL;
        }
        let mid = lo + (hi - lo) / 2;
        let left = self.build(lo, mid);
        let right = self.build(mid + 1, hi);
        let node = self.node_mut(mid);
        node.left = left;
        node.right = right;
        self.update(mid);
        mid
    }

    /// The number of leases.
    pub fn len(&self) -> u64 {
        self.size(self.root)
    }

    fn len_u32(&self) -> u32 {
        let full = self.chunks.len().saturating_sub(1) * CHUNK;
        let last = self.chunks.last().map_or(0, Vec::len);
        // At most 2^32 - 1 leases: IDs are distinct u32s from 1.
        (full + last) as u32
    }

    /// Bytes held, for `MEMORY USAGE`.
    pub fn memory(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Vec<Node>>()
            + self
                .chunks
                .iter()
                .map(|chunk| chunk.capacity() * std::mem::size_of::<Node>())
                .sum::<usize>()
    }

    /// Separate allocations held (for the server's lazy-free decision).
    pub fn allocations(&self) -> usize {
        self.chunks.len() + 1
    }

    fn node(&self, at: u32) -> &Node {
        let at = at as usize;
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    fn node_mut(&mut self, at: u32) -> &mut Node {
        let at = at as usize;
        &mut self.chunks[at / CHUNK][at % CHUNK]
    }

    fn size(&self, at: u32) -> u64 {
        if at == NIL {
            0
        } else {
            u64::from(self.node(at).size)
        }
    }

    fn height(&self, at: u32) -> u8 {
        if at == NIL {
            0
        } else {
            self.node(at).height
        }
    }

    fn min_expiry(&self, at: u32) -> u64 {
        if at == NIL {
            NO_END
        } else {
            self.node(at).min_expiry
        }
    }

    fn alloc(&mut self, id: u32, expiry: u64) -> u32 {
        let at = self.len_u32();
        if self.chunks.last().is_none_or(|chunk| chunk.len() == CHUNK) {
            self.chunks.push(Vec::new());
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.push(Node {
                expiry,
                min_expiry: expiry,
                id,
                left: NIL,
                right: NIL,
                size: 1,
                height: 1,
            });
        }
        at
    }

    /// Frees the slot of a node already unlinked from the tree: the last node
    /// moves into it, so the arena stays dense.
    fn release_slot(&mut self, slot: u32) {
        let last = self.len_u32() - 1;
        if slot != last {
            let moved = *self.node(last);
            *self.node_mut(slot) = moved;
            self.repoint(moved.id, last, slot);
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.pop();
            if chunk.is_empty() {
                self.chunks.pop();
                if self.chunks.len() * 4 <= self.chunks.capacity() {
                    self.chunks.shrink_to(self.chunks.len() * 2);
                }
            } else if chunk.len() * 4 <= chunk.capacity() {
                chunk.shrink_to(chunk.len() * 2);
            }
        }
    }

    /// Makes the link to node `from` (whose ID is `id`) point to `to`.
    fn repoint(&mut self, id: u32, from: u32, to: u32) {
        if self.root == from {
            self.root = to;
            return;
        }
        let mut at = self.root;
        while at != NIL {
            visit();
            let node = *self.node(at);
            let (child, is_left) = if id < node.id {
                (node.left, true)
            } else {
                (node.right, false)
            };
            if child == from {
                let parent = self.node_mut(at);
                if is_left {
                    parent.left = to;
                } else {
                    parent.right = to;
                }
                return;
            }
            at = child;
        }
    }

    /// Recomputes a node's size, height and earliest expiry from its children.
    fn update(&mut self, at: u32) {
        let node = *self.node(at);
        let size = 1 + self.size(node.left) + self.size(node.right);
        let height = 1 + self.height(node.left).max(self.height(node.right));
        let min_expiry = node
            .expiry
            .min(self.min_expiry(node.left))
            .min(self.min_expiry(node.right));
        let node = self.node_mut(at);
        node.size = size as u32;
        node.height = height;
        node.min_expiry = min_expiry;
    }

    fn rotate_right(&mut self, at: u32) -> u32 {
        let pivot = self.node(at).left;
        let inner = self.node(pivot).right;
        self.node_mut(at).left = inner;
        self.node_mut(pivot).right = at;
        self.update(at);
        self.update(pivot);
        pivot
    }

    fn rotate_left(&mut self, at: u32) -> u32 {
        let pivot = self.node(at).right;
        let inner = self.node(pivot).left;
        self.node_mut(at).right = inner;
        self.node_mut(pivot).left = at;
        self.update(at);
        self.update(pivot);
        pivot
    }

    /// Restores the AVL balance at `at` after one of its subtrees changed
    /// height by at most one; returns the subtree's new root.
    fn rebalance(&mut self, at: u32) -> u32 {
        self.update(at);
        let node = *self.node(at);
        let (left, right) = (self.height(node.left), self.height(node.right));
        if left > right + 1 {
            let child = *self.node(node.left);
            if self.height(child.left) < self.height(child.right) {
                let rotated = self.rotate_left(node.left);
                self.node_mut(at).left = rotated;
            }
            return self.rotate_right(at);
        }
        if right > left + 1 {
            let child = *self.node(node.right);
            if self.height(child.right) < self.height(child.left) {
                let rotated = self.rotate_right(node.right);
                self.node_mut(at).right = rotated;
            }
            return self.rotate_left(at);
        }
        at
    }

    /// Leases `id` until `expiry`, replacing its expiry if it is present.
    pub fn insert(&mut self, id: u32, expiry: u64) {
        if let Some(below) = self.insert_at(self.root, id, expiry, true) {
            self.root = below.root;
        }
    }

    /// Leases `id` until `expiry` if it is absent: `false` (and no change)
    /// when it is present. One descent either way.
    pub fn insert_new(&mut self, id: u32, expiry: u64) -> bool {
        match self.insert_at(self.root, id, expiry, false) {
            Some(below) => {
                self.root = below.root;
                true
            }
            None => false,
        }
    }

    /// What an insert did to a subtree, or `None` when nothing changed (`id`
    /// present and not to be replaced).
    fn insert_at(&mut self, at: u32, id: u32, expiry: u64, replace: bool) -> Option<Inserted> {
        visit();
        if at == NIL {
            return Some(Inserted {
                root: self.alloc(id, expiry),
                added: true,
                taller: true,
            });
        }
        let node = *self.node(at);
        let below = if id < node.id {
            let below = self.insert_at(node.left, id, expiry, replace)?;
            self.node_mut(at).left = below.root;
            below
        } else if id > node.id {
            let below = self.insert_at(node.right, id, expiry, replace)?;
            self.node_mut(at).right = below.root;
            below
        } else if replace {
            self.node_mut(at).expiry = expiry;
            Inserted {
                root: at,
                added: false,
                taller: false,
            }
        } else {
            return None;
        };
        if below.added && !below.taller {
            // A new lease below left the child's height as it was, so this
            // node stays balanced and as tall: it only counts one more lease
            // and perhaps an earlier expiry (the usual case, most levels).
            let node = self.node_mut(at);
            node.size += 1;
            node.min_expiry = node.min_expiry.min(expiry);
            return Some(Inserted { root: at, ..below });
        }
        // A child grew taller (it may need a rotation), or an expiry was
        // replaced (the earliest expiry may have moved either way).
        let root = self.rebalance(at);
        Some(Inserted {
            root,
            added: below.added,
            taller: below.added && self.node(root).height > node.height,
        })
    }

    /// Removes `id`; `true` when it was present.
    pub fn remove(&mut self, id: u32) -> bool {
        let mut removed = NIL;
        self.root = self.remove_at(self.root, id, &mut removed);
        if removed == NIL {
            return false;
        }
        self.release_slot(removed);
        true
    }

    fn remove_at(&mut self, at: u32, id: u32, removed: &mut u32) -> u32 {
        visit();
        if at == NIL {
            return NIL;
        }
        let node = *self.node(at);
        if id < node.id {
            let left = self.remove_at(node.left, id, removed);
            self.node_mut(at).left = left;
        } else if id > node.id {
            let right = self.remove_at(node.right, id, removed);
            self.node_mut(at).right = right;
        } else {
            *removed = at;
            if node.left == NIL {
                return node.right;
            }
            if node.right == NIL {
                return node.left;
            }
            // The successor takes the removed node's place.
            let mut successor = NIL;
            let right = self.remove_min(node.right, &mut successor);
            let moved = self.node_mut(successor);
            moved.left = node.left;
            moved.right = right;
            return self.rebalance(successor);
        }
        self.rebalance(at)
    }

    fn remove_min(&mut self, at: u32, min: &mut u32) -> u32 {
        visit();
        let node = *self.node(at);
        if node.left == NIL {
            *min = at;
            return node.right;
        }
        let left = self.remove_min(node.left, min);
        self.node_mut(at).left = left;
        self.rebalance(at)
    }

    /// The expiry of `id`'s lease, if it has one here.
    pub fn get(&self, id: u32) -> Option<u64> {
        let mut at = self.root;
        while at != NIL {
            visit();
            let node = self.node(at);
            if id == node.id {
                return Some(node.expiry);
            }
            at = if id < node.id { node.left } else { node.right };
        }
        None
    }

    /// The highest ID present.
    pub fn last_id(&self) -> Option<u32> {
        let mut at = self.root;
        let mut last = None;
        while at != NIL {
            visit();
            let node = self.node(at);
            last = Some(node.id);
            at = node.right;
        }
        last
    }

    /// The highest ID whose lease has not ended before `now`. O(log n) plus
    /// the ended leases above it, which it steps over.
    pub fn last_live(&self, now: u64) -> Option<u32> {
        self.last_live_at(self.root, now)
    }

    fn last_live_at(&self, at: u32, now: u64) -> Option<u32> {
        if at == NIL {
            return None;
        }
        visit();
        let node = *self.node(at);
        self.last_live_at(node.right, now)
            .or_else(|| (node.expiry >= now).then_some(node.id))
            .or_else(|| self.last_live_at(node.left, now))
    }

    /// When the first lease ends (`NO_END` for none): O(1).
    pub fn earliest_expiry(&self) -> u64 {
        self.min_expiry(self.root)
    }

    /// The lease that ends first (any one of them on a tie).
    pub fn earliest(&self) -> Option<(u32, u64)> {
        let mut at = self.root;
        while at != NIL {
            visit();
            let node = self.node(at);
            if node.expiry == node.min_expiry {
                return Some((node.id, node.expiry));
            }
            at = if self.min_expiry(node.left) == node.min_expiry {
                node.left
            } else {
                node.right
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
        let mut at = self.root;
        let mut count = 0;
        while at != NIL {
            visit();
            let node = self.node(at);
            if u64::from(node.id) <= limit {
                count += self.size(node.left) + 1;
                at = node.right;
            } else {
                at = node.left;
            }
        }
        count
    }

    /// The `n`-th (from 1) positive integer that is not an ID here.
    fn nth_missing(&self, n: u64) -> u64 {
        let mut at = self.root;
        let mut smaller = 0; // IDs known to be below the answer
        while at != NIL {
            visit();
            let node = self.node(at);
            let before = smaller + self.size(node.left); // IDs below node.id
            let missing = u64::from(node.id) - 1 - before;
            if missing >= n {
                at = node.left;
            } else {
                smaller = before + 1;
                at = node.right;
            }
        }
        n + smaller
    }

    /// How many leases ended before `now` (they may stay stored until the
    /// next write reclaims them). O(k log n) for k such leases.
    pub fn count_ended(&self, now: u64) -> u64 {
        let mut count = 0;
        let mut stack = Vec::new();
        if self.root != NIL {
            stack.push(self.root);
        }
        while let Some(at) = stack.pop() {
            visit();
            let node = self.node(at);
            if node.min_expiry >= now {
                continue;
            }
            if node.expiry < now {
                count += 1;
            }
            for child in [node.left, node.right] {
                if child != NIL {
                    stack.push(child);
                }
            }
        }
        count
    }

    /// The leases in increasing ID order.
    pub fn iter(&self) -> Iter<'_> {
        let mut iter = Iter {
            tree: self,
            stack: Vec::new(),
        };
        iter.descend_left(self.root);
        iter
    }

    /// Checks every structural invariant; for the unit tests.
    #[cfg(test)]
    pub fn check(&self) {
        fn walk(tree: &Tree, at: u32, low: u64, high: u64) -> (u64, u8, u64) {
            if at == NIL {
                return (0, 0, NO_END);
            }
            let node = tree.node(at);
            let id = u64::from(node.id);
            assert!(low < id && id < high, "order at {id}");
            let (ls, lh, lm) = walk(tree, node.left, low, id);
            let (rs, rh, rm) = walk(tree, node.right, id, high);
            assert!(lh.abs_diff(rh) <= 1, "balance at {id}");
            assert_eq!(u64::from(node.size), ls + rs + 1, "size at {id}");
            assert_eq!(node.height, lh.max(rh) + 1, "height at {id}");
            let min = node.expiry.min(lm).min(rm);
            assert_eq!(node.min_expiry, min, "earliest expiry at {id}");
            (ls + rs + 1, node.height, min)
        }
        let (size, _, _) = walk(self, self.root, 0, u64::MAX);
        assert_eq!(
            size,
            u64::from(self.len_u32()),
            "arena holds exactly the nodes"
        );
    }

    /// The tree's height; for the unit tests.
    #[cfg(test)]
    pub fn depth(&self) -> u8 {
        self.height(self.root)
    }
}

pub struct Iter<'a> {
    tree: &'a Tree,
    stack: Vec<u32>,
}

impl Iter<'_> {
    fn descend_left(&mut self, mut at: u32) {
        while at != NIL {
            self.stack.push(at);
            at = self.tree.node(at).left;
        }
    }
}

impl Iterator for Iter<'_> {
    type Item = (u32, u64);

    fn next(&mut self) -> Option<(u32, u64)> {
        let at = self.stack.pop()?;
        let node = *self.tree.node(at);
        self.descend_left(node.right);
        Some((node.id, node.expiry))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::{Tree, NO_END};

    #[test]
    fn node_is_40_bytes() {
        assert_eq!(std::mem::size_of::<super::Node>(), 40);
    }

    #[test]
    fn matches_an_ordered_map_under_random_changes() {
        let mut rng = StdRng::seed_from_u64(7);
        let mut tree = Tree::default();
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
            let tree = Tree::from_sorted((1..=n).map(|id| (id * 2, NO_END)));
            tree.check();
            assert_eq!(tree.len(), u64::from(n));
            assert_eq!(tree.first_missing_from(1), 1);
            assert_eq!(tree.first_missing_from(2), if n == 0 { 2 } else { 3 });
        }
    }

    #[test]
    fn removing_everything_frees_the_arena() {
        let mut tree = Tree::default();
        for id in 1..=5000 {
            tree.insert(id, u64::from(id));
        }
        for id in (1..=5000).rev().step_by(2).chain((1..=5000).step_by(2)) {
            assert!(tree.remove(id));
        }
        tree.check();
        assert_eq!(tree.len(), 0);
        assert_eq!(tree.memory(), tree.chunks.capacity() * 24);
    }
}
