//! A unique circular queue without the server: items in order, each at most
//! once, where inserting a queued item moves it to the tail and rotating
//! moves the head to the tail.
//!
//! Layout: the items live in one dense vector of nodes, each with the
//! numbers of its neighbours, linked into a circle (the tail is the head's
//! predecessor); a hash table of node numbers (4 bytes a slot, hashed by the
//! node's item, keyed per queue) finds an item's node. So every operation is
//! O(1) (expected): insert, move to the tail, remove, rotate (the head moves
//! one step on), front, rear, length. A removed node's place is filled by the
//! last node (its neighbours and its table entry renumbered), so the vector
//! never has holes and no free list is kept.
//!
//! Memory per item: a 24-byte node, about 5 bytes of table (4 bytes a slot
//! and a control byte, at most 7/8 full), and the item's own allocation.

#![forbid(unsafe_code)]

use std::hash::{BuildHasher, RandomState};

use crate::common::memory::block;
use hashbrown::HashTable;

/// The most items a queue holds (node numbers are `u32`).
pub const MAX_ITEMS: usize = u32::MAX as usize - 1;

#[derive(Clone, Debug)]
struct Node {
    item: Box<[u8]>,
    prev: u32,
    next: u32,
}

/// A unique circular queue.
#[derive(Clone)]
pub struct Queue {
    nodes: Vec<Node>,
    index: HashTable<u32>,
    /// Keyed per queue: a client cannot choose items that collide.
    hasher: RandomState,
    head: u32,
    /// The items' bytes, for [`Queue::memory`] in O(1).
    item_blocks: usize,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            nodes: Vec::new(),
            index: HashTable::new(),
            hasher: RandomState::new(),
            head: 0,
            item_blocks: 0,
        }
    }
}

impl Queue {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn hash(&self, item: &[u8]) -> u64 {
        self.hasher.hash_one(item)
    }

    /// The node number of `item`, if queued.
    fn find(&self, item: &[u8]) -> Option<u32> {
        let nodes = &self.nodes;
        self.index
            .find(self.hash(item), |&at| &*nodes[at as usize].item == item)
            .copied()
    }

    pub fn contains(&self, item: &[u8]) -> bool {
        self.find(item).is_some()
    }

    /// The head: the item `rotate` moves next.
    pub fn front(&self) -> Option<&[u8]> {
        (!self.is_empty()).then(|| &*self.nodes[self.head as usize].item)
    }

    /// The tail: the item inserted or rotated last.
    pub fn rear(&self) -> Option<&[u8]> {
        (!self.is_empty()).then(|| {
            let tail = self.nodes[self.head as usize].prev;
            &*self.nodes[tail as usize].item
        })
    }

    /// Puts node `at`, unlinked, at the tail (before the head).
    fn link_at_tail(&mut self, at: u32) {
        if self.nodes.len() == 1 {
            self.head = at;
            self.nodes[at as usize].prev = at;
            self.nodes[at as usize].next = at;
            return;
        }
        let head = self.head;
        let tail = self.nodes[head as usize].prev;
        self.nodes[at as usize].prev = tail;
        self.nodes[at as usize].next = head;
        self.nodes[tail as usize].next = at;
        self.nodes[head as usize].prev = at;
    }

    /// Takes node `at` out of the circle (the queue holds two nodes or
    /// more); the head moves on if it was `at`.
    fn unlink(&mut self, at: u32) {
        let Node { prev, next, .. } = self.nodes[at as usize];
        self.nodes[prev as usize].next = next;
        self.nodes[next as usize].prev = prev;
        if self.head == at {
            self.head = next;
        }
    }

    /// Inserts `item` at the tail, or moves it there if it is queued: `true`
    /// when it was new. The caller keeps the queue within [`MAX_ITEMS`].
    pub fn insert(&mut self, item: &[u8]) -> bool {
        if let Some(at) = self.find(item) {
            if self.nodes.len() > 1 {
                if self.head == at {
                    // The circle turns by one: the head becomes the tail.
                    self.head = self.nodes[at as usize].next;
                } else {
                    self.unlink(at);
                    self.link_at_tail(at);
                }
            }
            return false;
        }
        let at = self.nodes.len() as u32;
        self.nodes.push(Node {
            item: item.into(),
            prev: at,
            next: at,
        });
        self.item_blocks += block(item.len());
        let hash = self.hash(item);
        let (nodes, hasher) = (&self.nodes, &self.hasher);
        self.index
            .insert_unique(hash, at, |&n| hasher.hash_one(&*nodes[n as usize].item));
        self.link_at_tail(at);
        true
    }

    /// Removes `item`: `true` when it was queued.
    pub fn remove(&mut self, item: &[u8]) -> bool {
        let hash = self.hash(item);
        let nodes = &self.nodes;
        let Ok(entry) = self
            .index
            .find_entry(hash, |&at| &*nodes[at as usize].item == item)
        else {
            return false;
        };
        let (at, _) = entry.remove();
        self.item_blocks -= block(item.len());
        if self.nodes.len() == 1 {
            self.nodes.clear();
            self.head = 0;
            self.shrink();
            return true;
        }
        self.unlink(at);
        let last = (self.nodes.len() - 1) as u32;
        self.nodes.swap_remove(at as usize);
        if at != last {
            // The last node now lives at `at`: renumber its neighbours' links
            // and its table entry.
            let renumber = |n: u32| if n == last { at } else { n };
            let (prev, next) = {
                let moved = &mut self.nodes[at as usize];
                moved.prev = renumber(moved.prev);
                moved.next = renumber(moved.next);
                (moved.prev, moved.next)
            };
            self.nodes[prev as usize].next = at;
            self.nodes[next as usize].prev = at;
            if self.head == last {
                self.head = at;
            }
            let hash = self.hash(&self.nodes[at as usize].item);
            if let Some(slot) = self.index.find_mut(hash, |&n| n == last) {
                *slot = at;
            }
        }
        self.shrink();
        true
    }

    /// Gives back room once three quarters of it are unused.
    fn shrink(&mut self) {
        let len = self.nodes.len();
        if self.nodes.capacity() > 16 && self.nodes.capacity() / 4 > len {
            self.nodes.shrink_to(2 * len);
            let (nodes, hasher) = (&self.nodes, &self.hasher);
            self.index
                .shrink_to(2 * len, |&n| hasher.hash_one(&*nodes[n as usize].item));
        }
    }

    /// Moves the head to the tail and returns it; `None` when empty.
    pub fn rotate(&mut self) -> Option<&[u8]> {
        if self.is_empty() {
            return None;
        }
        let moved = self.head;
        self.head = self.nodes[moved as usize].next;
        Some(&self.nodes[moved as usize].item)
    }

    /// The items from head to tail.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        let mut at = self.head;
        (0..self.nodes.len()).map(move |_| {
            let node = &self.nodes[at as usize];
            at = node.next;
            &*node.item
        })
    }

    /// A queue of `items`, head first, as stored: refuses none and a
    /// repeated item. O(N) expected, whatever the order.
    pub fn from_items(items: Vec<Box<[u8]>>) -> Result<Queue, &'static str> {
        if items.is_empty() {
            return Err("no items");
        }
        if items.len() > MAX_ITEMS {
            return Err("too many items");
        }
        let mut queue = Queue::default();
        queue.nodes.reserve_exact(items.len());
        queue.index.reserve(items.len(), |_| 0);
        for item in items {
            if queue.contains(&item) {
                return Err("an item twice");
            }
            queue.insert(&item);
        }
        queue.nodes.shrink_to_fit();
        Ok(queue)
    }

    /// Bytes held, for `MEMORY USAGE`: the queue, its node vector, its table
    /// and each item's block.
    pub fn memory(&self) -> usize {
        block(size_of::<Self>())
            + block(self.nodes.capacity() * size_of::<Node>())
            + block(self.index.allocation_size())
            + self.item_blocks
    }

    /// Allocations owned, for the server's lazy-free decision.
    pub fn allocations(&self) -> usize {
        1 + 2 + self.nodes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    fn items(queue: &Queue) -> Vec<Vec<u8>> {
        queue.iter().map(<[u8]>::to_vec).collect()
    }

    /// Checks every link, the head, the table and the byte count against
    /// the queue's order.
    fn check(queue: &Queue) {
        let n = queue.nodes.len();
        assert_eq!(queue.index.len(), n);
        if n == 0 {
            assert_eq!(queue.item_blocks, 0);
            return;
        }
        for (at, node) in queue.nodes.iter().enumerate() {
            assert_eq!(queue.nodes[node.next as usize].prev as usize, at);
            assert_eq!(queue.nodes[node.prev as usize].next as usize, at);
            assert_eq!(queue.find(&node.item), Some(at as u32));
        }
        let listed = items(queue);
        assert_eq!(listed.len(), n);
        let blocks: usize = listed.iter().map(|item| block(item.len())).sum();
        assert_eq!(queue.item_blocks, blocks);
    }

    fn b(text: &str) -> Vec<u8> {
        text.as_bytes().to_vec()
    }

    #[test]
    fn the_books_semantics() {
        let mut queue = Queue::default();
        assert_eq!(queue.rotate(), None);
        assert_eq!(queue.front(), None);
        assert_eq!(queue.rear(), None);
        for item in ["a", "b", "c"] {
            assert!(queue.insert(item.as_bytes()));
        }
        assert_eq!(items(&queue), [b("a"), b("b"), b("c")]);
        // Inserting a queued item moves it to the tail.
        assert!(!queue.insert(b"a"));
        assert_eq!(items(&queue), [b("b"), b("c"), b("a")]);
        assert!(!queue.insert(b"c"));
        assert_eq!(items(&queue), [b("b"), b("a"), b("c")]);
        assert!(!queue.insert(b"c"), "the tail stays the tail");
        assert_eq!(items(&queue), [b("b"), b("a"), b("c")]);
        assert_eq!(queue.rotate(), Some(&b"b"[..]));
        assert_eq!(items(&queue), [b("a"), b("c"), b("b")]);
        assert_eq!(
            (queue.front(), queue.rear()),
            (Some(&b"a"[..]), Some(&b"b"[..]))
        );
        assert!(queue.remove(b"c"));
        assert!(!queue.remove(b"c"));
        assert_eq!(items(&queue), [b("a"), b("b")]);
        check(&queue);
        assert!(queue.remove(b"a") && queue.remove(b"b"));
        assert!(queue.is_empty());
        check(&queue);
        assert!(queue.insert(b""));
        assert_eq!(queue.rotate(), Some(&b""[..]));
        assert_eq!(queue.front(), Some(&b""[..]));
        check(&queue);
    }

    /// Random operations against a `VecDeque` model.
    #[test]
    fn matches_a_model() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut random = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        let mut queue = Queue::default();
        let mut model: VecDeque<Vec<u8>> = VecDeque::new();
        for step in 0..40_000 {
            let item = format!("item-{}", random(300)).into_bytes();
            match random(10) {
                0..=3 => {
                    let had = model.iter().position(|x| *x == item);
                    if let Some(at) = had {
                        model.remove(at);
                    }
                    model.push_back(item.clone());
                    assert_eq!(queue.insert(&item), had.is_none());
                }
                4..=6 => {
                    let had = model.iter().position(|x| *x == item);
                    if let Some(at) = had {
                        model.remove(at);
                    }
                    assert_eq!(queue.remove(&item), had.is_some());
                }
                _ => {
                    let front = model.pop_front();
                    if let Some(front) = front.clone() {
                        model.push_back(front);
                    }
                    assert_eq!(queue.rotate().map(<[u8]>::to_vec), front);
                }
            }
            assert_eq!(queue.len(), model.len());
            assert_eq!(queue.front(), model.front().map(Vec::as_slice));
            assert_eq!(queue.rear(), model.back().map(Vec::as_slice));
            if step % 97 == 0 {
                assert_eq!(items(&queue), Vec::from(model.clone()));
                check(&queue);
            }
        }
    }

    #[test]
    fn loads_in_order_and_refuses_repeats_and_nothing() {
        let list = |names: &[&str]| -> Vec<Box<[u8]>> {
            names.iter().map(|n| n.as_bytes().into()).collect()
        };
        let queue = Queue::from_items(list(&["z", "a", "m"])).unwrap();
        assert_eq!(items(&queue), [b("z"), b("a"), b("m")]);
        check(&queue);
        assert_eq!(Queue::from_items(list(&[])).err(), Some("no items"));
        assert_eq!(
            Queue::from_items(list(&["a", "b", "a"])).err(),
            Some("an item twice")
        );
    }

    #[test]
    fn a_large_queue_loads_fast_and_shrinks_as_it_empties() {
        let names: Vec<Box<[u8]>> = (0..200_000)
            .rev()
            .map(|n| format!("{n:08}").into_bytes().into())
            .collect();
        let mut queue = Queue::from_items(names).unwrap();
        assert_eq!(queue.front(), Some(&b"00199999"[..]));
        let full = queue.memory();
        // 24-byte node, about 5 bytes of table, 16-byte item block.
        let per_item = full as f64 / 200_000.0;
        assert!((40.0..56.0).contains(&per_item), "{per_item} bytes an item");
        for n in 0..199_990 {
            assert!(queue.remove(format!("{n:08}").as_bytes()));
        }
        check(&queue);
        assert!(queue.memory() < 2_000, "{} bytes left", queue.memory());
    }

    #[test]
    fn memory_counts_every_block() {
        let mut queue = Queue::default();
        assert_eq!(queue.memory(), block(size_of::<Queue>()));
        queue.insert(b"abc");
        queue.insert(&[b'x'; 100]);
        // Vec of 4 nodes (96 bytes), a table of 4 slots (4 × 4 + 4 + 16
        // control bytes = 36 → 48), the items (8 + 112).
        assert_eq!(queue.nodes.capacity(), 4);
        assert_eq!(
            queue.memory(),
            block(size_of::<Queue>()) + 96 + block(queue.index.allocation_size()) + 8 + 112
        );
    }
}
