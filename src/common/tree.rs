//! An AVL tree in a chunked arena, generic over the items it orders and over
//! what each node summarises of its subtree: the ordered maps of the module's
//! data types with figures per subtree (the leases of an ID pool, each
//! subtree's earliest expiry; the suggestions of an autocomplete key, each
//! subtree's best weight and earliest fade time).
//!
//! - Nodes are numbered by `u32` ([`NIL`]: none) in an arena of chunks of
//!   [`Item::CHUNK`] nodes: no allocation per node, and growth never copies
//!   more than one chunk. A removed node's slot is filled with the arena's
//!   last node, so the arena always holds exactly the items and gives its
//!   memory back as they go; a removal says which node moved
//!   ([`Removed::moved`]), for those who keep node numbers.
//! - Each node holds its subtree's size (a rank is one descent) and height
//!   (the two subtrees of a node differ in height by at most one, so a
//!   descent is O(log n)), and its summary of the subtree:
//!   [`Item::summarise`] makes it from the node's own item and its
//!   children's summaries, [`Item::keep`] stores it.
//! - The searches are each data type's own descents over [`Tree::node`].
//!   What changes the tree is here: [`Tree::upsert`] (one descent, then up
//!   only as far as a height or a summary changed), [`Tree::remove`] (by
//!   key or by rank), [`Tree::from_sorted`] (O(n), balanced), and what moves
//!   or frees the arena's slots.

#![forbid(unsafe_code)]

use std::cmp::Ordering;
use std::mem::size_of;
use std::ops::{Deref, DerefMut};

/// No node (an empty subtree).
pub const NIL: u32 = u32::MAX;

/// Longest root-to-leaf path: an AVL tree of 2^32 nodes has under 47 levels.
const MAX_DEPTH: usize = 64;

/// What a tree holds, and what its nodes summarise.
pub trait Item: Sized {
    /// What a node keeps of its subtree beyond its size and height, as
    /// [`Item::summarise`] makes it and [`Item::keep`] stores it.
    type Summary;

    /// Nodes per arena chunk.
    const CHUNK: usize;

    /// How the arena's chunks grow and shrink.
    const ARENA: Arena;

    /// The most items a tree holds (at most `u32::MAX`: a node's number is
    /// below [`NIL`]).
    const MOST: u32 = u32::MAX;

    /// The items' order in the tree (by their keys).
    fn order(&self, other: &Self) -> Ordering;

    /// The summary of `node`'s subtree, from its own item and what its
    /// children (`None`: no child on that side) keep of theirs.
    fn summarise(
        node: &Node<Self>,
        left: Option<&Node<Self>>,
        right: Option<&Node<Self>>,
    ) -> Self::Summary;

    /// Stores `summary` in `node` (its item and flags): `true` when what a
    /// parent reads of it changed.
    fn keep(node: &mut Node<Self>, summary: Self::Summary) -> bool;

    /// Whether the item owns an allocation outside the arena (counted in
    /// [`Tree::allocations`]); it must not change while the item is stored.
    fn allocates(&self) -> bool {
        false
    }
}

/// How an arena's chunks grow and give memory back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arena {
    /// Every chunk grows as a `Vec` does (doubling from 4 nodes), built
    /// ones too; a chunk, or the list of chunks, at most a quarter full is
    /// shrunk to twice its length.
    Doubling,
    /// Chunks in the allocator's blocks: the first grows by doubling from 4
    /// nodes up to [`Item::CHUNK`], later ones are taken whole, built ones
    /// exactly as long as they are filled. A chunk of more than 4 nodes'
    /// room at most a quarter full is shrunk to twice its length, the list
    /// of chunks once under a quarter full.
    Blocks,
}

/// A node: the links and figures of its subtree, then its item. In C
/// order, what a descent reads first: the links, then the item's start.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Node<T> {
    left: u32,
    right: u32,
    /// Items in this subtree.
    size: u32,
    /// Levels in this subtree (a leaf has 1).
    height: u8,
    /// The item's bits (its own flags and its summary's), here where the
    /// node has room: in the item, a byte would take 8.
    pub flags: u8,
    pub item: T,
}

impl<T: Item> Node<T> {
    /// A node of its own, summarised: what [`Tree::upsert`] adds.
    pub fn leaf(item: T, flags: u8) -> Self {
        let mut node = Node {
            left: NIL,
            right: NIL,
            size: 1,
            height: 1,
            flags,
            item,
        };
        let summary = T::summarise(&node, None, None);
        T::keep(&mut node, summary);
        node
    }
}

impl<T> Node<T> {
    #[inline]
    pub fn left(&self) -> u32 {
        self.left
    }

    #[inline]
    pub fn right(&self) -> u32 {
        self.right
    }

    /// Items in this subtree.
    #[inline]
    pub fn size(&self) -> u32 {
        self.size
    }
}

impl<T> Deref for Node<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        &self.item
    }
}

impl<T> DerefMut for Node<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.item
    }
}

/// What [`Tree::remove`] took out.
#[derive(Debug)]
pub struct Removed<T> {
    pub node: Node<T>,
    /// Its number, now the moved node's if one moved.
    pub at: u32,
    /// The number the arena's last node had, when it moved into `at`.
    pub moved: Option<u32>,
}

#[cfg(test)]
thread_local! {
    /// Nodes visited, for the unit tests of the cost bounds.
    pub static VISITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts a node visited (in the unit tests; nothing otherwise).
#[inline]
pub fn visit() {
    #[cfg(test)]
    VISITS.with(|visits| visits.set(visits.get() + 1));
}

/// The nodes of a descent, root first, and the side taken at each.
struct Path {
    nodes: [u32; MAX_DEPTH],
    /// Bit `i`: the descent went left at `nodes[i]`.
    lefts: u64,
    len: usize,
}

impl Path {
    #[inline]
    fn new() -> Path {
        Path {
            nodes: [NIL; MAX_DEPTH],
            lefts: 0,
            len: 0,
        }
    }

    /// Adds a step; `false` when the path is full (never, in a tree that is
    /// balanced).
    #[inline]
    fn push(&mut self, node: u32, left: bool) -> bool {
        let Some(slot) = self.nodes.get_mut(self.len) else {
            return false;
        };
        *slot = node;
        if left {
            self.lefts |= 1 << self.len;
        }
        self.len += 1;
        true
    }

    /// The steps, deepest first.
    #[inline]
    fn upward(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        let lefts = self.lefts;
        self.nodes
            .get(..self.len)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .rev()
            .map(move |(at, &node)| (node, lefts & (1 << at) != 0))
    }
}

/// The tree: its arena and root.
#[derive(Clone, Debug)]
pub struct Tree<T> {
    /// Every chunk but the last holds exactly `CHUNK` nodes; node `i` is
    /// `chunks[i / CHUNK][i % CHUNK]`.
    chunks: Vec<Vec<Node<T>>>,
    root: u32,
    /// Items that own an allocation (see [`Item::allocates`]).
    allocating: u32,
}

impl<T> Default for Tree<T> {
    fn default() -> Self {
        Tree {
            chunks: Vec::new(),
            root: NIL,
            allocating: 0,
        }
    }
}

impl<T: Item> Tree<T> {
    /// A tree of `nodes`, which must be in strictly increasing order (the
    /// caller checks); `None` past [`Item::MOST`] of them. O(n): the tree is
    /// built balanced, not inserted into.
    pub fn from_sorted<I>(nodes: I) -> Option<Self>
    where
        I: IntoIterator<Item = Node<T>>,
        I::IntoIter: ExactSizeIterator,
    {
        let mut rest = nodes.into_iter();
        let len = u32::try_from(rest.len())
            .ok()
            .filter(|&len| len <= T::MOST)?;
        let mut built = Tree::default();
        match T::ARENA {
            Arena::Doubling => {
                for node in rest {
                    built.allocating += u32::from(node.allocates());
                    built.push(node)?;
                }
            }
            Arena::Blocks => {
                built.chunks.reserve_exact(rest.len().div_ceil(T::CHUNK));
                while rest.len() > 0 {
                    let mut chunk = Vec::with_capacity(rest.len().min(T::CHUNK));
                    chunk.extend(rest.by_ref().take(T::CHUNK));
                    built.allocating += chunk.iter().filter(|node| node.allocates()).count() as u32;
                    built.chunks.push(chunk);
                }
            }
        }
        built.root = built.build(0, len);
        Some(built)
    }

    /// Links the nodes at `lo..hi` (in order) into a balanced subtree and
    /// returns its root.
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

    /// The root ([`NIL`] when empty).
    #[inline]
    pub fn root(&self) -> u32 {
        self.root
    }

    /// Items held.
    #[inline]
    pub fn len(&self) -> u32 {
        self.size(self.root)
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.root == NIL
    }

    /// Node `at`, a number the tree gave (below the arena's length).
    #[inline]
    pub fn node(&self, at: u32) -> &Node<T> {
        let at = at as usize;
        &self.chunks[at / T::CHUNK][at % T::CHUNK]
    }

    #[inline]
    fn node_mut(&mut self, at: u32) -> &mut Node<T> {
        let at = at as usize;
        &mut self.chunks[at / T::CHUNK][at % T::CHUNK]
    }

    /// Items in the subtree `at` (0 for [`NIL`]).
    #[inline]
    pub fn size(&self, at: u32) -> u32 {
        if at == NIL {
            0
        } else {
            self.node(at).size
        }
    }

    /// Levels in the subtree `at` (0 for [`NIL`]).
    #[inline]
    pub fn height(&self, at: u32) -> u8 {
        if at == NIL {
            0
        } else {
            self.node(at).height
        }
    }

    /// Bytes held by the arena, each block as `block` rounds it: the list
    /// of chunks, and the chunks. O(chunks).
    pub fn memory(&self, block: impl Fn(usize) -> usize) -> usize {
        block(self.chunks.capacity() * size_of::<Vec<Node<T>>>())
            + self
                .chunks
                .iter()
                .map(|chunk| block(chunk.capacity() * size_of::<Node<T>>()))
                .sum::<usize>()
    }

    /// Allocations held, for the server's lazy-free decision: the list of
    /// chunks, the chunks, and the items' own.
    pub fn allocations(&self) -> usize {
        1 + self.chunks.len() + self.allocating as usize
    }

    /// The chunks of the arena; for the unit tests.
    #[cfg(test)]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// The node `seek` leads to: `seek(item)` is where the one wanted is
    /// against `item`. O(log n).
    #[inline]
    pub fn find(&self, mut seek: impl FnMut(&T) -> Ordering) -> Option<u32> {
        let mut at = self.root;
        while at != NIL {
            visit();
            let node = self.node(at);
            at = match seek(&node.item) {
                Ordering::Equal => return Some(at),
                Ordering::Less => node.left,
                Ordering::Greater => node.right,
            };
        }
        None
    }

    /// Finds the node `seek` leads to (as in [`Tree::find`]): if there, lets
    /// `found` change its item and flags (`Ok(true)`: changed what its
    /// summary is made of, recomputed upward as far as it changes), else
    /// adds the node `add` makes. Returns the node and whether it was
    /// added; an `Err` of either changes nothing, and `Ok(None)` says the
    /// tree can hold no more ([`Item::MOST`]). One descent, and up again
    /// only as far as a height or summary changes.
    #[inline]
    pub fn upsert<E>(
        &mut self,
        mut seek: impl FnMut(&T) -> Ordering,
        found: impl FnOnce(&mut Node<T>) -> Result<bool, E>,
        add: impl FnOnce() -> Result<Node<T>, E>,
    ) -> Result<Option<(u32, bool)>, E> {
        let mut path = Path::new();
        let mut at = self.root;
        while at != NIL {
            visit();
            let node = self.node(at);
            let left = match seek(&node.item) {
                Ordering::Equal => {
                    if found(self.node_mut(at))? {
                        self.update_upward(at, &path);
                    }
                    return Ok(Some((at, false)));
                }
                Ordering::Less => true,
                Ordering::Greater => false,
            };
            if !path.push(at, left) {
                return Ok(None);
            }
            at = if left { node.left } else { node.right };
        }
        let node = add()?;
        let allocates = node.allocates();
        let Some(added) = self.push(node) else {
            return Ok(None);
        };
        self.allocating += u32::from(allocates);
        self.attach(added, &path);
        Ok(Some((added, true)))
    }

    /// Links the new leaf `added` where the descent `path` ended, and
    /// restores the balance and figures above it: each node of the path
    /// counts one more item, and is recomputed (and rotated if need be)
    /// only while the subtree below it changed height or summary.
    fn attach(&mut self, added: u32, path: &Path) {
        let mut below = added;
        let mut settled = false;
        for (above, left) in path.upward() {
            let node = self.node_mut(above);
            if settled {
                node.size += 1;
                continue;
            }
            if left {
                node.left = below;
            } else {
                node.right = below;
            }
            let height = node.height;
            let (root, changed) = self.balance(above);
            settled = !changed && self.node(root).height == height;
            below = root;
        }
        if !settled {
            self.root = below;
        }
    }

    /// Recomputes the figures of node `at` (its item changed), then of the
    /// nodes of `path` above it (whose shape did not change), up to the
    /// first whose summary stays as it was, as then are all above it.
    fn update_upward(&mut self, at: u32, path: &Path) {
        if !self.update(at) {
            return;
        }
        for (above, _) in path.upward() {
            if !self.update(above) {
                return;
            }
        }
    }

    /// Removes the node `seek` leads to: `seek(tree, node)` is where the
    /// one wanted is against `node`, called once a level on the way down
    /// (so it may count ranks: `Greater` goes right). `None` when absent.
    /// O(log n).
    pub fn remove(
        &mut self,
        mut seek: impl FnMut(&Self, &Node<T>) -> Ordering,
    ) -> Option<Removed<T>> {
        let (root, gone) = self.delete(self.root, &mut seek)?;
        self.root = root;
        let last = u32::try_from(self.arena_len().checked_sub(1)?).ok()?;
        let node = self.release(gone)?;
        self.allocating = self.allocating.saturating_sub(u32::from(node.allocates()));
        Some(Removed {
            node,
            at: gone,
            moved: (gone != last).then_some(last),
        })
    }

    /// Unlinks the node `seek` leads to from the subtree `at`: the
    /// subtree's new root and the unlinked node.
    fn delete(
        &mut self,
        at: u32,
        seek: &mut impl FnMut(&Self, &Node<T>) -> Ordering,
    ) -> Option<(u32, u32)> {
        if at == NIL {
            return None;
        }
        visit();
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        match seek(self, node) {
            Ordering::Less => {
                let (below, gone) = self.delete(left, seek)?;
                self.node_mut(at).left = below;
                Some((self.balance(at).0, gone))
            }
            Ordering::Greater => {
                let (below, gone) = self.delete(right, seek)?;
                self.node_mut(at).right = below;
                Some((self.balance(at).0, gone))
            }
            Ordering::Equal if left == NIL => Some((right, at)),
            Ordering::Equal if right == NIL => Some((left, at)),
            Ordering::Equal => {
                // The successor takes the node's place.
                let (rest, next) = self.remove_first(right);
                let node = self.node_mut(next);
                node.left = left;
                node.right = rest;
                Some((self.balance(next).0, at))
            }
        }
    }

    /// Unlinks the first node of the non-empty subtree `at`: the subtree's
    /// new root and the unlinked node.
    fn remove_first(&mut self, at: u32) -> (u32, u32) {
        visit();
        let node = self.node(at);
        if node.left == NIL {
            return (node.right, at);
        }
        let (rest, first) = self.remove_first(node.left);
        self.node_mut(at).left = rest;
        (self.balance(at).0, first)
    }

    /// Restores the AVL balance at `at` (its subtrees balanced, heights
    /// differing by at most 2) and its figures: the subtree's root, and
    /// whether its summary may have changed (after a rotation, always).
    #[inline]
    fn balance(&mut self, at: u32) -> (u32, bool) {
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        let (hl, hr) = (self.height(left), self.height(right));
        if hl > hr + 1 {
            let child = self.node(left);
            if self.height(child.left) < self.height(child.right) {
                let up = self.rotate_left(left);
                self.node_mut(at).left = up;
            }
            (self.rotate_right(at), true)
        } else if hr > hl + 1 {
            let child = self.node(right);
            if self.height(child.right) < self.height(child.left) {
                let up = self.rotate_right(right);
                self.node_mut(at).right = up;
            }
            (self.rotate_left(at), true)
        } else {
            (at, self.update(at))
        }
    }

    fn rotate_right(&mut self, at: u32) -> u32 {
        let up = self.node(at).left;
        let moved = self.node(up).right;
        self.node_mut(at).left = moved;
        self.node_mut(up).right = at;
        self.update(at);
        self.update(up);
        up
    }

    fn rotate_left(&mut self, at: u32) -> u32 {
        let up = self.node(at).right;
        let moved = self.node(up).left;
        self.node_mut(at).right = moved;
        self.node_mut(up).left = at;
        self.update(at);
        self.update(up);
        up
    }

    /// Recomputes the size, height and summary of node `at` from its
    /// children: `true` when its summary changed.
    #[inline]
    fn update(&mut self, at: u32) -> bool {
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        let left = (left != NIL).then(|| self.node(left));
        let right = (right != NIL).then(|| self.node(right));
        let size = 1 + left.map_or(0, |child| child.size) + right.map_or(0, |child| child.size);
        let height = 1 + left
            .map_or(0, |child| child.height)
            .max(right.map_or(0, |child| child.height));
        let summary = T::summarise(node, left, right);
        let node = self.node_mut(at);
        node.size = size;
        node.height = height;
        T::keep(node, summary)
    }

    // The arena.

    fn arena_len(&self) -> usize {
        self.chunks.len().saturating_sub(1) * T::CHUNK + self.chunks.last().map_or(0, Vec::len)
    }

    /// Adds `node` at the end of the arena and returns its number; `None`
    /// when the numbers are used up.
    fn push(&mut self, node: Node<T>) -> Option<u32> {
        let at = u32::try_from(self.arena_len())
            .ok()
            .filter(|&at| at < NIL)?;
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < T::CHUNK => {
                if T::ARENA == Arena::Blocks && chunk.len() == chunk.capacity() {
                    let want = (chunk.capacity() * 2).clamp(4, T::CHUNK);
                    chunk.reserve_exact(want - chunk.len());
                }
                chunk.push(node);
            }
            _ => {
                let room = match T::ARENA {
                    Arena::Blocks if !self.chunks.is_empty() => T::CHUNK,
                    Arena::Blocks => 4,
                    Arena::Doubling => 0,
                };
                let mut chunk = Vec::with_capacity(room);
                chunk.push(node);
                self.chunks.push(chunk);
            }
        }
        Some(at)
    }

    /// Takes the arena's last node out, giving memory back as the arena
    /// shrinks.
    fn pop(&mut self) -> Option<Node<T>> {
        let chunk = self.chunks.last_mut()?;
        let node = chunk.pop();
        let (len, room) = (chunk.len(), chunk.capacity());
        if len == 0 {
            self.chunks.pop();
            let (len, room) = (self.chunks.len(), self.chunks.capacity());
            let shrink = match T::ARENA {
                Arena::Doubling => 4 * len <= room,
                Arena::Blocks => len == 0 || room > 4 * len,
            };
            if shrink {
                self.chunks.shrink_to(2 * len);
            }
        } else {
            let shrink = match T::ARENA {
                Arena::Doubling => 4 * len <= room,
                Arena::Blocks => 4 * len <= room && room > 4,
            };
            if shrink {
                chunk.shrink_to(2 * len);
            }
        }
        node
    }

    /// Frees the arena slot of the unlinked node `gone`, moving the last
    /// node into it, and returns the unlinked node.
    fn release(&mut self, gone: u32) -> Option<Node<T>> {
        let last = u32::try_from(self.arena_len().checked_sub(1)?).ok()?;
        if gone == last {
            return self.pop();
        }
        // Whatever links to the last node links to its new slot instead.
        let key = &self.node(last).item;
        let mut parent = NIL;
        let mut at = self.root;
        while at != last {
            if at == NIL {
                // Not in the tree: never, the last node is linked.
                return None;
            }
            visit();
            parent = at;
            let node = self.node(at);
            at = if key.order(&node.item).is_lt() {
                node.left
            } else {
                node.right
            };
        }
        if parent == NIL {
            self.root = gone;
        } else {
            let node = self.node_mut(parent);
            if node.left == last {
                node.left = gone;
            } else {
                node.right = gone;
            }
        }
        let moved = self.pop()?;
        Some(std::mem::replace(self.node_mut(gone), moved))
    }

    /// The nodes in order.
    pub fn iter(&self) -> Iter<'_, T> {
        let mut iter = Iter {
            tree: self,
            stack: Vec::with_capacity(usize::from(self.height(self.root))),
        };
        iter.descend(self.root);
        iter
    }
}

/// The nodes in order (see [`Tree::iter`]).
pub struct Iter<'a, T> {
    tree: &'a Tree<T>,
    /// The nodes still to yield whose left subtrees are done, deepest last.
    stack: Vec<u32>,
}

impl<T> Clone for Iter<'_, T> {
    fn clone(&self) -> Self {
        Iter {
            tree: self.tree,
            stack: self.stack.clone(),
        }
    }
}

impl<T: Item> Iter<'_, T> {
    fn descend(&mut self, mut at: u32) {
        while at != NIL {
            self.stack.push(at);
            at = self.tree.node(at).left;
        }
    }
}

impl<'a, T: Item> Iterator for Iter<'a, T> {
    type Item = &'a Node<T>;

    fn next(&mut self) -> Option<&'a Node<T>> {
        let at = self.stack.pop()?;
        let tree: &'a Tree<T> = self.tree;
        let node = tree.node(at);
        self.descend(node.right);
        Some(node)
    }
}

#[cfg(test)]
impl<T: Item + Clone> Tree<T> {
    /// Checks every invariant by a walk of the whole tree: strict order,
    /// balance, each node's size, height, summary and flags (recomputed
    /// from its children), the arena holding exactly the linked nodes in
    /// full chunks but the last, the items' allocations counted.
    pub fn check(&self) {
        let mut seen = vec![false; self.arena_len()];
        let mut last = None;
        self.check_at(self.root, &mut seen, &mut last);
        assert!(seen.iter().all(|&s| s), "a slot not in the tree");
        assert_eq!(self.len() as usize, self.arena_len());
        for (index, chunk) in self.chunks.iter().enumerate() {
            assert!(chunk.len() <= T::CHUNK && !chunk.is_empty());
            if index + 1 < self.chunks.len() {
                assert_eq!(chunk.len(), T::CHUNK);
            }
        }
        let allocating = self.iter().filter(|node| node.allocates()).count();
        assert_eq!(self.allocating as usize, allocating);
    }

    fn check_at(&self, at: u32, seen: &mut [bool], last: &mut Option<u32>) {
        if at == NIL {
            return;
        }
        assert!(
            !std::mem::replace(&mut seen[at as usize], true),
            "node twice"
        );
        let node = self.node(at);
        self.check_at(node.left, seen, last);
        if let Some(before) = *last {
            assert!(self.node(before).order(node).is_lt(), "out of order");
        }
        *last = Some(at);
        self.check_at(node.right, seen, last);
        let (hl, hr) = (self.height(node.left), self.height(node.right));
        assert!(hl.abs_diff(hr) <= 1, "unbalanced");
        assert_eq!(node.height, hl.max(hr) + 1);
        assert_eq!(node.size, self.size(node.left) + self.size(node.right) + 1);
        let child = |at| (at != NIL).then(|| self.node(at));
        let summary = T::summarise(node, child(node.left), child(node.right));
        let mut again = node.clone();
        assert!(!T::keep(&mut again, summary), "summary");
        assert_eq!(again.flags, node.flags, "flags");
    }

    /// The arena's capacity, in nodes; for the unit tests.
    pub fn room(&self) -> Vec<usize> {
        self.chunks.iter().map(Vec::capacity).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// A map from `u32` to `i64`, each subtree summing its values and
    /// knowing its largest, and which of (left, node, right) holds it
    /// (ties to the left) in its flags.
    #[derive(Clone, Debug)]
    struct Pair {
        key: u32,
        value: i64,
        sum: i64,
        max: i64,
        /// Allocates (to count): a value over 900.
        boxed: bool,
    }

    const MAX_LEFT: u8 = 1;
    const MAX_RIGHT: u8 = 2;

    /// A subtree's sum and largest value, and where that is.
    struct Figures {
        sum: i64,
        max: i64,
        side: u8,
    }

    /// Sums the subtree of a node of value `value` and finds its largest
    /// value, from its children's sums and largest values.
    fn figures(value: i64, left: Option<&Pair>, right: Option<&Pair>) -> Figures {
        let (mut sum, mut max, mut side) = (value, value, 0);
        if let Some(left) = left {
            sum += left.sum;
            if left.max >= max {
                (max, side) = (left.max, MAX_LEFT);
            }
        }
        if let Some(right) = right {
            sum += right.sum;
            if right.max > max {
                (max, side) = (right.max, MAX_RIGHT);
            }
        }
        Figures { sum, max, side }
    }

    /// Stores `figures` in a node (`pair` and its `flags`): whether the sum
    /// or largest value changed.
    fn keep(pair: &mut Pair, flags: &mut u8, figures: Figures) -> bool {
        let changed = (figures.sum, figures.max) != (pair.sum, pair.max);
        (pair.sum, pair.max, *flags) = (figures.sum, figures.max, figures.side);
        changed
    }

    impl Item for Pair {
        type Summary = Figures;
        const CHUNK: usize = 16;
        const ARENA: Arena = Arena::Blocks;

        fn order(&self, other: &Self) -> Ordering {
            self.key.cmp(&other.key)
        }

        fn summarise(
            node: &Node<Self>,
            left: Option<&Node<Self>>,
            right: Option<&Node<Self>>,
        ) -> Figures {
            figures(node.value, left.map(|n| &n.item), right.map(|n| &n.item))
        }

        fn keep(node: &mut Node<Self>, figures: Figures) -> bool {
            keep(&mut node.item, &mut node.flags, figures)
        }

        fn allocates(&self) -> bool {
            self.boxed
        }
    }

    /// The same item in an arena of the other kind.
    #[derive(Clone, Debug)]
    struct Doubled(Pair);

    impl Item for Doubled {
        type Summary = Figures;
        const CHUNK: usize = 32;
        const ARENA: Arena = Arena::Doubling;

        fn order(&self, other: &Self) -> Ordering {
            self.0.order(&other.0)
        }

        fn summarise(
            node: &Node<Self>,
            left: Option<&Node<Self>>,
            right: Option<&Node<Self>>,
        ) -> Figures {
            figures(node.0.value, left.map(|n| &n.0), right.map(|n| &n.0))
        }

        fn keep(node: &mut Node<Self>, figures: Figures) -> bool {
            keep(&mut node.item.0, &mut node.flags, figures)
        }
    }

    fn pair(key: u32, value: i64) -> Node<Pair> {
        Node::leaf(
            Pair {
                key,
                value,
                sum: 0,
                max: 0,
                boxed: value > 900,
            },
            0,
        )
    }

    /// Sets `key` to `value`: whether it was added.
    fn set(tree: &mut Tree<Pair>, key: u32, value: i64) -> bool {
        let done = tree.upsert(
            |item| key.cmp(&item.key),
            |node| {
                node.value = value;
                Ok::<_, ()>(true)
            },
            || Ok(pair(key, value)),
        );
        let (at, added) = done.unwrap().unwrap();
        assert_eq!(tree.node(at).key, key);
        added
    }

    /// The entry of rank `rank` (from 0), found by the sizes.
    fn at_rank(tree: &Tree<Pair>, mut rank: u32) -> Option<u32> {
        let mut at = tree.root();
        while at != NIL {
            let node = tree.node(at);
            let below = tree.size(node.left());
            match rank.cmp(&below) {
                Ordering::Less => at = node.left(),
                Ordering::Equal => return Some(node.key),
                Ordering::Greater => {
                    rank -= below + 1;
                    at = node.right();
                }
            }
        }
        None
    }

    fn remove_rank(tree: &mut Tree<Pair>, rank: u32) -> Option<Removed<Pair>> {
        let mut rank = rank;
        tree.remove(|tree, node| {
            let below = tree.size(node.left());
            let order = rank.cmp(&below);
            if order.is_gt() {
                rank -= below + 1;
            }
            order
        })
    }

    /// Random writes, removals by key and by rank, against a `BTreeMap`
    /// and a map of where each key's node is: the same items in the same
    /// order, the root's summary that of every value, ranks, node numbers
    /// followed through the moves, every invariant.
    #[test]
    fn matches_an_ordered_map_under_random_changes() {
        let mut rng = StdRng::seed_from_u64(46);
        let mut tree = Tree::default();
        let mut model: BTreeMap<u32, i64> = BTreeMap::new();
        let mut slots: BTreeMap<u32, u32> = BTreeMap::new();
        for step in 0..40_000 {
            // Mostly writes at first, then mostly removals.
            let writes = if step < 25_000 { 0.7 } else { 0.3 };
            let key = rng.random_range(0..600u32);
            if rng.random_bool(writes) {
                let value = rng.random_range(-1000..1000i64);
                let added = set(&mut tree, key, value);
                assert_eq!(added, model.insert(key, value).is_none());
                let at = tree.find(|item| key.cmp(&item.key)).unwrap();
                if added {
                    assert_eq!(at as usize, slots.len());
                    slots.insert(key, at);
                }
                assert_eq!(slots[&key], at);
            } else {
                let removed = if rng.random_bool(0.5) || model.is_empty() {
                    tree.remove(|_, node| key.cmp(&node.key))
                } else {
                    let rank = rng.random_range(0..model.len() as u32);
                    let key = *model.keys().nth(rank as usize).unwrap();
                    assert_eq!(at_rank(&tree, rank), Some(key));
                    remove_rank(&mut tree, rank)
                };
                match removed {
                    None => assert!(!model.contains_key(&key)),
                    Some(removed) => {
                        let gone = removed.node.key;
                        assert_eq!(model.remove(&gone), Some(removed.node.value));
                        assert_eq!(slots.remove(&gone), Some(removed.at));
                        if let Some(from) = removed.moved {
                            let (&moved, slot) =
                                slots.iter_mut().find(|(_, slot)| **slot == from).unwrap();
                            *slot = removed.at;
                            assert_eq!(tree.node(removed.at).key, moved);
                        }
                    }
                }
            }
            assert_eq!(tree.len() as usize, model.len());
            let root = (!tree.is_empty()).then(|| tree.node(tree.root()));
            let sum = model.values().sum();
            let max = model.values().max().copied();
            assert_eq!(root.map(|f| f.sum), (!model.is_empty()).then_some(sum));
            assert_eq!(root.map(|f| f.max), max);
            if step % 211 == 0 {
                tree.check();
                let listed: Vec<_> = tree.iter().map(|n| (n.key, n.value)).collect();
                let modelled: Vec<_> = model.iter().map(|(&k, &v)| (k, v)).collect();
                assert_eq!(listed, modelled);
                for (&key, &at) in &slots {
                    assert_eq!(tree.node(at).key, key);
                }
            }
        }
        tree.check();
    }

    /// Heights stay within the AVL bound, in order and in reverse order
    /// (the inserts that rotate the most), and a removal never leaves more.
    #[test]
    fn heights_stay_within_the_avl_bound() {
        // An AVL tree of n nodes is at most 1.4405 log2(n + 2) - 0.3277 tall.
        let bound = |n: u32| (1.4405 * f64::from(n + 2).log2() - 0.3277).floor() as u8;
        for reverse in [false, true] {
            let mut tree = Tree::default();
            for n in 0..5_000u32 {
                let key = if reverse { 10_000 - n } else { n };
                set(&mut tree, key, i64::from(n % 7));
                assert!(tree.height(tree.root()) <= bound(n + 1));
            }
            tree.check();
            for n in (0..5_000u32).step_by(3) {
                let key = if reverse { 10_000 - n } else { n };
                assert!(tree.remove(|_, node| key.cmp(&node.key)).is_some());
                assert!(tree.height(tree.root()) <= bound(tree.len()));
            }
            tree.check();
        }
    }

    #[test]
    fn built_from_sorted_nodes_is_balanced_and_written_to_as_any() {
        for n in [0u32, 1, 2, 3, 15, 16, 17, 1000, 4097] {
            let tree = Tree::from_sorted((0..n).map(|key| pair(key * 2, i64::from(key)))).unwrap();
            tree.check();
            assert_eq!(tree.len(), n);
            assert!(tree.height(tree.root()) as u32 <= 32 - n.leading_zeros());
            // Chunks exactly as long as filled.
            let room: usize = tree.room().iter().sum();
            assert_eq!(room, n as usize);
            let mut tree = tree;
            set(&mut tree, 1, 5);
            assert!(tree.remove(|_, node| 0.cmp(&node.key)).is_some() == (n > 0));
            tree.check();
            let doubled =
                Tree::from_sorted((0..n).map(|key| Node::leaf(Doubled(pair(key, 1).item), 0)))
                    .unwrap();
            doubled.check();
            assert_eq!(doubled.len(), n);
        }
    }

    /// `upsert` changes nothing on an `Err`, and a change that keeps the
    /// summary stops the recomputation at once.
    #[test]
    fn an_error_changes_nothing() {
        let mut tree = Tree::default();
        for key in 0..100 {
            set(&mut tree, key, 1);
        }
        let refused = tree.upsert(
            |item| 7.cmp(&item.key),
            |_| Err("present"),
            || Ok(pair(7, 2)),
        );
        assert_eq!(refused, Err("present"));
        let refused = tree.upsert(|item| 700.cmp(&item.key), |_| Ok(true), || Err("absent"));
        assert_eq!(refused, Err("absent"));
        assert_eq!(tree.len(), 100);
        assert!(tree.find(|item| 700.cmp(&item.key)).is_none());
        tree.check();
    }

    /// Each arena gives memory back as it empties, in its own way.
    #[test]
    fn arenas_grow_and_shrink_by_their_kind() {
        let mut blocks = Tree::default();
        let mut doubled = Tree::default();
        let doubled_pair = |key: u32| Node::leaf(Doubled(pair(key, 1).item), 0);
        for key in 0..40u32 {
            set(&mut blocks, key, 1);
            let added = doubled.upsert(
                |item: &Doubled| key.cmp(&item.0.key),
                |_| Ok::<_, ()>(false),
                || Ok(doubled_pair(key)),
            );
            assert_eq!(added, Ok(Some((key, true))));
        }
        // The first chunk doubled from 4 to 16, the later ones whole; or
        // each doubled from 4 up to 32.
        assert_eq!(blocks.room(), [16, 16, 16]);
        assert_eq!(doubled.room(), [32, 8]);
        assert_eq!(
            blocks.memory(|bytes| bytes),
            3 * 16 * size_of::<Node<Pair>>() + 4 * size_of::<Vec<Node<Pair>>>()
        );
        for key in 0..39u32 {
            assert!(blocks.remove(|_, node| key.cmp(&node.key)).is_some());
            assert!(doubled.remove(|_, node| key.cmp(&node.0.key)).is_some());
        }
        blocks.check();
        doubled.check();
        // One node left: a chunk of 4 is kept (Blocks), or shrunk (Doubling).
        assert_eq!(blocks.room(), [4]);
        assert_eq!(doubled.room(), [2]);
        assert_eq!(blocks.allocations(), 2);
        assert!(blocks.remove(|_, node| 39.cmp(&node.key)).is_some());
        assert_eq!(blocks.memory(|bytes| bytes), 0);
        assert!(blocks.is_empty() && blocks.iter().next().is_none());
    }

    #[test]
    fn allocations_count_the_items_own() {
        let mut tree = Tree::default();
        set(&mut tree, 1, 1000);
        set(&mut tree, 2, 5);
        assert_eq!(tree.allocations(), 1 + 1 + 1);
        assert!(tree.remove(|_, node| 1.cmp(&node.key)).is_some());
        assert_eq!(tree.allocations(), 1 + 1);
        let built = Tree::from_sorted([pair(1, 1000), pair(2, 1000), pair(3, 1)]).unwrap();
        assert_eq!(built.allocations(), 1 + 1 + 2);
        built.check();
    }
}
