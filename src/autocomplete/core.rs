//! The suggestions of one AUTOCOMPLETE key, apart from the server: each
//! entry (its content, weight and optional fade time) stored once, the
//! writes to them, their fading, and what they cost in memory.
//!
//! The book keeps one sorted set per prefix ("abc" is in the sets of "a",
//! "ab" and "abc"), so a hint is one `ZRANGE … REV` but an entry costs one
//! skiplist node, dict entry and string per character. Here an entry is one
//! 72-byte node (its content inside when at most 22 bytes, else in a block
//! of its own), and a hint searches the one structure:
//!
//! - an AVL tree keyed by content bytes, its nodes in a chunked arena
//!   (`common/tree.rs`: indices `u32`, no allocation per node). The entries
//!   under a prefix are a contiguous range of it.
//! - each node also holds, for its subtree, its size, its best weight and
//!   which of (left subtree, node, right subtree) holds it, and its earliest
//!   fade time and which of the three holds that ([`Suggestion`]'s
//!   summary). Ties of weight go to the right (the greater content, as
//!   `ZRANGE … REV` gives), ties of fade time to the left (the smaller
//!   content), so neither comparison ever reads a content.
//! - a hint is a best-first search over pieces of the range (`search.rs`):
//!   N hints, skipping K faded entries on the way, cost O((N + K) log M)
//!   node visits, however many entries the prefix holds.
//! - fading is a descent on the earliest fade times: O(log M) for the next
//!   entry to fade, O(log M) to remove it.
//!
//! A removed node's slot is filled with the arena's last node, so the arena
//! always holds exactly the entries and gives its memory back as they go.
//!
//! Hints are also kept (`hints.rs`): the answers to the last prefixes
//! hinted, good until a write that can change them or the first fade among
//! their entries. Each write here tells them.
//!
//! Weights follow `ZINCRBY`: any `f64` but NaN (a result that would be NaN
//! is refused and changes nothing), -0.0 stored as 0.0. Fade times are
//! absolute Unix ms; an entry whose fade time is at or before `now` is no
//! longer hinted, and [`Suggestions::fade`] removes it.

#![forbid(unsafe_code)]

use super::hints::Kept;
use crate::common::memory::block;
use crate::common::tree::{Arena, Item, Node, Tree, NIL};
use std::cell::Cell;
use std::cmp::Ordering;
use std::mem::size_of;

/// The most entries a key holds: every node index is a `u32` below [`NIL`].
pub const MAX_ENTRIES: usize = (u32::MAX - 1) as usize;

/// Nodes per arena chunk: as many as fill 64 KiB, one of the allocator's
/// size classes (1,024 nodes of 72 bytes would take a block of 80 KiB).
/// Growth never copies more than one chunk.
const CHUNK: usize = 65_536 / size_of::<Node<Suggestion>>();

/// `Node::flags`: the entry has a fade time.
const FADES: u8 = 1;
/// Some entry of the subtree has a fade time (`first_fade` is set).
const ANY_FADES: u8 = 1 << 1;
/// Where the subtree's best weight is: the node itself, or a child.
pub(super) const BEST_MASK: u8 = 0b11 << 2;
const BEST_SELF: u8 = 0;
pub(super) const BEST_LEFT: u8 = 1 << 2;
pub(super) const BEST_RIGHT: u8 = 2 << 2;
/// Where the subtree's earliest fade time is.
const FIRST_MASK: u8 = 0b11 << 4;
const FIRST_SELF: u8 = 0;
const FIRST_LEFT: u8 = 1 << 4;
const FIRST_RIGHT: u8 = 2 << 4;

/// The longest content kept inside its node.
const INLINE: usize = 22;

/// An entry's content: inside the node when short (most words and phrases
/// are), else in a block of its own.
#[derive(Clone, Debug)]
pub(super) enum Content {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Content {
    fn new(content: &[u8]) -> Content {
        let mut bytes = [0; INLINE];
        match bytes.get_mut(..content.len()) {
            Some(inline) => {
                inline.copy_from_slice(content);
                Content::Inline {
                    // At most INLINE.
                    len: content.len() as u8,
                    bytes,
                }
            }
            None => Content::Heap(content.into()),
        }
    }

    fn from_vec(content: Vec<u8>) -> Content {
        if content.len() <= INLINE {
            Content::new(&content)
        } else {
            Content::Heap(content.into_boxed_slice())
        }
    }

    fn into_vec(self) -> Vec<u8> {
        match self {
            Content::Inline { .. } => self.to_vec(),
            Content::Heap(bytes) => bytes.into_vec(),
        }
    }

    /// The allocator's block for it outside the node, if any.
    fn block(&self) -> usize {
        match self {
            Content::Inline { .. } => 0,
            Content::Heap(bytes) => block(bytes.len()),
        }
    }
}

impl std::ops::Deref for Content {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Content::Inline { len, bytes } => bytes.get(..*len as usize).unwrap_or_default(),
            Content::Heap(bytes) => bytes,
        }
    }
}

/// An entry as the tree holds it, with the figures of its subtree (flags
/// in its node: [`FADES`] for its own fade time, the others for its
/// subtree's). After the node's links, in C order: 72 bytes a node.
#[derive(Clone, Debug)]
#[repr(C)]
pub struct Suggestion {
    pub(super) content: Content,
    pub(super) weight: f64,
    /// The best weight in this subtree.
    pub(super) best: f64,
    /// This entry's fade time, when the flags have [`FADES`].
    fade: i64,
    /// The earliest fade time in this subtree, when the flags have
    /// [`ANY_FADES`].
    first_fade: i64,
}

/// What a node keeps of its subtree: its best weight, its earliest fade
/// time, and in `flags` whether any entry of it fades and where the best
/// and the earliest are ([`ANY_FADES`], [`BEST_MASK`], [`FIRST_MASK`]).
pub struct Figures {
    best: f64,
    first_fade: i64,
    flags: u8,
}

impl Item for Suggestion {
    type Summary = Figures;
    const CHUNK: usize = CHUNK;
    const ARENA: Arena = Arena::Blocks;
    const MOST: u32 = MAX_ENTRIES as u32;

    fn order(&self, other: &Self) -> Ordering {
        (*self.content).cmp(&other.content)
    }

    #[inline]
    fn summarise(
        node: &Node<Self>,
        left: Option<&Node<Self>>,
        right: Option<&Node<Self>>,
    ) -> Figures {
        let (mut best, mut best_in) = (node.weight, BEST_SELF);
        let mut any = node.flags & FADES != 0;
        let (mut first, mut first_in) = (node.fade, FIRST_SELF);
        if let Some(child) = left {
            // Ties go right: the node beats its left subtree.
            if child.best.total_cmp(&best).is_gt() {
                (best, best_in) = (child.best, BEST_LEFT);
            }
            // Ties go left.
            if child.flags & ANY_FADES != 0 && (!any || child.first_fade <= first) {
                (any, first, first_in) = (true, child.first_fade, FIRST_LEFT);
            }
        }
        if let Some(child) = right {
            if child.best.total_cmp(&best).is_ge() {
                (best, best_in) = (child.best, BEST_RIGHT);
            }
            if child.flags & ANY_FADES != 0 && (!any || child.first_fade < first) {
                (any, first, first_in) = (true, child.first_fade, FIRST_RIGHT);
            }
        }
        let any = if any { ANY_FADES } else { 0 };
        Figures {
            best,
            first_fade: first,
            flags: any | best_in | first_in,
        }
    }

    /// `true` when the best weight or earliest fade time (which the parent
    /// reads) changed.
    #[inline]
    fn keep(node: &mut Node<Self>, figures: Figures) -> bool {
        let any = figures.flags & ANY_FADES;
        let same = node.best.to_bits() == figures.best.to_bits()
            && node.flags & ANY_FADES == any
            && (any == 0 || node.first_fade == figures.first_fade);
        node.best = figures.best;
        node.first_fade = figures.first_fade;
        node.flags = (node.flags & FADES) | figures.flags;
        !same
    }

    fn allocates(&self) -> bool {
        self.content.block() > 0
    }
}

/// A node of its own for an entry.
fn leaf(content: Content, weight: f64, fade: Option<i64>) -> Node<Suggestion> {
    let (fade, flags) = match fade {
        Some(at) => (at, FADES),
        None => (0, 0),
    };
    let entry = Suggestion {
        content,
        weight,
        best: weight,
        fade,
        first_fade: fade,
    };
    Node::leaf(entry, flags)
}

impl Node<Suggestion> {
    pub(super) fn fade_at(&self) -> Option<i64> {
        (self.flags & FADES != 0).then_some(self.fade)
    }

    /// Faded by `now`: no longer hinted, removed by the next fade.
    pub(super) fn faded(&self, now: i64) -> bool {
        self.flags & FADES != 0 && self.fade <= now
    }
}

/// Why a write changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The weight (or the sum of the increment and the weight) is NaN.
    NotANumber,
    /// Entries have content: an empty one is refused.
    EmptyContent,
    /// The key already holds [`MAX_ENTRIES`] entries.
    Full,
}

/// One entry as iteration yields it: content, weight, fade time.
pub type Entry<'a> = (&'a [u8], f64, Option<i64>);

/// A weight as stored: NaN refused, -0.0 made 0.0.
fn clean(weight: f64) -> Result<f64, WriteError> {
    if weight.is_nan() {
        Err(WriteError::NotANumber)
    } else if weight == 0.0 {
        Ok(0.0)
    } else {
        Ok(weight)
    }
}

/// The suggestions of one key.
#[derive(Clone, Debug, Default)]
pub struct Suggestions {
    pub(super) entries: Tree<Suggestion>,
    /// The allocator's blocks for the contents not inside their nodes
    /// (see [`block`]; the tree counts them).
    content_bytes: usize,
    pub(super) hints: Kept,
}

impl Suggestions {
    /// Suggestions read back from storage, in any order (content order is
    /// the fastest: no sort). Refused, with the reason, when a content is
    /// empty or repeated, a weight is NaN, or there are more than
    /// [`MAX_ENTRIES`]. O(M) for sorted input, O(M log M) otherwise.
    pub fn from_entries(
        entries: impl IntoIterator<Item = (Vec<u8>, f64, Option<i64>)>,
    ) -> Result<Self, &'static str> {
        let mut nodes: Vec<Node<Suggestion>> = Vec::new();
        let mut sorted = true;
        for (content, weight, fade) in entries {
            if nodes.len() >= MAX_ENTRIES {
                return Err("too many entries");
            }
            if content.is_empty() {
                return Err("empty content");
            }
            let weight = clean(weight).map_err(|_| "weight is not a number")?;
            if let Some(last) = nodes.last() {
                match (*last.content).cmp(&content[..]) {
                    Ordering::Less => {}
                    Ordering::Equal => return Err("repeated content"),
                    Ordering::Greater => sorted = false,
                }
            }
            nodes.push(leaf(Content::from_vec(content), weight, fade));
        }
        if !sorted {
            nodes.sort_unstable_by(|a, b| a.order(b));
            if nodes
                .windows(2)
                .any(|pair| *pair[0].content == *pair[1].content)
            {
                return Err("repeated content");
            }
        }
        let content_bytes = nodes.iter().map(|node| node.content.block()).sum();
        Ok(Suggestions {
            entries: Tree::from_sorted(nodes).ok_or("too many entries")?,
            content_bytes,
            hints: Kept::default(),
        })
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds `increment` to the weight of `content`, which is created at
    /// `increment` when absent, and returns the new weight (`ZINCRBY`). A
    /// NaN result is refused and changes nothing. `Some(at)` sets the
    /// entry's fade time; `None` keeps it (a new entry never fades).
    /// O(log M).
    pub fn feed(
        &mut self,
        content: &[u8],
        increment: f64,
        fade_at: Option<i64>,
    ) -> Result<f64, WriteError> {
        self.upsert(content, fade_at, |old| {
            clean(old.unwrap_or(0.0) + increment)
        })
    }

    /// Sets the weight of `content` (created when absent); the fade time as
    /// in [`Suggestions::feed`]. O(log M).
    pub fn set(
        &mut self,
        content: &[u8],
        weight: f64,
        fade_at: Option<i64>,
    ) -> Result<f64, WriteError> {
        let weight = clean(weight)?;
        self.upsert(content, fade_at, |_| Ok(weight))
    }

    #[cfg(test)]
    /// Sets (`Some`) or clears (`None`) the fade time of `content`: `false`
    /// when it is absent. O(log M).
    pub fn set_fade(&mut self, content: &[u8], fade_at: Option<i64>) -> bool {
        let found = self.entries.upsert(
            |entry| content.cmp(&entry.content),
            |node| {
                match fade_at {
                    Some(time) => {
                        node.fade = time;
                        node.flags |= FADES;
                    }
                    None => node.flags &= !FADES,
                }
                Ok(true)
            },
            || Err(()),
        );
        let Ok(Some((at, _))) = found else {
            return false;
        };
        // As a weight: a new fade time may bring back an entry a search
        // passed over as faded, above an answer's last entry.
        let weight = self.entries.node(at).weight;
        self.written(content, at, Some(weight));
        true
    }

    #[cfg(test)]
    /// The weight of `content`, if present. O(log M).
    pub fn weight(&self, content: &[u8]) -> Option<f64> {
        self.get(content).map(|(weight, _)| weight)
    }

    /// The fade time of `content`: `None` when it is absent or never fades.
    /// O(log M).
    pub fn fade_at(&self, content: &[u8]) -> Option<i64> {
        self.get(content).and_then(|(_, fade)| fade)
    }

    /// The weight and fade time of `content`, if present. O(log M).
    pub fn get(&self, content: &[u8]) -> Option<(f64, Option<i64>)> {
        let at = self.entries.find(|entry| content.cmp(&entry.content))?;
        let node = self.entries.node(at);
        Some((node.weight, node.fade_at()))
    }

    /// Removes `content`: `false` when it was absent. O(log M).
    pub fn remove(&mut self, content: &[u8]) -> bool {
        self.remove_where(|_, node| content.cmp(&node.content))
            .is_some()
    }

    /// Removes up to `limit` entries whose fade time is at or before `now`,
    /// earliest first (equal times in content order), and returns their
    /// contents. O(log M) each.
    pub fn fade(&mut self, now: i64, limit: usize) -> Vec<Vec<u8>> {
        let mut faded = Vec::new();
        while faded.len() < limit {
            match self.next_fade() {
                Some(first) if first <= now => {}
                _ => break,
            }
            let Some(mut rank) = self.first_fading_rank() else {
                break;
            };
            let removed = self.remove_where(|tree, node| {
                let below = tree.size(node.left());
                let order = rank.cmp(&below);
                if order.is_gt() {
                    rank -= below + 1;
                }
                order
            });
            match removed {
                Some(node) => faded.push(node.item.content.into_vec()),
                None => break,
            }
        }
        faded
    }

    /// How many entries have a fade time at or before `now` (faded, not yet
    /// removed). O(K log M) for K of them: only subtrees whose earliest fade
    /// time has passed are visited.
    pub fn due(&self, now: i64) -> usize {
        let mut count = 0;
        let mut stack = Vec::new();
        if !self.entries.is_empty() {
            stack.push(self.entries.root());
        }
        while let Some(at) = stack.pop() {
            let node = self.entries.node(at);
            if node.flags & ANY_FADES == 0 || node.first_fade > now {
                continue;
            }
            if node.faded(now) {
                count += 1;
            }
            stack.extend(
                [node.left(), node.right()]
                    .into_iter()
                    .filter(|&child| child != NIL),
            );
        }
        count
    }

    /// The earliest fade time of any entry. O(1).
    pub fn next_fade(&self) -> Option<i64> {
        if self.entries.is_empty() {
            return None;
        }
        let root = self.entries.node(self.entries.root());
        (root.flags & ANY_FADES != 0).then_some(root.first_fade)
    }

    /// Every entry in content order, for persistence and digests.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> + Clone + '_ {
        self.entries
            .iter()
            .map(|node| (&*node.content, node.weight, node.fade_at()))
    }

    /// Bytes held, for `MEMORY USAGE`: every block allocated, as the
    /// allocator rounds it (see [`block`]): the value itself, the arena's
    /// chunks and the list of them, each content not inside its node, and
    /// the kept hints. O(M / CHUNK + answers kept).
    pub fn memory(&self) -> usize {
        block(size_of::<Self>())
            + self.entries.memory(block)
            + self.content_bytes
            + self.hints.memory()
    }

    /// Allocations owned, for the server's lazy-free decision: the chunks,
    /// the list of them, the contents not inside their nodes, the kept
    /// hints'.
    pub fn allocations(&self) -> usize {
        self.entries.allocations() + self.hints.allocations()
    }

    /// Sets the weight of `content` to `weigh(old weight)` (creating it when
    /// absent), and its fade time when `fade` is `Some`. One descent.
    fn upsert(
        &mut self,
        content: &[u8],
        fade: Option<i64>,
        weigh: impl Fn(Option<f64>) -> Result<f64, WriteError>,
    ) -> Result<f64, WriteError> {
        if content.is_empty() {
            return Err(WriteError::EmptyContent);
        }
        // What the write leaves, and the block of a new content.
        let (weight, outside) = (Cell::new(0.0), Cell::new(0));
        let done = self.entries.upsert(
            |entry| content.cmp(&entry.content),
            |node| {
                node.weight = weigh(Some(node.weight))?;
                weight.set(node.weight);
                if let Some(time) = fade {
                    node.fade = time;
                    node.flags |= FADES;
                }
                Ok(true)
            },
            || {
                weight.set(weigh(None)?);
                let added = Content::new(content);
                outside.set(added.block());
                Ok(leaf(added, weight.get(), fade))
            },
        )?;
        // `None`: the key holds MAX_ENTRIES already.
        let (at, _) = done.ok_or(WriteError::Full)?;
        self.content_bytes += outside.get();
        self.written(content, at, Some(weight.get()));
        Ok(weight.get())
    }

    /// Removes the entry `seek` leads to (see [`Tree::remove`]) and returns
    /// its node; the kept answers follow.
    fn remove_where(
        &mut self,
        seek: impl FnMut(&Tree<Suggestion>, &Node<Suggestion>) -> Ordering,
    ) -> Option<Node<Suggestion>> {
        let removed = self.entries.remove(seek)?;
        self.written(&removed.node.content, removed.at, None);
        if let Some(from) = removed.moved {
            self.moved(from, removed.at);
        }
        let outside = removed.node.content.block();
        self.content_bytes = self.content_bytes.saturating_sub(outside);
        Some(removed.node)
    }

    /// The rank of the entry with the earliest fade time (the first in
    /// content order among equal times).
    fn first_fading_rank(&self) -> Option<u32> {
        let (mut at, mut base) = (self.entries.root(), 0);
        loop {
            if at == NIL {
                return None;
            }
            let node = self.entries.node(at);
            if node.flags & ANY_FADES == 0 {
                return None;
            }
            let rank = base + self.entries.size(node.left());
            match node.flags & FIRST_MASK {
                FIRST_LEFT => at = node.left(),
                FIRST_RIGHT => {
                    base = rank + 1;
                    at = node.right();
                }
                _ => return Some(rank),
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A fixed-seed xorshift: the same operations on every run.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        pub(crate) fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    impl Suggestions {
        /// Checks every invariant: the tree's (order, balance, every
        /// figure of every node, the arena holding exactly the linked
        /// nodes), each figure against its meaning, the entries' weights,
        /// the contents' bytes.
        pub(crate) fn check(&self) {
            self.entries.check();
            self.check_at(self.entries.root());
            let outside = self.iter().filter(|(c, _, _)| c.len() > INLINE);
            let bytes: usize = outside.clone().map(|(c, _, _)| block(c.len())).sum();
            assert_eq!(self.content_bytes, bytes);
            assert_eq!(
                self.entries.allocations(),
                1 + self.entries.chunks() + outside.count()
            );
        }

        fn check_at(&self, at: u32) {
            if at == NIL {
                return;
            }
            let node = self.entries.node(at);
            let (left, right) = (node.left(), node.right());
            self.check_at(left);
            self.check_at(right);
            assert!(!node.content.is_empty());
            assert!(!node.weight.is_nan());
            assert!(node.weight != 0.0 || node.weight.is_sign_positive(), "-0.0");
            // The best: the heaviest, the greatest content among equals.
            let mut candidates = vec![(node.weight, 1u8)];
            if left != NIL {
                candidates.push((self.entries.node(left).best, 0));
            }
            if right != NIL {
                candidates.push((self.entries.node(right).best, 2));
            }
            let &(best, side) = candidates
                .iter()
                .max_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
                .unwrap();
            assert_eq!(node.best.to_bits(), best.to_bits());
            let expected = [BEST_LEFT, BEST_SELF, BEST_RIGHT][side as usize];
            assert_eq!(node.flags & BEST_MASK, expected);
            // The earliest fade: the smallest content among equals.
            let mut fades = Vec::new();
            if left != NIL && self.entries.node(left).flags & ANY_FADES != 0 {
                fades.push((self.entries.node(left).first_fade, 0u8));
            }
            if let Some(at) = node.fade_at() {
                fades.push((at, 1));
            }
            if right != NIL && self.entries.node(right).flags & ANY_FADES != 0 {
                fades.push((self.entries.node(right).first_fade, 2));
            }
            match fades.iter().min() {
                None => assert_eq!(node.flags & ANY_FADES, 0),
                Some(&(first, side)) => {
                    assert_ne!(node.flags & ANY_FADES, 0);
                    assert_eq!(node.first_fade, first);
                    let expected = [FIRST_LEFT, FIRST_SELF, FIRST_RIGHT][side as usize];
                    assert_eq!(node.flags & FIRST_MASK, expected);
                }
            }
        }
    }

    pub(crate) fn hints<'a>(
        tree: &'a Suggestions,
        prefix: &str,
        count: usize,
    ) -> Vec<(&'a str, f64)> {
        tree.hint(prefix.as_bytes(), count, 0)
            .into_iter()
            .map(|(c, w)| (std::str::from_utf8(c).unwrap(), w))
            .collect()
    }

    pub(crate) fn of(entries: &[(&str, f64)]) -> Suggestions {
        let mut tree = Suggestions::default();
        for &(content, weight) in entries {
            tree.set(content.as_bytes(), weight, None).unwrap();
        }
        tree.check();
        tree
    }

    #[test]
    fn an_empty_key_hints_nothing() {
        let mut tree = Suggestions::default();
        assert!(tree.is_empty());
        assert_eq!(tree.len(), 0);
        assert!(tree.hint(b"", 10, 0).is_empty());
        assert!(tree.hint(b"a", 10, 0).is_empty());
        assert_eq!(tree.weight(b"a"), None);
        assert!(!tree.remove(b"a"));
        assert!(tree.fade(i64::MAX, 10).is_empty());
        assert_eq!(tree.next_fade(), None);
        assert_eq!(tree.iter().count(), 0);
        tree.check();
    }

    #[test]
    fn feed_adds_to_the_weight_and_creates_at_the_increment() {
        let mut tree = Suggestions::default();
        assert_eq!(tree.feed(b"redis", 1.0, None), Ok(1.0));
        assert_eq!(tree.feed(b"redis", 2.5, None), Ok(3.5));
        assert_eq!(tree.feed(b"rust", -2.0, None), Ok(-2.0));
        assert_eq!(tree.weight(b"redis"), Some(3.5));
        assert_eq!(tree.weight(b"rust"), Some(-2.0));
        assert_eq!(tree.weight(b"re"), None);
        assert_eq!(tree.len(), 2);
        assert_eq!(tree.set(b"redis", 10.0, None), Ok(10.0));
        assert_eq!(tree.weight(b"redis"), Some(10.0));
        assert_eq!(tree.feed(b"", 1.0, None), Err(WriteError::EmptyContent));
        assert_eq!(tree.set(b"", 1.0, None), Err(WriteError::EmptyContent));
        tree.check();
    }

    #[test]
    fn zero_is_one_zero_and_infinities_are_weights() {
        let mut tree = Suggestions::default();
        assert_eq!(tree.set(b"a", -0.0, None), Ok(0.0));
        assert!(tree.weight(b"a").unwrap().is_sign_positive());
        assert_eq!(tree.feed(b"b", -0.0, None), Ok(0.0));
        assert!(tree.weight(b"b").unwrap().is_sign_positive());
        assert_eq!(tree.feed(b"c", 1.0, None), Ok(1.0));
        assert_eq!(tree.feed(b"c", -1.0, None), Ok(0.0));
        // Equal zeros: content descending.
        assert_eq!(
            tree.hint(b"", 10, 0),
            [(&b"c"[..], 0.0), (b"b", 0.0), (b"a", 0.0)]
        );
        assert_eq!(tree.feed(b"up", f64::INFINITY, None), Ok(f64::INFINITY));
        assert_eq!(tree.feed(b"up", 5.0, None), Ok(f64::INFINITY));
        assert_eq!(
            tree.set(b"down", f64::NEG_INFINITY, None),
            Ok(f64::NEG_INFINITY)
        );
        assert_eq!(tree.set(b"max", f64::MAX, None), Ok(f64::MAX));
        let all = tree.hint(b"", 10, 0);
        assert_eq!(all.first(), Some(&(&b"up"[..], f64::INFINITY)));
        assert_eq!(all.get(1), Some(&(&b"max"[..], f64::MAX)));
        assert_eq!(all.last(), Some(&(&b"down"[..], f64::NEG_INFINITY)));
        tree.check();
    }

    #[test]
    fn a_nan_is_refused_and_changes_nothing() {
        let mut tree = Suggestions::default();
        tree.feed(b"up", f64::INFINITY, Some(100)).unwrap();
        assert_eq!(
            tree.feed(b"up", f64::NEG_INFINITY, Some(7)),
            Err(WriteError::NotANumber)
        );
        assert_eq!(tree.get(b"up"), Some((f64::INFINITY, Some(100))));
        assert_eq!(
            tree.feed(b"up", f64::NAN, None),
            Err(WriteError::NotANumber)
        );
        assert_eq!(
            tree.set(b"up", f64::NAN, Some(1)),
            Err(WriteError::NotANumber)
        );
        assert_eq!(tree.get(b"up"), Some((f64::INFINITY, Some(100))));
        // Nor is a NaN entry created.
        assert_eq!(
            tree.feed(b"new", f64::NAN, None),
            Err(WriteError::NotANumber)
        );
        assert_eq!(
            tree.set(b"new", f64::NAN, None),
            Err(WriteError::NotANumber)
        );
        assert_eq!(tree.weight(b"new"), None);
        assert_eq!(tree.len(), 1);
        tree.check();
    }

    #[test]
    fn fade_times_follow_the_writes() {
        let mut tree = Suggestions::default();
        tree.feed(b"a", 1.0, None).unwrap();
        assert_eq!(tree.fade_at(b"a"), None);
        assert_eq!(tree.get(b"a"), Some((1.0, None)));
        tree.feed(b"a", 1.0, Some(500)).unwrap();
        assert_eq!(tree.fade_at(b"a"), Some(500));
        // None keeps it; Some refreshes it, later or earlier.
        tree.feed(b"a", 1.0, None).unwrap();
        tree.set(b"a", 9.0, None).unwrap();
        assert_eq!(tree.get(b"a"), Some((9.0, Some(500))));
        tree.feed(b"a", 1.0, Some(300)).unwrap();
        assert_eq!(tree.next_fade(), Some(300));
        assert!(tree.set_fade(b"a", None));
        assert_eq!(tree.next_fade(), None);
        assert!(tree.set_fade(b"a", Some(i64::MIN)));
        assert_eq!(tree.fade_at(b"a"), Some(i64::MIN));
        assert!(!tree.set_fade(b"b", Some(1)));
        assert_eq!(tree.fade_at(b"b"), None);
        tree.check();
    }

    #[test]
    fn fade_removes_the_earliest_first_up_to_the_limit() {
        let mut tree = Suggestions::default();
        tree.set(b"d", 1.0, Some(30)).unwrap();
        tree.set(b"c", 1.0, Some(10)).unwrap();
        tree.set(b"b", 1.0, Some(20)).unwrap();
        tree.set(b"a", 1.0, Some(20)).unwrap();
        tree.set(b"e", 1.0, None).unwrap();
        tree.set(b"f", 1.0, Some(i64::MAX)).unwrap();
        assert_eq!(tree.next_fade(), Some(10));
        assert!(tree.fade(9, 10).is_empty());
        assert_eq!(tree.fade(25, 2), [b"c".to_vec(), b"a".to_vec()]);
        tree.check();
        assert_eq!(tree.next_fade(), Some(20));
        assert_eq!(tree.fade(25, 10), [b"b".to_vec()]);
        assert!(tree.fade(100, 0).is_empty());
        assert_eq!(tree.fade(100, 10), [b"d".to_vec()]);
        assert_eq!(tree.next_fade(), Some(i64::MAX));
        assert_eq!(tree.fade(i64::MAX, 10), [b"f".to_vec()]);
        assert_eq!(tree.next_fade(), None);
        assert_eq!(tree.len(), 1);
        tree.check();
    }

    #[test]
    fn iteration_is_in_content_order() {
        let mut tree = of(&[("b", 2.0), ("a", 1.0), ("c", -0.0)]);
        tree.set_fade(b"b", Some(7));
        let all: Vec<_> = tree.iter().collect();
        assert_eq!(
            all,
            [
                (&b"a"[..], 1.0, None),
                (b"b", 2.0, Some(7)),
                (b"c", 0.0, None)
            ]
        );
    }

    fn entries(tree: &Suggestions) -> Vec<(Vec<u8>, f64, Option<i64>)> {
        tree.iter().map(|(c, w, f)| (c.to_vec(), w, f)).collect()
    }

    #[test]
    fn loads_in_any_order() {
        let mut rng = Rng(7);
        let mut sorted: Vec<(Vec<u8>, f64, Option<i64>)> = (0..3000)
            .map(|n| {
                let fade = (n % 3 == 0).then_some(rng.below(1000) as i64);
                (
                    format!("e{n:05}").into_bytes(),
                    (rng.below(50)) as f64,
                    fade,
                )
            })
            .collect();
        let forward = Suggestions::from_entries(sorted.clone()).unwrap();
        forward.check();
        assert_eq!(entries(&forward), sorted);
        let reverse = Suggestions::from_entries(sorted.iter().rev().cloned()).unwrap();
        reverse.check();
        assert_eq!(entries(&reverse), sorted);
        let mut shuffled = sorted.clone();
        for at in (1..shuffled.len()).rev() {
            shuffled.swap(at, rng.below(at as u64 + 1) as usize);
        }
        let random = Suggestions::from_entries(shuffled).unwrap();
        random.check();
        assert_eq!(entries(&random), sorted);
        assert_eq!(random.hint(b"", 5, 0), forward.hint(b"", 5, 0));
        assert_eq!(random.memory(), forward.memory());
        // A loaded key is written to as any other.
        let mut loaded = random;
        loaded.feed(b"e00001", 1.0, None).unwrap();
        loaded.remove(b"e02000");
        loaded.feed(b"new", 1.0, None).unwrap();
        loaded.check();
        sorted.truncate(0);
        assert!(Suggestions::from_entries(sorted).unwrap().is_empty());
    }

    #[test]
    fn loading_refuses_bad_entries() {
        let good = |c: &str| (c.as_bytes().to_vec(), 1.0, None);
        let load = |list: Vec<(Vec<u8>, f64, Option<i64>)>| Suggestions::from_entries(list).err();
        assert_eq!(load(vec![good("a"), good("a")]), Some("repeated content"));
        assert_eq!(
            load(vec![good("b"), good("c"), good("a"), good("c")]),
            Some("repeated content")
        );
        assert_eq!(
            load(vec![good("a"), (Vec::new(), 1.0, None)]),
            Some("empty content")
        );
        assert_eq!(
            load(vec![good("a"), (b"b".to_vec(), f64::NAN, None)]),
            Some("weight is not a number")
        );
        // -0.0 is loaded as 0.0; infinities as themselves.
        let tree = Suggestions::from_entries(vec![
            (b"a".to_vec(), -0.0, None),
            (b"b".to_vec(), f64::NEG_INFINITY, Some(-5)),
        ])
        .unwrap();
        tree.check();
        assert_eq!(tree.get(b"b"), Some((f64::NEG_INFINITY, Some(-5))));
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn memory_counts_every_block() {
        assert_eq!(size_of::<Content>(), 24);
        assert_eq!(size_of::<Node<Suggestion>>(), 72);
        // The kept hints add one pointer (none allocated until a hint).
        assert_eq!(size_of::<Suggestions>(), 48);
        assert_eq!(CHUNK, 910);
        let mut tree = Suggestions::default();
        let empty = block(size_of::<Suggestions>());
        assert_eq!(tree.memory(), empty);
        tree.feed(b"redis", 1.0, None).unwrap();
        // The list of chunks (4 × 24 bytes), a chunk of 4 nodes (288 bytes)
        // with the content inside.
        assert_eq!(tree.memory(), empty + 96 + 320);
        assert_eq!(tree.allocations(), 2);
        // 22 bytes fit in the node, 23 take a block.
        tree.feed("自动补全自动补全".as_bytes(), 1.0, None).unwrap();
        tree.feed(&[b'x'; 22], 1.0, None).unwrap();
        assert_eq!(tree.memory(), empty + 96 + 320 + 32);
        tree.feed(&[b'y'; 23], 1.0, None).unwrap();
        assert_eq!(tree.memory(), empty + 96 + 320 + 32 + 32);
        assert_eq!(tree.allocations(), 4);
        for n in 0..CHUNK + 1 {
            tree.feed(format!("{n:08}").as_bytes(), 1.0, None).unwrap();
        }
        // Two chunks, the second taken whole: 64 KiB each.
        assert_eq!(tree.entries.chunks(), 2);
        assert_eq!(tree.memory(), empty + 96 + 2 * 65_536 + 32 + 32);
        // The arena gives memory back as entries go.
        for n in 0..CHUNK + 1 {
            tree.remove(format!("{n:08}").as_bytes());
        }
        tree.check();
        assert_eq!(tree.entries.chunks(), 1);
        assert!(
            tree.memory() <= empty + 96 + 1024 + 32 + 32,
            "{}",
            tree.memory()
        );
        assert_eq!(tree.allocations(), 1 + 1 + 2);
    }

    /// Thousands of random operations against a plain map, with every
    /// invariant checked as they go: short contents from a small alphabet
    /// with a Chinese character (many share prefixes, many are prefixes of
    /// others), weights with many ties.
    #[test]
    fn matches_a_model() {
        run_model(0x9e37_79b9_7f4a_7c15, &["a", "b", "c", "中"], 5, 40_000, 0);
    }

    /// The same, with writes outnumbering removals: a key of a few thousand
    /// entries, its arena over several chunks.
    #[test]
    fn matches_a_model_over_many_chunks() {
        run_model(
            0x2545_f491_4f6c_dd1d,
            &["a", "b", "c", "d", "e", "f", "中", "文"],
            6,
            30_000,
            12,
        );
    }

    /// `seed` for the operations; contents of 1 to `longest` of `alphabet`;
    /// `steps` operations, `writes` / (12 + `writes`) of them extra feeds.
    fn run_model(seed: u64, alphabet: &[&str], longest: u64, steps: usize, writes: u64) {
        type Model = BTreeMap<Vec<u8>, (f64, Option<i64>)>;
        fn expected_hints(
            model: &Model,
            prefix: &[u8],
            count: usize,
            now: i64,
        ) -> Vec<(Vec<u8>, f64)> {
            let mut all: Vec<_> = model
                .iter()
                .filter(|(c, (_, f))| c.starts_with(prefix) && !f.is_some_and(|f| f <= now))
                .map(|(c, (w, _))| (c.clone(), *w))
                .collect();
            all.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
            all.truncate(count);
            all
        }
        let weights = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.0,
            0.5,
            3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut rng = Rng(seed);
        let content = |rng: &mut Rng| {
            let len = 1 + rng.below(longest);
            (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect::<String>()
                .into_bytes()
        };
        let mut tree = Suggestions::default();
        let mut model = Model::new();
        let mut most = 0;
        for step in 0..steps {
            let fade = match rng.below(4) {
                0 => Some(rng.below(100) as i64),
                _ => None,
            };
            match rng.below(12 + writes) {
                0..=3 | 12.. => {
                    let c = content(&mut rng);
                    let increment = weights[rng.below(weights.len() as u64) as usize];
                    let got = tree.feed(&c, increment, fade);
                    let old = model.get(&c).copied();
                    let sum = old.map_or(0.0, |(w, _)| w) + increment;
                    if sum.is_nan() {
                        assert_eq!(got, Err(WriteError::NotANumber));
                    } else {
                        let sum = if sum == 0.0 { 0.0 } else { sum };
                        assert_eq!(got.map(f64::to_bits), Ok(sum.to_bits()));
                        let fade = fade.or(old.and_then(|(_, f)| f));
                        model.insert(c, (sum, fade));
                    }
                }
                4 => {
                    let c = content(&mut rng);
                    let weight = weights[rng.below(weights.len() as u64) as usize];
                    let got = tree.set(&c, weight, fade);
                    if weight.is_nan() {
                        assert_eq!(got, Err(WriteError::NotANumber));
                    } else {
                        let old = model.get(&c).and_then(|&(_, f)| f);
                        model.insert(c, (weight + 0.0, fade.or(old)));
                    }
                }
                5 => {
                    let c = content(&mut rng);
                    assert_eq!(tree.remove(&c), model.remove(&c).is_some());
                }
                6 => {
                    let c = content(&mut rng);
                    let present = tree.set_fade(&c, fade);
                    assert_eq!(present, model.contains_key(&c));
                    if let Some(entry) = model.get_mut(&c) {
                        entry.1 = fade;
                    }
                }
                7..=9 => {
                    let mut prefix = content(&mut rng);
                    prefix.truncate(rng.below(4) as usize);
                    if std::str::from_utf8(&prefix).is_err() {
                        // A cut character: byte prefixes still work.
                        assert!(prefix.len() > 1 || prefix[0] >= 0x80);
                    }
                    let count = rng.below(12) as usize;
                    let now = rng.below(120) as i64 - 10;
                    let got: Vec<(Vec<u8>, f64)> = tree
                        .hint(&prefix, count, now)
                        .into_iter()
                        .map(|(c, w)| (c.to_vec(), w))
                        .collect();
                    let expected = expected_hints(&model, &prefix, count, now);
                    assert_eq!(got, expected, "step {step}");
                    // Kept answers (three prefixes at most, so they are
                    // replaced too) give the same, whatever came between.
                    let (kept, _): (Vec<(Vec<u8>, f64)>, _) = tree.hint_with(
                        &prefix,
                        count,
                        || now,
                        3,
                        |hints| {
                            assert_eq!(hints.len(), expected.len());
                            hints.map(|(c, w)| (c.to_vec(), w)).collect()
                        },
                    );
                    assert_eq!(kept, expected, "step {step}, kept");
                    let (alone, _): (Vec<Vec<u8>>, _) = tree.hint_with(
                        &prefix,
                        count,
                        || now,
                        3,
                        |hints| {
                            let (copied, rest) = hints.contents();
                            copied.chain(rest).map(<[u8]>::to_vec).collect()
                        },
                    );
                    assert!(
                        alone.iter().eq(expected.iter().map(|(c, _)| c)),
                        "step {step}, text"
                    );
                    tree.check_kept();
                    let under = model.keys().filter(|c| c.starts_with(&prefix)).count();
                    assert_eq!(tree.count(&prefix), under);
                }
                10 => {
                    let now = rng.below(100) as i64;
                    let limit = rng.below(4) as usize;
                    let mut due: Vec<_> = model
                        .iter()
                        .filter_map(|(c, &(_, f))| f.filter(|&f| f <= now).map(|f| (f, c.clone())))
                        .collect();
                    due.sort();
                    due.truncate(limit);
                    let expected: Vec<Vec<u8>> = due.into_iter().map(|(_, c)| c).collect();
                    for c in &expected {
                        model.remove(c);
                    }
                    assert_eq!(tree.fade(now, limit), expected, "step {step}");
                }
                _ => {
                    let c = content(&mut rng);
                    assert_eq!(tree.get(&c), model.get(&c).copied());
                    let next = model.values().filter_map(|&(_, f)| f).min();
                    assert_eq!(tree.next_fade(), next);
                    let now = rng.below(100) as i64;
                    let due = model
                        .values()
                        .filter(|&&(_, f)| f.is_some_and(|f| f <= now))
                        .count();
                    assert_eq!(tree.due(now), due, "step {step}");
                }
            }
            assert_eq!(tree.len(), model.len());
            most = most.max(model.len());
            if step.is_multiple_of(97) {
                tree.check();
                let listed: Vec<_> = tree.iter().map(|(c, w, f)| (c.to_vec(), (w, f))).collect();
                let modelled: Vec<_> = model.iter().map(|(c, &v)| (c.clone(), v)).collect();
                assert_eq!(listed, modelled);
            }
            if step % 5000 == 4999 {
                // A save and load round trip, in reverse order.
                let mut saved = entries(&tree);
                saved.reverse();
                tree = Suggestions::from_entries(saved).unwrap();
                tree.check();
            }
        }
        // Then everything removed, in random order: the arena shrinks
        // through its chunks.
        let mut left: Vec<Vec<u8>> = model.keys().cloned().collect();
        eprintln!(
            "model run {seed:x}: at most {most} entries, {} at the end",
            left.len()
        );
        while !left.is_empty() {
            let at = rng.below(left.len() as u64) as usize;
            let c = left.swap_remove(at);
            assert!(tree.remove(&c));
            if left.len().is_multiple_of(97) {
                tree.check();
                assert_eq!(tree.len(), left.len());
            }
        }
        assert_eq!(tree.memory(), block(size_of::<Suggestions>()));
    }

    /// Contents for the measurements: English-like words (letters at their
    /// English frequencies, 3 to 12 of them) or Chinese phrases (2 to 12
    /// characters of 3,500, drawn by Zipf's law), with Zipf weights.
    struct Corpus {
        rng: Rng,
        chinese: bool,
        /// Cumulative weights of the letters or characters.
        cumulative: Vec<f64>,
    }

    impl Corpus {
        fn new(chinese: bool, seed: u64) -> Corpus {
            let weights: Vec<f64> = if chinese {
                (0..3500).map(|rank| 1.0 / (rank as f64 + 1.0)).collect()
            } else {
                vec![
                    8.2, 1.5, 2.8, 4.3, 12.7, 2.2, 2.0, 6.1, 7.0, 0.15, 0.77, 4.0, 2.4, 6.7, 7.5,
                    1.9, 0.095, 6.0, 6.3, 9.1, 2.8, 0.98, 2.4, 0.15, 2.0, 0.074,
                ]
            };
            let mut sum = 0.0;
            let cumulative = weights
                .iter()
                .map(|w| {
                    sum += w;
                    sum
                })
                .collect();
            Corpus {
                rng: Rng(seed),
                chinese,
                cumulative,
            }
        }

        fn symbol(&mut self) -> char {
            let total = self.cumulative.last().copied().unwrap_or(1.0);
            let x = (self.rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
            let rank = self.cumulative.partition_point(|&c| c < x) as u32;
            if self.chinese {
                char::from_u32(0x4e00 + rank).unwrap()
            } else {
                char::from(b'a' + rank as u8)
            }
        }

        fn content(&mut self, chars: Option<u64>) -> Vec<u8> {
            let len = chars.unwrap_or_else(|| {
                if self.chinese {
                    2 + self.rng.below(11)
                } else {
                    // 3 to 12, most near 7.
                    3 + (self.rng.below(6) + self.rng.below(5))
                }
            });
            (0..len)
                .map(|_| self.symbol())
                .collect::<String>()
                .into_bytes()
        }

        /// A Zipf weight for a key of `m` entries: m / k for k uniform in
        /// 1..=m, an integer (ties are common, as counts are).
        fn weight(&mut self, m: u64) -> f64 {
            (m as f64 / (1 + self.rng.below(m)) as f64).floor()
        }
    }

    /// The first `chars` characters of `content`.
    fn first_chars(content: &[u8], chars: usize) -> &[u8] {
        let text = std::str::from_utf8(content).unwrap();
        let end = text
            .char_indices()
            .nth(chars)
            .map_or(text.len(), |(at, _)| at);
        &content[..end]
    }

    fn nanos_per(start: std::time::Instant, ops: usize) -> f64 {
        start.elapsed().as_nanos() as f64 / ops as f64
    }

    /// The best of three runs of `run` (which does `ops` operations), in
    /// ns an operation: the machine is shared, the slower runs are noise.
    fn best_of_3(ops: usize, mut run: impl FnMut()) -> f64 {
        (0..3)
            .map(|_| {
                let start = std::time::Instant::now();
                run();
                nanos_per(start, ops)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// `cargo test --release --lib autocomplete -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn measure() {
        use std::hint::black_box;
        use std::time::Instant;
        for chinese in [false, true] {
            for m in [10_000usize, 100_000, 1_000_000] {
                let mut corpus = Corpus::new(chinese, 0x1234_5678 + m as u64);
                let mut tree = Suggestions::default();
                let mut contents = Vec::with_capacity(m);
                let start = Instant::now();
                while tree.len() < m {
                    let c = corpus.content(None);
                    let w = corpus.weight(m as u64);
                    if tree.weight(&c).is_none() {
                        tree.set(&c, w, None).unwrap();
                        contents.push(c);
                    }
                }
                let build = nanos_per(start, m);
                tree.check();
                let kind = if chinese {
                    "Chinese phrases"
                } else {
                    "English-like words"
                };
                let bytes: usize = contents.iter().map(Vec::len).sum();
                println!(
                    "{kind}, {m} entries ({:.1} bytes each): {:.1} bytes an entry by memory(); \
                     built by set() at {build:.0} ns an entry",
                    bytes as f64 / m as f64,
                    tree.memory() as f64 / m as f64,
                );
                // Hints: count 10, prefixes of 1, 2, 4 characters of
                // random entries.
                for chars in [1, 2, 4] {
                    let prefixes: Vec<&[u8]> = (0..1000)
                        .map(|_| {
                            let c = &contents[corpus.rng.below(m as u64) as usize];
                            first_chars(c, chars)
                        })
                        .collect();
                    let under: usize = prefixes.iter().map(|p| tree.count(p)).sum();
                    let rounds = 30;
                    let hint = best_of_3(rounds * prefixes.len(), || {
                        for _ in 0..rounds {
                            for p in &prefixes {
                                black_box(tree.hint(black_box(p), 10, 0));
                            }
                        }
                    });
                    println!(
                        "  hint, {chars}-char prefix (avg {:.0} entries under it): {hint:.0} ns",
                        under as f64 / 1000.0,
                    );
                }
                // Feeds of 8-character words: present, then new ones.
                let present: Vec<Vec<u8>> = contents
                    .iter()
                    .filter(|c| std::str::from_utf8(c).unwrap().chars().count() == 8)
                    .take(10_000)
                    .cloned()
                    .collect();
                let feed_present = best_of_3(present.len(), || {
                    for c in &present {
                        black_box(tree.feed(c, 1.0, None).unwrap());
                    }
                });
                let mut fresh: Vec<Vec<u8>> = (0..10_000)
                    .map(|_| corpus.content(Some(8)))
                    .filter(|c| tree.weight(c).is_none())
                    .collect();
                fresh.sort();
                fresh.dedup();
                for at in (1..fresh.len()).rev() {
                    fresh.swap(at, corpus.rng.below(at as u64 + 1) as usize);
                }
                let (mut feed_new, mut remove) = (f64::INFINITY, f64::INFINITY);
                for _ in 0..3 {
                    let start = Instant::now();
                    for c in &fresh {
                        black_box(tree.feed(c, 1.0, None).unwrap());
                    }
                    feed_new = feed_new.min(nanos_per(start, fresh.len()));
                    let start = Instant::now();
                    for c in &fresh {
                        assert!(tree.remove(c));
                    }
                    remove = remove.min(nanos_per(start, fresh.len()));
                }
                println!(
                    "  feed of an 8-char entry: present {feed_present:.0} ns, new {feed_new:.0} ns; \
                     remove {remove:.0} ns"
                );
                // Save and load.
                let start = Instant::now();
                let saved: Vec<(Vec<u8>, f64, Option<i64>)> =
                    tree.iter().map(|(c, w, f)| (c.to_vec(), w, f)).collect();
                let save = nanos_per(start, m);
                let mut shuffled = saved.clone();
                let start = Instant::now();
                let loaded = Suggestions::from_entries(saved).unwrap();
                let load_sorted = nanos_per(start, m);
                assert_eq!(loaded.len(), m);
                drop(loaded);
                for at in (1..shuffled.len()).rev() {
                    shuffled.swap(at, corpus.rng.below(at as u64 + 1) as usize);
                }
                let start = Instant::now();
                let loaded = Suggestions::from_entries(shuffled).unwrap();
                let load_random = nanos_per(start, m);
                println!(
                    "  iterate (copying out) {save:.0} ns an entry; from_entries sorted \
                     {load_sorted:.0} ns, shuffled {load_random:.0} ns an entry; \
                     loaded: {:.1} bytes an entry",
                    loaded.memory() as f64 / m as f64
                );
                drop(loaded);
                // Fading: 10% of the entries fade, at random times; all
                // removed in rounds of 1,000.
                let fading = m / 10;
                for _ in 0..fading {
                    let c = &contents[corpus.rng.below(m as u64) as usize];
                    tree.set_fade(c, Some(corpus.rng.below(1_000_000) as i64));
                }
                let start = Instant::now();
                let mut faded = 0;
                loop {
                    let round = tree.fade(i64::MAX, 1000).len();
                    if round == 0 {
                        break;
                    }
                    faded += round;
                }
                println!(
                    "  fade: {:.0} ns an entry removed ({faded})",
                    nanos_per(start, faded)
                );
                // What a trie would hold: a node per distinct prefix.
                let mut nodes = 0usize;
                let mut first = std::collections::BTreeSet::new();
                let mut previous: Vec<char> = Vec::new();
                for (c, _, _) in tree.iter() {
                    let chars: Vec<char> = std::str::from_utf8(c).unwrap().chars().collect();
                    let shared = chars
                        .iter()
                        .zip(&previous)
                        .take_while(|(a, b)| a == b)
                        .count();
                    nodes += chars.len() - shared;
                    first.insert(chars[0]);
                    previous = chars;
                }
                println!(
                    "  a character trie: {:.2} nodes an entry, {} children at the root",
                    nodes as f64 / tree.len() as f64,
                    first.len()
                );
            }
        }
    }
}
