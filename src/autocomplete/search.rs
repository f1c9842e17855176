//! A hint's search over the suggestions' tree (see `core.rs`): the best
//! entries under a prefix, by a best-first search over pieces of the range
//! of entries that start with it.
//!
//! One descent splits the range into O(log M) single nodes and whole
//! subtrees, pushed on a heap by weight (a subtree by its best), then by rank
//! (pieces never overlap, so ranks order them as their contents). The top
//! piece, if a subtree, is split along the path to its best entry (each
//! node passed and each subtree not taken pushed in turn) and the best comes
//! out. N hints, skipping K faded entries on the way, cost O((N + K) log M)
//! node visits, however many entries the prefix holds.

#![forbid(unsafe_code)]

use super::core::{Suggestions, BEST_LEFT, BEST_MASK, BEST_RIGHT};
use crate::common::tree::NIL;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// `Less` below it, `Equal` in it, `Greater` above it.
fn against_prefix(content: &[u8], prefix: &[u8]) -> Ordering {
    let shared = content.len().min(prefix.len());
    match content[..shared].cmp(&prefix[..shared]) {
        Ordering::Equal if content.len() < prefix.len() => Ordering::Less,
        order => order,
    }
}

/// A piece of the entries under a prefix during a hint, the heap's item:
/// a node alone, or a whole subtree, ranked by its best weight.
#[derive(Clone, Copy, Debug)]
struct Piece {
    /// The node's weight, or the subtree's best.
    weight: f64,
    /// The node's rank, or the subtree's first rank.
    rank: u32,
    node: u32,
    whole: bool,
}

#[cfg(test)]
thread_local! {
    /// Pieces pushed by hints, for the unit test of the cost bound.
    static PUSHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Pushes `piece` on a hint's heap.
#[inline]
fn push(heap: &mut BinaryHeap<Piece>, piece: Piece) {
    #[cfg(test)]
    PUSHES.with(|pushes| pushes.set(pushes.get() + 1));
    heap.push(piece);
}

impl PartialEq for Piece {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Piece {}

impl PartialOrd for Piece {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Piece {
    /// Heavier first; at equal weight the greater rank. Pieces never
    /// overlap, so any rank of a piece orders its entries against another
    /// piece's as their contents are ordered: the greater content first.
    fn cmp(&self, other: &Self) -> Ordering {
        self.weight
            .total_cmp(&other.weight)
            .then(self.rank.cmp(&other.rank))
    }
}

impl Suggestions {
    #[cfg(test)]
    /// A hint's entries, searched (see [`Suggestions::hint_with`]).
    pub fn hint(&self, prefix: &[u8], count: usize, now: i64) -> Vec<(&[u8], f64)> {
        let mut nodes = Vec::new();
        self.search(prefix, count, now, &mut nodes);
        nodes
            .iter()
            .map(|&at| {
                let node = self.entries.node(at);
                (&*node.content, node.weight)
            })
            .collect()
    }

    /// Puts in `found` the nodes of the best `count` entries that start
    /// with `prefix` and have not faded by `now` (see
    /// [`Suggestions::hint_with`]), and returns the earliest fade time among
    /// them (`i64::MAX` if none fades) and whether a faded entry was passed
    /// over. O((count + faded entries met) · log M), however many entries
    /// start with `prefix`.
    pub(super) fn search(
        &self,
        prefix: &[u8],
        count: usize,
        now: i64,
        found: &mut Vec<u32>,
    ) -> (i64, bool) {
        let mut until = i64::MAX;
        let mut passed_faded = false;
        if count == 0 || self.entries.is_empty() {
            return (until, passed_faded);
        }
        found.reserve_exact(count.min(self.len()));
        // The entries under the prefix as O(log M) pieces, then the best
        // piece split again and again until `count` entries have come out
        // (each split pushes about two pieces a level).
        let height = usize::from(self.entries.height(self.entries.root()));
        let mut heap = BinaryHeap::with_capacity(4 * height + 8);
        self.pieces_under(prefix, &mut heap);
        while let Some(piece) = heap.pop() {
            let at = if piece.whole {
                self.split(piece, &mut heap)
            } else {
                piece.node
            };
            let node = self.entries.node(at);
            if !node.faded(now) {
                if let Some(fade) = node.fade_at() {
                    // An answer with `until` at i64::MAX needs no clock (see
                    // `answer`): a fade at the end of time ends it just before.
                    until = until.min(fade.min(i64::MAX - 1));
                }
                found.push(at);
                if found.len() >= count {
                    break;
                }
            } else {
                passed_faded = true;
            }
        }
        (until, passed_faded)
    }

    #[cfg(test)]
    /// The number of entries that start with `prefix`, faded or not.
    /// O(log M).
    pub fn count(&self, prefix: &[u8]) -> usize {
        // The entries before the prefix's range, and before or in it.
        let (mut below, mut through) = (0, 0);
        let mut at = self.entries.root();
        while at != NIL {
            let node = self.entries.node(at);
            if *node.content < *prefix {
                below += self.entries.size(node.left()) as usize + 1;
                at = node.right();
            } else {
                at = node.left();
            }
        }
        at = self.entries.root();
        while at != NIL {
            let node = self.entries.node(at);
            if against_prefix(&node.content, prefix) == Ordering::Greater {
                at = node.left();
            } else {
                through += self.entries.size(node.left()) as usize + 1;
                at = node.right();
            }
        }
        through.saturating_sub(below)
    }

    /// Pushes the entries that start with `prefix` as pieces: the highest
    /// node among them, then down each side of it the nodes and whole
    /// subtrees in the range. One descent, O(log M) pieces.
    fn pieces_under(&self, prefix: &[u8], heap: &mut BinaryHeap<Piece>) {
        if prefix.is_empty() {
            self.push_whole(heap, self.entries.root(), 0);
            return;
        }
        let (mut at, mut base) = (self.entries.root(), 0);
        let top = loop {
            if at == NIL {
                return;
            }
            let node = self.entries.node(at);
            match against_prefix(&node.content, prefix) {
                Ordering::Less => {
                    base += self.entries.size(node.left()) + 1;
                    at = node.right();
                }
                Ordering::Greater => at = node.left(),
                Ordering::Equal => break node,
            }
        };
        let rank = base + self.entries.size(top.left());
        push(
            heap,
            Piece {
                weight: top.weight,
                rank,
                node: at,
                whole: false,
            },
        );
        // Left of it, each node is in the range or below it.
        let (mut at, mut base) = (top.left(), base);
        while at != NIL {
            let node = self.entries.node(at);
            let rank = base + self.entries.size(node.left());
            if node.content.starts_with(prefix) {
                self.push_whole(heap, node.right(), rank + 1);
                push(
                    heap,
                    Piece {
                        weight: node.weight,
                        rank,
                        node: at,
                        whole: false,
                    },
                );
                at = node.left();
            } else {
                base = rank + 1;
                at = node.right();
            }
        }
        // Right of it, in the range or above it.
        let (mut at, mut base) = (top.right(), rank + 1);
        while at != NIL {
            let node = self.entries.node(at);
            let rank = base + self.entries.size(node.left());
            if node.content.starts_with(prefix) {
                self.push_whole(heap, node.left(), base);
                push(
                    heap,
                    Piece {
                        weight: node.weight,
                        rank,
                        node: at,
                        whole: false,
                    },
                );
                base = rank + 1;
                at = node.right();
            } else {
                at = node.left();
            }
        }
    }

    /// Pushes the subtree `at`, whose first rank is `base`, as one piece.
    fn push_whole(&self, heap: &mut BinaryHeap<Piece>, at: u32, base: u32) {
        if at != NIL {
            let node = self.entries.node(at);
            push(
                heap,
                Piece {
                    weight: node.best,
                    rank: base,
                    node: at,
                    whole: node.size() > 1,
                },
            );
        }
    }

    /// Splits the whole subtree `piece` around its best entry: follows
    /// where each node says the best is, pushing each node passed and the
    /// subtree not taken, then the best's own subtrees; returns the best.
    /// The best is the greatest content of its weight in the subtree, so
    /// whatever is pushed comes after it.
    fn split(&self, piece: Piece, heap: &mut BinaryHeap<Piece>) -> u32 {
        let (mut at, mut base) = (piece.node, piece.rank);
        loop {
            let node = self.entries.node(at);
            let rank = base + self.entries.size(node.left());
            let here = Piece {
                weight: node.weight,
                rank,
                node: at,
                whole: false,
            };
            match node.flags & BEST_MASK {
                BEST_LEFT if node.left() != NIL => {
                    push(heap, here);
                    self.push_whole(heap, node.right(), rank + 1);
                    at = node.left();
                }
                BEST_RIGHT if node.right() != NIL => {
                    self.push_whole(heap, node.left(), base);
                    push(heap, here);
                    base = rank + 1;
                    at = node.right();
                }
                _ => {
                    self.push_whole(heap, node.left(), base);
                    self.push_whole(heap, node.right(), rank + 1);
                    return at;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::core::tests::{hints, of, Rng};
    use super::*;
    use crate::common::memory::block;
    use std::mem::size_of;

    #[test]
    fn hints_are_by_weight_then_content_descending() {
        let tree = of(&[
            ("apple", 3.0),
            ("apply", 5.0),
            ("app", 3.0),
            ("apricot", 3.0),
            ("banana", 9.0),
            ("ap", 1.0),
        ]);
        assert_eq!(
            hints(&tree, "ap", 10),
            [
                ("apply", 5.0),
                ("apricot", 3.0),
                ("apple", 3.0),
                ("app", 3.0),
                ("ap", 1.0)
            ]
        );
        // The prefix itself is an entry, and is hinted.
        assert_eq!(
            hints(&tree, "app", 10),
            [("apply", 5.0), ("apple", 3.0), ("app", 3.0)]
        );
        assert_eq!(hints(&tree, "apple", 10), [("apple", 3.0)]);
        assert_eq!(hints(&tree, "ap", 2), [("apply", 5.0), ("apricot", 3.0)]);
        assert_eq!(hints(&tree, "", 2), [("banana", 9.0), ("apply", 5.0)]);
        assert_eq!(hints(&tree, "", 100).len(), 6);
        assert!(hints(&tree, "ap", 0).is_empty());
        for none in ["c", "applz", "applesauce", "b2", "0", "\u{ffff}"] {
            assert!(hints(&tree, none, 10).is_empty(), "{none}");
        }
    }

    #[test]
    fn hints_match_by_characters() {
        let tree = of(&[
            ("自动补全", 2.0),
            ("自动化", 5.0),
            ("自然", 7.0),
            ("数据库", 1.0),
        ]);
        assert_eq!(
            hints(&tree, "自", 10),
            [("自然", 7.0), ("自动化", 5.0), ("自动补全", 2.0)]
        );
        assert_eq!(
            hints(&tree, "自动", 10),
            [("自动化", 5.0), ("自动补全", 2.0)]
        );
        assert_eq!(hints(&tree, "数", 10), [("数据库", 1.0)]);
        assert!(hints(&tree, "库", 10).is_empty());
    }

    /// A hint's cost is the pieces it pushes: about two a level for each
    /// entry it gives, whether 10 entries start with the prefix or 100,000.
    #[test]
    fn a_hint_costs_log_m_an_entry_however_many_match() {
        let mut rng = Rng(99);
        let mut tree = Suggestions::default();
        for n in 0..100_000 {
            let w = rng.below(1000) as f64;
            tree.set(format!("w{n:06}").as_bytes(), w, None).unwrap();
        }
        for n in 0..10 {
            tree.set(format!("x{n}").as_bytes(), n as f64, None)
                .unwrap();
        }
        let height = u64::from(tree.entries.height(tree.entries.root()));
        assert!(height <= 21, "{height}");
        let pushes = |prefix: &[u8], count: usize| {
            PUSHES.with(|pushes| pushes.set(0));
            assert_eq!(tree.hint(prefix, count, 0).len(), count);
            assert_eq!(tree.count(prefix).min(count), count);
            PUSHES.with(|pushes| pushes.get())
        };
        for count in [1, 10, 100] {
            // The range: a node and up to two pieces a level down each
            // side; then each entry: up to two pieces a level.
            let bound = 1 + 4 * height + count * 2 * height;
            for prefix in [&b"w"[..], b"x", b"", b"w01", b"w0123"] {
                if tree.count(prefix) < count as usize {
                    continue;
                }
                let pushed = pushes(prefix, count as usize);
                assert!(pushed <= bound, "{prefix:?} {count}: {pushed} > {bound}");
            }
        }
        // A scan would visit the 100,000.
        assert!(pushes(b"w", 10) < 500);
    }

    #[test]
    fn removing_the_best_entry_passes_the_lead_on() {
        let mut tree = Suggestions::default();
        for n in 0..100 {
            tree.set(format!("w{n:03}").as_bytes(), n as f64, None)
                .unwrap();
        }
        for n in (0..100).rev() {
            let best = format!("w{n:03}");
            assert_eq!(tree.hint(b"w", 1, 0), [(best.as_bytes(), n as f64)]);
            assert!(tree.remove(best.as_bytes()));
            assert!(!tree.remove(best.as_bytes()));
            tree.check();
        }
        assert!(tree.is_empty());
        assert_eq!(tree.memory(), block(size_of::<Suggestions>()));
    }

    #[test]
    fn lowering_the_best_weight_passes_the_lead_on() {
        let mut tree = of(&[("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0), ("e", 5.0)]);
        tree.feed(b"e", -10.0, None).unwrap();
        assert_eq!(hints(&tree, "", 2), [("d", 4.0), ("c", 3.0)]);
        tree.set(b"a", 4.0, None).unwrap();
        assert_eq!(hints(&tree, "", 2), [("d", 4.0), ("a", 4.0)]);
        tree.check();
    }

    #[test]
    fn faded_entries_are_not_hinted() {
        let mut tree = Suggestions::default();
        tree.set(b"aa", 5.0, Some(100)).unwrap();
        tree.set(b"ab", 4.0, None).unwrap();
        tree.set(b"ac", 3.0, Some(200)).unwrap();
        tree.set(b"ad", 2.0, Some(i64::MAX)).unwrap();
        let at = |now| -> Vec<&[u8]> { tree.hint(b"a", 10, now).iter().map(|h| h.0).collect() };
        assert_eq!(at(99), [&b"aa"[..], b"ab", b"ac", b"ad"]);
        assert_eq!(at(100), [&b"ab"[..], b"ac", b"ad"]);
        assert_eq!(at(200), [&b"ab"[..], b"ad"]);
        assert_eq!(at(i64::MAX), [&b"ab"[..]]);
        assert_eq!(tree.hint(b"a", 1, 150), [(&b"ab"[..], 4.0)]);
        // Faded but not yet removed: still counted, weighed, iterated.
        assert_eq!(tree.len(), 4);
    }
}
