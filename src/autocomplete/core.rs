//! The suggestions of one AUTOCOMPLETE key, apart from the server: each
//! entry (its content, weight and optional fade time) stored once, and the
//! questions the commands ask of them.
//!
//! The book keeps one sorted set per prefix ("abc" is in the sets of "a",
//! "ab" and "abc"), so a hint is one `ZRANGE … REV` but an entry costs one
//! skiplist node, dict entry and string per character. Here an entry is one
//! 72-byte node (its content inside when at most 22 bytes, else in a block
//! of its own), and a hint searches the one structure:
//!
//! - an AVL tree keyed by content bytes, its nodes in a chunked arena
//!   (indices `u32`, no allocation per node). The entries under a prefix
//!   are a contiguous range of it.
//! - each node also holds, for its subtree, its size, its best weight and
//!   which of (left subtree, node, right subtree) holds it, and its earliest
//!   fade time and which of the three holds that. Ties of weight go to the
//!   right (the greater content, as `ZRANGE … REV` gives), ties of fade
//!   time to the left (the smaller content), so neither comparison ever
//!   reads a content.
//! - a hint is a best-first search over pieces of the range: one descent
//!   splits the range into O(log M) single nodes and whole subtrees, pushed
//!   on a heap by weight (a subtree by its best), then by rank (pieces never
//!   overlap, so ranks order them as their contents). The top piece, if a
//!   subtree, is split along the path to its best entry (each node passed
//!   and each subtree not taken pushed in turn) and the best comes out.
//!   N hints, skipping K faded entries on the way, cost O((N + K) log M)
//!   node visits, however many entries the prefix holds.
//! - fading is a descent on the earliest fade times: O(log M) for the next
//!   entry to fade, O(log M) to remove it.
//!
//! A removed node's slot is filled with the arena's last node, so the arena
//! always holds exactly the entries and gives its memory back as they go.
//!
//! Hints are also kept: the answers to the last prefixes hinted (a bounded
//! number, replaced by the clock algorithm), as node numbers and a copy of
//! their first contents, so a hint asked again costs a hash of its prefix,
//! not a search. An answer is good until the earliest fade time among its
//! own entries (entries left out were faded, and stay so while the clock
//! goes forward, or lighter, so whether they fade changes nothing), and
//! until a write that can change it: a write to an entry concerns only the
//! answers of that entry's prefixes (found by probing each of its prefixes,
//! O(length)), and of those only the answers holding the entry, those it
//! now outranks the last of, and those that held every entry under their
//! prefix. A node moved in the arena (see above) is renamed in the answers
//! holding it. Answers are never saved, copied or digested.
//!
//! Weights follow `ZINCRBY`: any `f64` but NaN (a result that would be NaN
//! is refused and changes nothing), -0.0 stored as 0.0. Fade times are
//! absolute Unix ms; an entry whose fade time is at or before `now` is no
//! longer hinted, and [`Suggestions::fade`] removes it.

#![forbid(unsafe_code)]

use crate::common::memory::block;
use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::mem::size_of;

/// No node (an empty subtree).
const NIL: u32 = u32::MAX;

/// The most entries a key holds: every node index is a `u32` below [`NIL`].
pub const MAX_ENTRIES: usize = (u32::MAX - 1) as usize;

/// Nodes per arena chunk: as many as fill 64 KiB, one of the allocator's
/// size classes (1,024 nodes of 72 bytes would take a block of 80 KiB).
/// Growth never copies more than one chunk.
const CHUNK: usize = 65_536 / size_of::<Node>();

/// Longest root-to-leaf path: an AVL tree of 2^32 nodes has under 47 levels.
const MAX_DEPTH: usize = 64;

/// `Node::flags`: the entry has a fade time.
const FADES: u8 = 1;
/// Some entry of the subtree has a fade time (`first_fade` is set).
const ANY_FADES: u8 = 1 << 1;
/// Where the subtree's best weight is: the node itself, or a child.
const BEST_MASK: u8 = 0b11 << 2;
const BEST_SELF: u8 = 0;
const BEST_LEFT: u8 = 1 << 2;
const BEST_RIGHT: u8 = 2 << 2;
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
enum Content {
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

/// A node of the tree: an entry and the figures of its subtree. In C
/// order, what a descent reads first: 72 bytes.
#[derive(Clone, Debug)]
#[repr(C)]
struct Node {
    content: Content,
    left: u32,
    right: u32,
    /// Entries in this subtree.
    size: u32,
    /// Levels in this subtree (a leaf has 1).
    height: u8,
    flags: u8,
    weight: f64,
    /// The best weight in this subtree.
    best: f64,
    /// This entry's fade time, when `flags` has [`FADES`].
    fade: i64,
    /// The earliest fade time in this subtree, when `flags` has
    /// [`ANY_FADES`].
    first_fade: i64,
}

impl Node {
    fn leaf(content: Content, weight: f64, fade: Option<i64>) -> Node {
        let (fade, flags) = match fade {
            Some(at) => (at, FADES | ANY_FADES),
            None => (0, 0),
        };
        Node {
            content,
            weight,
            best: weight,
            fade,
            first_fade: fade,
            left: NIL,
            right: NIL,
            size: 1,
            height: 1,
            flags,
        }
    }

    fn fade_at(&self) -> Option<i64> {
        (self.flags & FADES != 0).then_some(self.fade)
    }

    /// Faded by `now`: no longer hinted, removed by the next fade.
    fn faded(&self, now: i64) -> bool {
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

/// `content` against the range of entries that start with `prefix`:
/// `Less` below it, `Equal` in it, `Greater` above it.
fn against_prefix(content: &[u8], prefix: &[u8]) -> Ordering {
    let shared = content.len().min(prefix.len());
    match content[..shared].cmp(&prefix[..shared]) {
        Ordering::Equal if content.len() < prefix.len() => Ordering::Less,
        order => order,
    }
}

/// The nodes of a descent, root first, and the side taken at each.
struct Path {
    nodes: [u32; MAX_DEPTH],
    /// Bit `i`: the descent went left at `nodes[i]`.
    lefts: u64,
    len: usize,
}

impl Path {
    fn new() -> Path {
        Path {
            nodes: [NIL; MAX_DEPTH],
            lefts: 0,
            len: 0,
        }
    }

    /// Adds a step; `false` when the path is full (never, in a tree that is
    /// balanced).
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
    fn upward(&self) -> impl Iterator<Item = (u32, bool)> + '_ {
        let lefts = self.lefts;
        self.nodes[..self.len]
            .iter()
            .enumerate()
            .rev()
            .map(move |(at, &node)| (node, lefts & (1 << at) != 0))
    }
}

/// What a deletion looks for.
#[derive(Clone, Copy)]
enum Target<'a> {
    Content(&'a [u8]),
    /// The entry of this rank (0-based, content order) in the subtree.
    Rank(u32),
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

/// The suggestions of one key.
#[derive(Clone, Debug)]
pub struct Suggestions {
    /// Every chunk but the last holds exactly `CHUNK` nodes; node `i` is
    /// `chunks[i / CHUNK][i % CHUNK]`.
    chunks: Vec<Vec<Node>>,
    root: u32,
    /// The allocator's blocks for the contents not inside their nodes
    /// (see [`block`]), and how many there are.
    content_bytes: usize,
    /// (A `u32`: there are fewer than [`MAX_ENTRIES`].)
    content_blocks: u32,
    hints: Kept,
}

impl Default for Suggestions {
    fn default() -> Self {
        Suggestions {
            chunks: Vec::new(),
            root: NIL,
            content_bytes: 0,
            content_blocks: 0,
            hints: Kept::default(),
        }
    }
}

/// The most entries a kept answer holds: a hint for more is searched each
/// time.
pub const KEPT_MOST: usize = 64;

/// The fewest entries a kept answer is searched for, so that hints for
/// fewer (`COUNT 3`, `COUNT 5`, the default 10) share it.
const KEPT_LEAST: usize = 10;

/// The longest prefix, in bytes, whose answers are kept (longer ones are
/// rarely asked twice, and would make the kept answers' memory unbounded).
pub const KEPT_PREFIX_BYTES: usize = 64;

/// The most bytes of contents a kept answer copies (see [`Answer::text`]);
/// the entries past them are read from the tree.
pub const KEPT_TEXT_BYTES: usize = 2_048;

/// No slot, in [`HintCache::index`].
const NO_SLOT: u32 = u32::MAX;

/// The answers kept (see the module's notes), in a `Cell`: hints read the
/// key, yet fill the cache, which a hint takes out and puts back. One
/// pointer in the value, none allocated until a hint: a key never hinted
/// takes no more memory. A copy of the key starts with none.
#[derive(Default)]
struct Kept(Cell<Option<Box<HintCache>>>);

impl Clone for Kept {
    fn clone(&self) -> Self {
        Kept::default()
    }
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.write_str("Kept")
    }
}

impl Kept {
    /// What `read` gives of the cache, if there is one.
    fn with<R>(&self, read: impl FnOnce(&HintCache) -> R) -> Option<R> {
        let cache = self.0.take();
        let got = cache.as_deref().map(read);
        self.0.set(cache);
        got
    }
}

#[derive(Debug, Default)]
struct HintCache {
    slots: Vec<Answer>,
    /// The slots by their prefix's hash, open addressing with linear
    /// probing: slot numbers, [`NO_SLOT`] where free. Its length is a power
    /// of two, at least twice the slots, so a probe always ends.
    index: Vec<u32>,
    /// The clock's hand: the next slot looked at for replacement.
    hand: usize,
}

/// The answer kept for one prefix.
#[derive(Debug)]
struct Answer {
    prefix: Vec<u8>,
    hash: u64,
    /// The answer's nodes, best first.
    nodes: Vec<u32>,
    /// The contents of its first nodes, end to end, up to
    /// [`KEPT_TEXT_BYTES`], and the length of each: a reply reads them
    /// here rather than in the tree (about 15 instructions an entry less).
    text: Vec<u8>,
    lens: Vec<u32>,
    /// How many entries were asked for: fewer nodes means the answer holds
    /// every entry under the prefix that had not faded.
    asked: usize,
    /// A write may have changed it: searched again when next asked.
    stale: bool,
    /// It answers for times in `since..until`: from the search on (from
    /// any time when the search passed over no faded entry), until the
    /// first of its entries fades.
    since: i64,
    until: i64,
    /// Asked since the clock's hand last passed.
    used: bool,
}

/// FNV-1a: prefixes are short, and the slots few (a client that makes
/// prefixes collide makes a probe at most as long as the slots).
fn hash(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(HASH_START, |hash, &byte| hash_step(hash, byte))
}

const HASH_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash of a prefix one byte longer.
fn hash_step(hash: u64, byte: u8) -> u64 {
    (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
}

impl HintCache {
    /// The slot of `prefix`, if kept (good or not).
    fn find(&self, hash: u64, prefix: &[u8]) -> Option<usize> {
        let mask = self.index.len().checked_sub(1)?;
        let mut at = hash as usize & mask;
        loop {
            let slot = *self.index.get(at)?;
            if slot == NO_SLOT {
                return None;
            }
            let answer = self.slots.get(slot as usize)?;
            if answer.hash == hash && answer.prefix == prefix {
                return Some(slot as usize);
            }
            at = (at + 1) & mask;
        }
    }

    /// Drops the slots past `keep` (the setting was lowered).
    #[cold]
    #[inline(never)]
    fn shrink(&mut self, keep: usize) {
        self.slots.truncate(keep);
        self.slots.shrink_to_fit();
        self.hand = 0;
        self.reindex();
    }

    /// A slot for `prefix` (of hash `hash`), not kept: a new one while
    /// fewer than `keep`, else the clock's victim; stale, so searched next.
    #[cold]
    #[inline(never)]
    fn take_slot(&mut self, prefix: &[u8], hash: u64, keep: usize) -> usize {
        let slot = if self.slots.len() < keep {
            self.slots.push(Answer {
                prefix: Vec::new(),
                hash,
                nodes: Vec::new(),
                text: Vec::new(),
                lens: Vec::new(),
                asked: 0,
                stale: true,
                since: i64::MIN,
                until: i64::MAX,
                used: false,
            });
            self.slots.len() - 1
        } else {
            let victim = self.victim();
            self.unindex_slot(victim);
            victim
        };
        if let Some(answer) = self.slots.get_mut(slot) {
            answer.prefix.clear();
            answer.prefix.reserve_exact(prefix.len());
            answer.prefix.extend_from_slice(prefix);
            answer.hash = hash;
            answer.stale = true;
        }
        if 2 * self.slots.len() > self.index.len() {
            self.reindex();
        } else {
            self.index_slot(slot);
        }
        slot
    }

    /// Calls `visit` with each slot whose prefix starts `content`: the
    /// slots scanned when they are fewer than its prefixes, else each
    /// prefix (up to [`KEPT_PREFIX_BYTES`]) probed, its hash one step from
    /// the last. O(min(slots, length)).
    fn prefixes_of(&mut self, content: &[u8], mut visit: impl FnMut(&mut Answer)) {
        let longest = content.len().min(KEPT_PREFIX_BYTES);
        if self.slots.len() <= longest + 1 {
            for answer in &mut self.slots {
                if content.starts_with(&answer.prefix) {
                    visit(answer);
                }
            }
            return;
        }
        let mut hash = HASH_START;
        for len in 0..=longest {
            if let Some(&byte) = len.checked_sub(1).and_then(|last| content.get(last)) {
                hash = hash_step(hash, byte);
            }
            let prefix = content.get(..len).unwrap_or_default();
            if let Some(slot) = self.find(hash, prefix) {
                if let Some(answer) = self.slots.get_mut(slot) {
                    visit(answer);
                }
            }
        }
    }

    /// Rebuilds the index over the slots: O(slots), when the slots
    /// outgrow it (doubling it, so O(1) a slot added) or are cut.
    fn reindex(&mut self) {
        let size = (2 * self.slots.len()).next_power_of_two().max(8);
        self.index.clear();
        self.index.resize(size, NO_SLOT);
        for slot in 0..self.slots.len() {
            self.index_slot(slot);
        }
    }

    /// Enters `slot` in the index, which has room (twice the slots).
    fn index_slot(&mut self, slot: usize) {
        let (Some(answer), Some(mask)) = (self.slots.get(slot), self.index.len().checked_sub(1))
        else {
            return;
        };
        let mut at = answer.hash as usize & mask;
        while let Some(taken) = self.index.get_mut(at) {
            if *taken == NO_SLOT {
                // Fewer than u32::MAX slots (the setting's range).
                *taken = slot as u32;
                return;
            }
            at = (at + 1) & mask;
        }
    }

    /// Takes `slot` out of the index (before its prefix changes): the
    /// entries after it in its run move back where a probe from their
    /// home still finds them. O(run).
    fn unindex_slot(&mut self, slot: usize) {
        let (Some(answer), Some(mask)) = (self.slots.get(slot), self.index.len().checked_sub(1))
        else {
            return;
        };
        let mut hole = answer.hash as usize & mask;
        loop {
            match self.index.get(hole) {
                Some(&taken) if taken == slot as u32 => break,
                Some(&taken) if taken != NO_SLOT => hole = (hole + 1) & mask,
                _ => return,
            }
        }
        let mut next = (hole + 1) & mask;
        loop {
            let Some(&moving) = self.index.get(next) else {
                return;
            };
            if moving == NO_SLOT {
                break;
            }
            let home = self
                .slots
                .get(moving as usize)
                .map_or(next, |answer| answer.hash as usize & mask);
            // The hole lies on the way from its home to where it is.
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                if let Some(place) = self.index.get_mut(hole) {
                    *place = moving;
                }
                hole = next;
            }
            next = (next + 1) & mask;
        }
        if let Some(place) = self.index.get_mut(hole) {
            *place = NO_SLOT;
        }
    }

    /// A slot to replace: the first from the hand that is stale or was not
    /// asked since the hand last passed (clearing the marks it passes).
    /// `slots` is not empty.
    fn victim(&mut self) -> usize {
        let len = self.slots.len();
        for _ in 0..=len {
            let at = self.hand % len;
            self.hand = (at + 1) % len;
            if let Some(answer) = self.slots.get_mut(at) {
                if answer.stale || !answer.used {
                    return at;
                }
                answer.used = false;
            }
        }
        self.hand
    }

    /// Bytes held, as the allocator rounds them.
    fn memory(&self) -> usize {
        block(size_of::<HintCache>())
            + block(self.slots.capacity() * size_of::<Answer>())
            + block(self.index.capacity() * size_of::<u32>())
            + self
                .slots
                .iter()
                .map(|answer| {
                    block(answer.prefix.capacity())
                        + block(answer.nodes.capacity() * size_of::<u32>())
                        + block(answer.text.capacity())
                        + block(answer.lens.capacity() * size_of::<u32>())
                })
                .sum::<usize>()
    }

    fn allocations(&self) -> usize {
        1 + usize::from(self.slots.capacity() > 0)
            + usize::from(self.index.capacity() > 0)
            + self
                .slots
                .iter()
                .map(|answer| {
                    usize::from(answer.prefix.capacity() > 0)
                        + usize::from(answer.nodes.capacity() > 0)
                        + usize::from(answer.text.capacity() > 0)
                        + usize::from(answer.lens.capacity() > 0)
                })
                .sum::<usize>()
    }
}

/// A hint's entries, best first: content and weight.
pub struct Hints<'a> {
    tree: &'a Suggestions,
    nodes: std::slice::Iter<'a, u32>,
    /// The contents of the first nodes, as [`Answer::text`] and
    /// [`Answer::lens`] (none for an answer not kept).
    text: &'a [u8],
    lens: &'a [u32],
}

impl<'a> Hints<'a> {
    fn of_nodes(tree: &'a Suggestions, nodes: &'a [u32]) -> Self {
        Hints {
            tree,
            nodes: nodes.iter(),
            text: &[],
            lens: &[],
        }
    }

    /// The contents alone: first those copied in a kept answer, read
    /// there, then the others, read in the tree.
    pub fn contents(self) -> (Copied<'a>, impl Iterator<Item = &'a [u8]>) {
        let Hints {
            tree,
            nodes,
            text,
            lens,
        } = self;
        let copied = lens.len().min(nodes.len());
        let lens = lens.get(..copied).unwrap_or_default();
        let rest = nodes.skip(copied).map(move |&at| &*tree.node(at).content);
        (Copied { text, lens }, rest)
    }
}

/// The contents a kept answer copied (see [`Answer::text`]), in order.
pub struct Copied<'a> {
    text: &'a [u8],
    lens: &'a [u32],
}

impl<'a> Iterator for Copied<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let (&len, lens) = self.lens.split_first()?;
        let (content, text) = self.text.split_at_checked(len as usize)?;
        self.lens = lens;
        self.text = text;
        Some(content)
    }
}

impl<'a> Iterator for Hints<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        let node = self.tree.node(*self.nodes.next()?);
        Some((&node.content, node.weight))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.nodes.size_hint()
    }
}

impl ExactSizeIterator for Hints<'_> {}

impl Suggestions {
    /// Suggestions read back from storage, in any order (content order is
    /// the fastest: no sort). Refused, with the reason, when a content is
    /// empty or repeated, a weight is NaN, or there are more than
    /// [`MAX_ENTRIES`]. O(M) for sorted input, O(M log M) otherwise.
    pub fn from_entries(
        entries: impl IntoIterator<Item = (Vec<u8>, f64, Option<i64>)>,
    ) -> Result<Self, &'static str> {
        let mut nodes: Vec<Node> = Vec::new();
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
            nodes.push(Node::leaf(Content::from_vec(content), weight, fade));
        }
        if !sorted {
            nodes.sort_unstable_by(|a, b| (*a.content).cmp(&b.content));
            if nodes
                .windows(2)
                .any(|pair| *pair[0].content == *pair[1].content)
            {
                return Err("repeated content");
            }
        }
        let mut built = Suggestions::default();
        let len = nodes.len();
        built.content_bytes = nodes.iter().map(|node| node.content.block()).sum();
        // At most MAX_ENTRIES, checked above.
        built.content_blocks = nodes.iter().filter(|node| node.content.block() > 0).count() as u32;
        built.chunks.reserve_exact(len.div_ceil(CHUNK));
        let mut rest = nodes.into_iter();
        while rest.len() > 0 {
            let mut chunk = Vec::with_capacity(rest.len().min(CHUNK));
            chunk.extend(rest.by_ref().take(CHUNK));
            built.chunks.push(chunk);
        }
        // At most MAX_ENTRIES, checked above.
        built.root = built.build(0, len as u32);
        Ok(built)
    }

    /// Links the nodes at indices `lo..hi` (in content order) into a
    /// balanced subtree and returns its root.
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

    /// Entries held.
    pub fn len(&self) -> usize {
        self.size(self.root) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.root == NIL
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
        let mut path = Path::new();
        let Some(at) = self.find(content, Some(&mut path)) else {
            return false;
        };
        let node = self.node_mut(at);
        match fade_at {
            Some(time) => {
                node.fade = time;
                node.flags |= FADES;
            }
            None => node.flags &= !FADES,
        }
        self.update_upward(at, &path);
        // As a weight: a new fade time may bring back an entry a search
        // passed over as faded, above an answer's last entry.
        let weight = self.node(at).weight;
        self.written(content, at, Some(weight));
        true
    }

    #[cfg(test)]
    /// The weight of `content`, if present. O(log M).
    pub fn weight(&self, content: &[u8]) -> Option<f64> {
        self.find(content, None).map(|at| self.node(at).weight)
    }

    /// The fade time of `content`: `None` when it is absent or never fades.
    /// O(log M).
    pub fn fade_at(&self, content: &[u8]) -> Option<i64> {
        self.get(content).and_then(|(_, fade)| fade)
    }

    /// The weight and fade time of `content`, if present. O(log M).
    pub fn get(&self, content: &[u8]) -> Option<(f64, Option<i64>)> {
        self.find(content, None).map(|at| {
            let node = self.node(at);
            (node.weight, node.fade_at())
        })
    }

    /// Removes `content`: `false` when it was absent. O(log M).
    pub fn remove(&mut self, content: &[u8]) -> bool {
        self.remove_target(Target::Content(content)).is_some()
    }

    /// The best `count` entries that start with `prefix` (all for an empty
    /// one) and have not faded by the time `now()` reads (read only when an
    /// answer depends on it): weight descending, then content descending
    /// (`ZRANGE … REV`), handed to `reply`. Answers for up to
    /// [`KEPT_MOST`] entries under prefixes of up to [`KEPT_PREFIX_BYTES`]
    /// are kept, up to `keep` of them (0: none, and those kept are
    /// dropped): asked again before a write that changes it, and before one
    /// of its entries fades, an answer costs O(prefix length). Otherwise a
    /// search, O((count + faded entries met) · log M) however many entries
    /// start with `prefix`. Also says whether it searched.
    // Inlined into the command, with its reply: a hot hint's code in few
    // cache lines. Timed on Redis 7.0, a hint followed the instruction
    // cache's misses (callgrind --cache-sim: 68 a call against ZRANGE's
    // 12 before the hot path was packed, 43–48 after) as much as its
    // instructions: 0.88× ZRANGE before, 0.90–0.92× after.
    #[inline]
    pub fn hint_with<R>(
        &self,
        prefix: &[u8],
        count: usize,
        now: impl Fn() -> i64,
        keep: usize,
        reply: impl FnOnce(Hints<'_>) -> R,
    ) -> (R, bool) {
        if keep == 0 {
            // Those kept before go, with their memory.
            self.hints.0.set(None);
        }
        if keep == 0 || count > KEPT_MOST || prefix.len() > KEPT_PREFIX_BYTES {
            return (self.hint_searched(prefix, count, now(), reply), true);
        }
        if count == 0 || self.root == NIL {
            return (reply(Hints::of_nodes(self, &[])), false);
        }
        let mut cache = self.hints.0.take().unwrap_or_default();
        let (slot, searched) = self.answer(&mut cache, prefix, count, now, keep);
        let hints = match cache.slots.get(slot) {
            Some(answer) => Hints {
                tree: self,
                nodes: answer.nodes.get(..count).unwrap_or(&answer.nodes).iter(),
                text: &answer.text,
                lens: &answer.lens,
            },
            None => Hints::of_nodes(self, &[]),
        };
        let replied = reply(hints);
        self.hints.0.set(Some(cache));
        (replied, searched)
    }

    /// The slot of `cache` that holds the answer for `prefix`, good for
    /// `count` entries at `now()`: kept, or searched into a new slot (at
    /// most `keep`, replacing one if need be) or an old one; and whether
    /// it searched.
    fn answer(
        &self,
        cache: &mut HintCache,
        prefix: &[u8],
        count: usize,
        now: impl Fn() -> i64,
        keep: usize,
    ) -> (usize, bool) {
        if cache.slots.len() > keep {
            cache.shrink(keep);
        }
        let hash = hash(prefix);
        let slot = match cache.find(hash, prefix) {
            Some(slot) => slot,
            None => cache.take_slot(prefix, hash, keep),
        };
        let mut searched = false;
        if let Some(answer) = cache.slots.get_mut(slot) {
            answer.used = true;
            let good = !answer.stale
                && (count <= answer.nodes.len() || answer.nodes.len() < answer.asked)
                && (answer.since == i64::MIN && answer.until == i64::MAX || {
                    let now = now();
                    answer.since <= now && now < answer.until
                });
            if !good {
                self.refill(answer, count, now());
                searched = true;
            }
        }
        (slot, searched)
    }

    /// Searches `answer` again, for `count` entries at least, at `now`.
    /// Out of the kept answers' way (`cold`), which stays a few cache lines
    /// of code: a hot hint's time goes as much to the instruction cache as
    /// to its instructions.
    #[cold]
    #[inline(never)]
    fn refill(&self, answer: &mut Answer, count: usize, now: i64) {
        answer.nodes.clear();
        answer.asked = count.max(KEPT_LEAST);
        let (until, passed_faded) =
            self.search(&answer.prefix, answer.asked, now, &mut answer.nodes);
        answer.until = until;
        answer.since = if passed_faded { now } else { i64::MIN };
        answer.stale = false;
        self.copy_text(answer);
    }

    /// Copies into `answer.text` the contents of its first nodes, as many
    /// as [`KEPT_TEXT_BYTES`] holds, in blocks of the size they need.
    fn copy_text(&self, answer: &mut Answer) {
        answer.text.clear();
        answer.lens.clear();
        let mut copied = 0;
        let mut bytes = 0;
        for &at in &answer.nodes {
            let len = self.node(at).content.len();
            if bytes + len > KEPT_TEXT_BYTES {
                break;
            }
            bytes += len;
            copied += 1;
        }
        answer.text.reserve_exact(bytes);
        answer.lens.reserve_exact(copied);
        for &at in answer.nodes.iter().take(copied) {
            let content = &self.node(at).content;
            answer.text.extend_from_slice(content);
            // At most KEPT_TEXT_BYTES.
            answer.lens.push(content.len() as u32);
        }
    }

    /// Kept answers that a write to `content` (node `at`, now of `weight`;
    /// `None`: removed, or its fade time changed) may have changed go
    /// stale: among the answers of its prefixes, those holding it, and for
    /// a weight, those holding every entry under their prefix or whose
    /// last entry it now outranks. O(length) probes, and O(count) for each
    /// answer found.
    fn written(&self, content: &[u8], at: u32, weight: Option<f64>) {
        let Some(mut cache) = self.hints.0.take() else {
            return;
        };
        cache.prefixes_of(content, |answer| {
            if answer.stale {
                return;
            }
            let stays = !answer.nodes.contains(&at)
                && match weight {
                    None => true,
                    Some(weight) => {
                        answer.nodes.len() >= answer.asked
                            && answer.nodes.last().is_some_and(|&last| {
                                let last = self.node(last);
                                weight < last.weight
                                    || (weight == last.weight && content < &*last.content)
                            })
                    }
                };
            answer.stale = !stays;
        });
        self.hints.0.set(Some(cache));
    }

    /// The node that was at `from` is at `to` now (the arena's last node
    /// filling a removed one's slot): the answers holding it say so.
    fn moved(&self, from: u32, to: u32) {
        let Some(mut cache) = self.hints.0.take() else {
            return;
        };
        cache.prefixes_of(&self.node(to).content, |answer| {
            if let Some(node) = answer.nodes.iter_mut().find(|node| **node == from) {
                *node = to;
            }
        });
        self.hints.0.set(Some(cache));
    }

    /// A hint searched, not kept.
    #[cold]
    #[inline(never)]
    fn hint_searched<R>(
        &self,
        prefix: &[u8],
        count: usize,
        now: i64,
        reply: impl FnOnce(Hints<'_>) -> R,
    ) -> R {
        let mut nodes = Vec::new();
        self.search(prefix, count, now, &mut nodes);
        reply(Hints::of_nodes(self, &nodes))
    }

    #[cfg(test)]
    /// A hint's entries, searched (see [`Suggestions::hint_with`]).
    pub fn hint(&self, prefix: &[u8], count: usize, now: i64) -> Vec<(&[u8], f64)> {
        let mut nodes = Vec::new();
        self.search(prefix, count, now, &mut nodes);
        nodes
            .iter()
            .map(|&at| {
                let node = self.node(at);
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
    fn search(&self, prefix: &[u8], count: usize, now: i64, found: &mut Vec<u32>) -> (i64, bool) {
        let mut until = i64::MAX;
        let mut passed_faded = false;
        if count == 0 || self.root == NIL {
            return (until, passed_faded);
        }
        found.reserve_exact(count.min(self.len()));
        // The entries under the prefix as O(log M) pieces, then the best
        // piece split again and again until `count` entries have come out
        // (each split pushes about two pieces a level).
        let height = usize::from(self.height(self.root));
        let mut heap = BinaryHeap::with_capacity(4 * height + 8);
        self.pieces_under(prefix, &mut heap);
        while let Some(piece) = heap.pop() {
            let at = if piece.whole {
                self.split(piece, &mut heap)
            } else {
                piece.node
            };
            let node = self.node(at);
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
        let mut at = self.root;
        while at != NIL {
            let node = self.node(at);
            if *node.content < *prefix {
                below += self.size(node.left) as usize + 1;
                at = node.right;
            } else {
                at = node.left;
            }
        }
        at = self.root;
        while at != NIL {
            let node = self.node(at);
            if against_prefix(&node.content, prefix) == Ordering::Greater {
                at = node.left;
            } else {
                through += self.size(node.left) as usize + 1;
                at = node.right;
            }
        }
        through.saturating_sub(below)
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
            let Some(rank) = self.first_fading_rank() else {
                break;
            };
            match self.remove_target(Target::Rank(rank)) {
                Some(node) => faded.push(node.content.into_vec()),
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
        if self.root != NIL {
            stack.push(self.root);
        }
        while let Some(at) = stack.pop() {
            let node = self.node(at);
            if node.flags & ANY_FADES == 0 || node.first_fade > now {
                continue;
            }
            if node.flags & FADES != 0 && node.fade <= now {
                count += 1;
            }
            stack.extend(
                [node.left, node.right]
                    .into_iter()
                    .filter(|&child| child != NIL),
            );
        }
        count
    }

    /// The earliest fade time of any entry. O(1).
    pub fn next_fade(&self) -> Option<i64> {
        if self.root == NIL {
            return None;
        }
        let root = self.node(self.root);
        (root.flags & ANY_FADES != 0).then_some(root.first_fade)
    }

    /// Every entry in content order, for persistence and digests.
    pub fn iter(&self) -> Iter<'_> {
        let mut iter = Iter {
            tree: self,
            stack: Vec::with_capacity(self.height(self.root) as usize),
        };
        iter.descend(self.root);
        iter
    }

    /// Bytes held, for `MEMORY USAGE`: every block allocated, as the
    /// allocator rounds it (see [`block`]): the value itself, the arena's
    /// chunks and the list of them, each content not inside its node, and
    /// the kept hints. O(M / CHUNK + answers kept).
    pub fn memory(&self) -> usize {
        let chunks: usize = self
            .chunks
            .iter()
            .map(|chunk| block(chunk.capacity() * size_of::<Node>()))
            .sum();
        let kept = self.hints.with(HintCache::memory).unwrap_or(0);
        block(size_of::<Self>())
            + block(self.chunks.capacity() * size_of::<Vec<Node>>())
            + chunks
            + self.content_bytes
            + kept
    }

    /// Allocations owned, for the server's lazy-free decision: the chunks,
    /// the list of them, the contents not inside their nodes, the kept
    /// hints'.
    pub fn allocations(&self) -> usize {
        let kept = self.hints.with(HintCache::allocations).unwrap_or(0);
        1 + self.chunks.len() + self.content_blocks as usize + kept
    }

    // The arena.

    /// Node `at`, an index the tree maintains (below the arena's length).
    fn node(&self, at: u32) -> &Node {
        let at = at as usize;
        &self.chunks[at / CHUNK][at % CHUNK]
    }

    fn node_mut(&mut self, at: u32) -> &mut Node {
        let at = at as usize;
        &mut self.chunks[at / CHUNK][at % CHUNK]
    }

    fn arena_len(&self) -> usize {
        self.chunks.len().saturating_sub(1) * CHUNK + self.chunks.last().map_or(0, Vec::len)
    }

    /// Adds `node` at the end of the arena and returns its index: a first
    /// chunk grows by doubling up to `CHUNK`, later ones are taken whole.
    fn push_node(&mut self, node: Node) -> Result<u32, WriteError> {
        let at = self.arena_len();
        if at >= MAX_ENTRIES {
            return Err(WriteError::Full);
        }
        match self.chunks.last_mut() {
            Some(chunk) if chunk.len() < CHUNK => {
                if chunk.len() == chunk.capacity() {
                    let want = (chunk.capacity() * 2).clamp(4, CHUNK);
                    chunk.reserve_exact(want - chunk.len());
                }
                chunk.push(node);
            }
            _ => {
                let mut chunk = Vec::with_capacity(if self.chunks.is_empty() { 4 } else { CHUNK });
                chunk.push(node);
                self.chunks.push(chunk);
            }
        }
        Ok(at as u32)
    }

    /// Takes the arena's last node out, giving memory back as the arena
    /// shrinks.
    fn pop_node(&mut self) -> Option<Node> {
        let chunk = self.chunks.last_mut()?;
        let node = chunk.pop();
        if chunk.is_empty() {
            self.chunks.pop();
            if self.chunks.is_empty() || self.chunks.capacity() > 4 * self.chunks.len() {
                self.chunks.shrink_to(2 * self.chunks.len());
            }
        } else if chunk.capacity() >= 4 * chunk.len() && chunk.capacity() > 4 {
            chunk.shrink_to(2 * chunk.len());
        }
        node
    }

    // The tree.

    fn size(&self, at: u32) -> u32 {
        if at == NIL {
            0
        } else {
            self.node(at).size
        }
    }

    fn height(&self, at: u32) -> u8 {
        if at == NIL {
            0
        } else {
            self.node(at).height
        }
    }

    /// The node holding `content`, recording the descent in `path`.
    fn find(&self, content: &[u8], mut path: Option<&mut Path>) -> Option<u32> {
        let mut at = self.root;
        while at != NIL {
            let node = self.node(at);
            let left = match content.cmp(&node.content) {
                Ordering::Equal => return Some(at),
                Ordering::Less => true,
                Ordering::Greater => false,
            };
            if let Some(path) = path.as_deref_mut() {
                if !path.push(at, left) {
                    return None;
                }
            }
            at = if left { node.left } else { node.right };
        }
        None
    }

    /// Recomputes the figures of the nodes of `path` (whose shape did not
    /// change) upward, once node `at` below them changed: up to the first
    /// whose figures stay as they were, as then are all above it.
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

    /// Recomputes the figures of node `at` from its children: `false` when
    /// the best weight and earliest fade time (which its parent reads)
    /// stay as they were.
    fn update(&mut self, at: u32) -> bool {
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        let mut size = 1;
        let mut height = 0;
        let (mut best, mut best_in) = (node.weight, BEST_SELF);
        let mut any = node.flags & FADES != 0;
        let (mut first, mut first_in) = (node.fade, FIRST_SELF);
        if left != NIL {
            let child = self.node(left);
            size += child.size;
            height = child.height;
            // Ties go right: the node beats its left subtree.
            if child.best.total_cmp(&best).is_gt() {
                (best, best_in) = (child.best, BEST_LEFT);
            }
            // Ties go left.
            if child.flags & ANY_FADES != 0 && (!any || child.first_fade <= first) {
                (any, first, first_in) = (true, child.first_fade, FIRST_LEFT);
            }
        }
        if right != NIL {
            let child = self.node(right);
            size += child.size;
            height = height.max(child.height);
            if child.best.total_cmp(&best).is_ge() {
                (best, best_in) = (child.best, BEST_RIGHT);
            }
            if child.flags & ANY_FADES != 0 && (!any || child.first_fade < first) {
                (any, first, first_in) = (true, child.first_fade, FIRST_RIGHT);
            }
        }
        let node = self.node_mut(at);
        let any = if any { ANY_FADES } else { 0 };
        let flags = (node.flags & FADES) | any | best_in | first_in;
        let same = node.best.to_bits() == best.to_bits()
            && node.flags & ANY_FADES == any
            && (any == 0 || node.first_fade == first);
        node.size = size;
        node.height = height + 1;
        node.best = best;
        node.first_fade = first;
        node.flags = flags;
        !same
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

    /// Restores the AVL balance at `at` (its subtrees balanced, heights
    /// differing by at most 2) and its figures; returns the subtree's root.
    fn balance(&mut self, at: u32) -> u32 {
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        let (hl, hr) = (self.height(left), self.height(right));
        if hl > hr + 1 {
            let child = self.node(left);
            if self.height(child.left) < self.height(child.right) {
                let up = self.rotate_left(left);
                self.node_mut(at).left = up;
            }
            self.rotate_right(at)
        } else if hr > hl + 1 {
            let child = self.node(right);
            if self.height(child.right) < self.height(child.left) {
                let up = self.rotate_right(right);
                self.node_mut(at).right = up;
            }
            self.rotate_left(at)
        } else {
            self.update(at);
            at
        }
    }

    /// Sets the weight of `content` to `weigh(old weight)` (creating it when
    /// absent), and its fade time when `fade` is `Some`. One descent.
    fn upsert(
        &mut self,
        content: &[u8],
        fade: Option<i64>,
        weigh: impl FnOnce(Option<f64>) -> Result<f64, WriteError>,
    ) -> Result<f64, WriteError> {
        if content.is_empty() {
            return Err(WriteError::EmptyContent);
        }
        let mut path = Path::new();
        let mut at = self.root;
        while at != NIL {
            let node = self.node(at);
            let left = match content.cmp(&node.content) {
                Ordering::Equal => {
                    let weight = weigh(Some(node.weight))?;
                    let node = self.node_mut(at);
                    node.weight = weight;
                    if let Some(time) = fade {
                        node.fade = time;
                        node.flags |= FADES;
                    }
                    self.update_upward(at, &path);
                    self.written(content, at, Some(weight));
                    return Ok(weight);
                }
                Ordering::Less => true,
                Ordering::Greater => false,
            };
            if !path.push(at, left) {
                return Err(WriteError::Full);
            }
            at = if left { node.left } else { node.right };
        }
        let weight = weigh(None)?;
        let added = Content::new(content);
        let outside = added.block();
        let mut below = self.push_node(Node::leaf(added, weight, fade))?;
        self.written(content, below, Some(weight));
        self.content_bytes += outside;
        self.content_blocks += u32::from(outside > 0);
        for (above, left) in path.upward() {
            let node = self.node_mut(above);
            if left {
                node.left = below;
            } else {
                node.right = below;
            }
            below = self.balance(above);
        }
        self.root = below;
        Ok(weight)
    }

    /// Removes the entry `target` names and returns its node.
    fn remove_target(&mut self, target: Target) -> Option<Node> {
        let (root, gone) = self.delete(self.root, target)?;
        self.root = root;
        let last = u32::try_from(self.arena_len().checked_sub(1)?).ok()?;
        let node = self.release(gone)?;
        self.written(&node.content, gone, None);
        if gone != last {
            self.moved(last, gone);
        }
        let outside = node.content.block();
        self.content_bytes = self.content_bytes.saturating_sub(outside);
        self.content_blocks = self.content_blocks.saturating_sub(u32::from(outside > 0));
        Some(node)
    }

    /// Unlinks the node `target` names from the subtree `at`: the subtree's
    /// new root and the unlinked node's index.
    fn delete(&mut self, at: u32, target: Target) -> Option<(u32, u32)> {
        if at == NIL {
            return None;
        }
        let node = self.node(at);
        let (left, right) = (node.left, node.right);
        let (order, right_target) = match target {
            Target::Content(content) => (content.cmp(&node.content), target),
            Target::Rank(rank) => {
                let below = self.size(left);
                let next = Target::Rank(rank.wrapping_sub(below + 1));
                (rank.cmp(&below), next)
            }
        };
        match order {
            Ordering::Less => {
                let (below, gone) = self.delete(left, target)?;
                self.node_mut(at).left = below;
                Some((self.balance(at), gone))
            }
            Ordering::Greater => {
                let (below, gone) = self.delete(right, right_target)?;
                self.node_mut(at).right = below;
                Some((self.balance(at), gone))
            }
            Ordering::Equal if left == NIL => Some((right, at)),
            Ordering::Equal if right == NIL => Some((left, at)),
            Ordering::Equal => {
                // The successor takes the node's place.
                let (rest, next) = self.remove_first(right);
                let node = self.node_mut(next);
                node.left = left;
                node.right = rest;
                Some((self.balance(next), at))
            }
        }
    }

    /// Unlinks the first node of the non-empty subtree `at`: the subtree's
    /// new root and the unlinked node.
    fn remove_first(&mut self, at: u32) -> (u32, u32) {
        let node = self.node(at);
        if node.left == NIL {
            return (node.right, at);
        }
        let (rest, first) = self.remove_first(node.left);
        self.node_mut(at).left = rest;
        (self.balance(at), first)
    }

    /// Frees the arena slot of the unlinked node `gone`, moving the last
    /// node into it, and returns the unlinked node.
    fn release(&mut self, gone: u32) -> Option<Node> {
        let last = u32::try_from(self.arena_len().checked_sub(1)?).ok()?;
        if gone == last {
            return self.pop_node();
        }
        // Whatever links to the last node links to its new slot instead.
        let key = &self.node(last).content;
        let mut parent = NIL;
        let mut at = self.root;
        while at != last {
            if at == NIL {
                // Not in the tree: never, the last node is linked.
                return None;
            }
            parent = at;
            let node = self.node(at);
            at = if **key < *node.content {
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
        let moved = self.pop_node()?;
        Some(std::mem::replace(self.node_mut(gone), moved))
    }

    // Searches.

    /// Pushes the entries that start with `prefix` as pieces: the highest
    /// node among them, then down each side of it the nodes and whole
    /// subtrees in the range. One descent, O(log M) pieces.
    fn pieces_under(&self, prefix: &[u8], heap: &mut BinaryHeap<Piece>) {
        if prefix.is_empty() {
            self.push_whole(heap, self.root, 0);
            return;
        }
        let (mut at, mut base) = (self.root, 0);
        let top = loop {
            if at == NIL {
                return;
            }
            let node = self.node(at);
            match against_prefix(&node.content, prefix) {
                Ordering::Less => {
                    base += self.size(node.left) + 1;
                    at = node.right;
                }
                Ordering::Greater => at = node.left,
                Ordering::Equal => break node,
            }
        };
        let rank = base + self.size(top.left);
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
        let (mut at, mut base) = (top.left, base);
        while at != NIL {
            let node = self.node(at);
            let rank = base + self.size(node.left);
            if node.content.starts_with(prefix) {
                self.push_whole(heap, node.right, rank + 1);
                push(
                    heap,
                    Piece {
                        weight: node.weight,
                        rank,
                        node: at,
                        whole: false,
                    },
                );
                at = node.left;
            } else {
                base = rank + 1;
                at = node.right;
            }
        }
        // Right of it, in the range or above it.
        let (mut at, mut base) = (top.right, rank + 1);
        while at != NIL {
            let node = self.node(at);
            let rank = base + self.size(node.left);
            if node.content.starts_with(prefix) {
                self.push_whole(heap, node.left, base);
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
                at = node.right;
            } else {
                at = node.left;
            }
        }
    }

    /// Pushes the subtree `at`, whose first rank is `base`, as one piece.
    fn push_whole(&self, heap: &mut BinaryHeap<Piece>, at: u32, base: u32) {
        if at != NIL {
            let node = self.node(at);
            push(
                heap,
                Piece {
                    weight: node.best,
                    rank: base,
                    node: at,
                    whole: node.size > 1,
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
            let node = self.node(at);
            let rank = base + self.size(node.left);
            let here = Piece {
                weight: node.weight,
                rank,
                node: at,
                whole: false,
            };
            match node.flags & BEST_MASK {
                BEST_LEFT if node.left != NIL => {
                    push(heap, here);
                    self.push_whole(heap, node.right, rank + 1);
                    at = node.left;
                }
                BEST_RIGHT if node.right != NIL => {
                    self.push_whole(heap, node.left, base);
                    push(heap, here);
                    base = rank + 1;
                    at = node.right;
                }
                _ => {
                    self.push_whole(heap, node.left, base);
                    self.push_whole(heap, node.right, rank + 1);
                    return at;
                }
            }
        }
    }

    /// The rank of the entry with the earliest fade time (the first in
    /// content order among equal times).
    fn first_fading_rank(&self) -> Option<u32> {
        let (mut at, mut base) = (self.root, 0);
        loop {
            if at == NIL {
                return None;
            }
            let node = self.node(at);
            if node.flags & ANY_FADES == 0 {
                return None;
            }
            let rank = base + self.size(node.left);
            match node.flags & FIRST_MASK {
                FIRST_LEFT => at = node.left,
                FIRST_RIGHT => {
                    base = rank + 1;
                    at = node.right;
                }
                _ => return Some(rank),
            }
        }
    }
}

/// The entries in content order (see [`Suggestions::iter`]).
#[derive(Clone)]
pub struct Iter<'a> {
    tree: &'a Suggestions,
    /// The nodes still to yield whose left subtrees are done, deepest last.
    stack: Vec<u32>,
}

impl Iter<'_> {
    fn descend(&mut self, mut at: u32) {
        while at != NIL {
            self.stack.push(at);
            at = self.tree.node(at).left;
        }
    }
}

impl<'a> Iterator for Iter<'a> {
    type Item = Entry<'a>;

    fn next(&mut self) -> Option<Entry<'a>> {
        let at = self.stack.pop()?;
        let tree: &'a Suggestions = self.tree;
        let node = tree.node(at);
        self.descend(node.right);
        Some((&node.content, node.weight, node.fade_at()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A fixed-seed xorshift: the same operations on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    impl Suggestions {
        /// Checks every invariant by a walk of the whole tree: order,
        /// balance, every figure of every node, the arena holding exactly
        /// the linked nodes, the contents' bytes.
        fn check(&self) {
            let mut seen = vec![false; self.arena_len()];
            let mut last: Option<&[u8]> = None;
            self.check_at(self.root, &mut seen, &mut last);
            assert!(seen.iter().all(|&s| s), "a slot not in the tree");
            assert_eq!(self.len(), self.arena_len());
            let outside = self.iter().filter(|(c, _, _)| c.len() > INLINE);
            let bytes: usize = outside.clone().map(|(c, _, _)| block(c.len())).sum();
            assert_eq!(self.content_bytes, bytes);
            assert_eq!(self.content_blocks as usize, outside.count());
            for (index, chunk) in self.chunks.iter().enumerate() {
                assert!(chunk.len() <= CHUNK && !chunk.is_empty());
                if index + 1 < self.chunks.len() {
                    assert_eq!(chunk.len(), CHUNK);
                }
            }
        }

        fn check_at<'a>(&'a self, at: u32, seen: &mut [bool], last: &mut Option<&'a [u8]>) {
            if at == NIL {
                return;
            }
            assert!(
                !std::mem::replace(&mut seen[at as usize], true),
                "node twice"
            );
            let node = self.node(at);
            self.check_at(node.left, seen, last);
            assert!(!node.content.is_empty());
            if let Some(before) = *last {
                assert!(before < &*node.content, "out of order");
            }
            *last = Some(&node.content);
            assert!(!node.weight.is_nan());
            assert!(node.weight != 0.0 || node.weight.is_sign_positive(), "-0.0");
            self.check_at(node.right, seen, last);
            let (hl, hr) = (self.height(node.left), self.height(node.right));
            assert!(hl.abs_diff(hr) <= 1, "unbalanced");
            assert_eq!(node.height, hl.max(hr) + 1);
            assert_eq!(node.size, self.size(node.left) + self.size(node.right) + 1);
            // The best: the heaviest, the greatest content among equals.
            let mut candidates = vec![(node.weight, 1u8)];
            if node.left != NIL {
                candidates.push((self.node(node.left).best, 0));
            }
            if node.right != NIL {
                candidates.push((self.node(node.right).best, 2));
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
            if node.left != NIL && self.node(node.left).flags & ANY_FADES != 0 {
                fades.push((self.node(node.left).first_fade, 0u8));
            }
            if let Some(at) = node.fade_at() {
                fades.push((at, 1));
            }
            if node.right != NIL && self.node(node.right).flags & ANY_FADES != 0 {
                fades.push((self.node(node.right).first_fade, 2));
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

    fn hints<'a>(tree: &'a Suggestions, prefix: &str, count: usize) -> Vec<(&'a str, f64)> {
        tree.hint(prefix.as_bytes(), count, 0)
            .into_iter()
            .map(|(c, w)| (std::str::from_utf8(c).unwrap(), w))
            .collect()
    }

    fn of(entries: &[(&str, f64)]) -> Suggestions {
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
        let height = u64::from(tree.height(tree.root));
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
        assert_eq!(size_of::<Node>(), 72);
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
        assert_eq!(tree.chunks.len(), 2);
        assert_eq!(tree.memory(), empty + 96 + 2 * 65_536 + 32 + 32);
        // The arena gives memory back as entries go.
        for n in 0..CHUNK + 1 {
            tree.remove(format!("{n:08}").as_bytes());
        }
        tree.check();
        assert_eq!(tree.chunks.len(), 1);
        assert!(
            tree.memory() <= empty + 96 + 1024 + 32 + 32,
            "{}",
            tree.memory()
        );
        assert_eq!(tree.allocations(), 1 + 1 + 2);
    }

    /// A hint through the kept answers, its contents read both ways (with
    /// the weights from the tree, and alone from the copied text): the
    /// same.
    fn kept(tree: &Suggestions, prefix: &str, count: usize, now: i64, keep: usize) -> Vec<String> {
        let text = |c: &[u8]| String::from_utf8(c.to_vec()).unwrap();
        let (weighed, _): (Vec<String>, _) = tree.hint_with(
            prefix.as_bytes(),
            count,
            || now,
            keep,
            |hints| hints.map(|(c, _)| text(c)).collect(),
        );
        let (alone, searched): (Vec<String>, _) = tree.hint_with(
            prefix.as_bytes(),
            count,
            || now,
            keep,
            |hints| {
                let (copied, rest) = hints.contents();
                copied.chain(rest).map(text).collect()
            },
        );
        // Asked twice at the same time, the second from what the first kept
        // (when it could keep it).
        let keeps = keep > 0 && count <= KEPT_MOST && prefix.len() <= KEPT_PREFIX_BYTES;
        assert!(!(keeps && searched), "{prefix:?} searched twice");
        assert_eq!(weighed, alone);
        alone
    }

    impl HintCache {
        /// The index finds every slot, and only them: one entry each.
        fn check(&self) {
            let entries = self.index.iter().filter(|&&slot| slot != NO_SLOT).count();
            assert_eq!(entries, self.slots.len());
            assert!(self.index.len() >= 2 * self.slots.len());
            for (slot, answer) in self.slots.iter().enumerate() {
                assert_eq!(answer.hash, hash(&answer.prefix));
                assert_eq!(self.find(answer.hash, &answer.prefix), Some(slot));
            }
        }
    }

    fn slots(tree: &Suggestions) -> usize {
        tree.hints.with(|cache| cache.slots.len()).unwrap_or(0)
    }

    /// Whether the answer kept for `prefix` is stale (`None`: none kept).
    fn stale(tree: &Suggestions, prefix: &str) -> Option<bool> {
        tree.hints
            .with(|cache| {
                let slot = cache.find(hash(prefix.as_bytes()), prefix.as_bytes())?;
                Some(cache.slots[slot].stale)
            })
            .flatten()
    }

    /// The hint for `prefix` searched, and kept: the same.
    fn same_kept(tree: &Suggestions, prefix: &str, count: usize) -> Vec<String> {
        let searched: Vec<String> = tree
            .hint(prefix.as_bytes(), count, 0)
            .into_iter()
            .map(|(c, _)| String::from_utf8(c.to_vec()).unwrap())
            .collect();
        assert_eq!(kept(tree, prefix, count, 0, 8), searched, "{prefix:?}");
        tree.hints.with(HintCache::check);
        searched
    }

    #[test]
    fn kept_answers_copy_contents_up_to_a_bound() {
        // 12 entries of 300 bytes (the last of 23): 6 fit in the text.
        let mut tree = Suggestions::default();
        let long = |n: usize| format!("{n:02}{}", "x".repeat(298 - n));
        for n in 0..12 {
            tree.set(long(n).as_bytes(), n as f64, None).unwrap();
        }
        tree.set(b"zz", 100.0, None).unwrap();
        let all: Vec<String> = (0..12).rev().map(long).collect();
        assert_eq!(kept(&tree, "0", 12, 0, 4), all[2..]);
        assert_eq!(kept(&tree, "", 12, 0, 4)[1..], all[..11]);
        tree.hints.with(|cache| {
            for answer in &cache.slots {
                assert!(answer.text.len() <= KEPT_TEXT_BYTES);
                let copied: usize = answer
                    .nodes
                    .iter()
                    .take(answer.lens.len())
                    .map(|&at| tree.node(at).content.len())
                    .sum();
                assert_eq!(copied, answer.text.len());
                let next = answer
                    .nodes
                    .get(answer.lens.len())
                    .map_or(0, |&at| tree.node(at).content.len());
                assert!(
                    answer.lens.len() == answer.nodes.len()
                        || answer.text.len() + next > KEPT_TEXT_BYTES
                );
            }
            assert!(cache
                .slots
                .iter()
                .any(|answer| answer.lens.len() < answer.nodes.len()));
        });
        // Fewer asked than copied, and more.
        assert_eq!(kept(&tree, "", 3, 0, 4), ["zz", &all[0], &all[1]]);
        assert_eq!(kept(&tree, "", 13, 0, 4)[1..], all[..]);
    }

    #[test]
    fn a_fade_time_moved_brings_back_an_entry_a_kept_answer_passed_over() {
        let mut tree = of(&[("a2", 5.0)]);
        tree.set(b"a1", 10.0, Some(100)).unwrap();
        assert_eq!(kept(&tree, "a", 10, 200, 4), ["a2"]);
        assert!(tree.set_fade(b"a1", None));
        assert_eq!(kept(&tree, "a", 10, 200, 4), ["a1", "a2"]);
        assert!(tree.set_fade(b"a1", Some(150)));
        assert_eq!(kept(&tree, "a", 10, 200, 4), ["a2"]);
        tree.feed(b"a1", 1.0, Some(300)).unwrap();
        assert_eq!(kept(&tree, "a", 10, 200, 4), ["a1", "a2"]);
        // A fade at the end of time: gone at i64::MAX (the answer is
        // searched again from just before it).
        tree.set(b"a1", 11.0, Some(i64::MAX)).unwrap();
        let at = |now: i64| -> Vec<Vec<u8>> {
            let (hints, _) = tree.hint_with(
                b"a",
                10,
                || now,
                4,
                |hints| hints.map(|(c, _)| c.to_vec()).collect(),
            );
            hints
        };
        assert_eq!(at(i64::MAX - 2), [b"a1", b"a2"]);
        assert_eq!(at(i64::MAX - 1), [b"a1", b"a2"]);
        assert_eq!(at(i64::MAX), [b"a2"]);
    }

    #[test]
    fn kept_hints_outlive_the_writes_that_cannot_change_them() {
        let mut tree = of(&[
            ("apple", 50.0),
            ("apricot", 40.0),
            ("avocado", 30.0),
            ("banana", 20.0),
        ]);
        // a00 … a19 weigh 0 … 19, a19 last in the arena.
        for n in 0..20 {
            tree.set(format!("a{n:02}").as_bytes(), f64::from(n), None)
                .unwrap();
        }
        // "a" holds 10 of 23 (apple, apricot, avocado, a19 … a13), "b"
        // every entry under it, "ap" both of its.
        let top = same_kept(&tree, "a", 3);
        assert_eq!(top, ["apple", "apricot", "avocado"]);
        same_kept(&tree, "b", 3);
        same_kept(&tree, "ap", 3);
        same_kept(&tree, "", 3);
        let fresh =
            |tree: &Suggestions| ["a", "b", "ap", ""].map(|p| stale(tree, p) == Some(false));
        assert_eq!(fresh(&tree), [true; 4]);
        // An entry under none of the prefixes but "".
        tree.feed(b"cherry", 1.0, None).unwrap();
        assert_eq!(fresh(&tree), [true; 4]);
        // A new entry, and a lighter one, below the last of "a"'s full
        // answer: they stay out of it.
        tree.set(b"aardvark", 5.0, None).unwrap();
        tree.feed(b"a00", 1.0, None).unwrap();
        tree.set(b"a12", 13.0, None).unwrap(); // ties a13: a12 < a13
        assert_eq!(fresh(&tree), [true; 4]);
        // Removing an entry outside the answers moves the arena's last
        // node (a member of "a", "" too) into its slot: renamed there.
        assert!(tree.remove(b"a00"));
        tree.check();
        assert_eq!(fresh(&tree), [true; 4]);
        assert_eq!(same_kept(&tree, "a", 10)[3], "a19");
        assert_eq!(fresh(&tree), [true; 4]);
        // A fade time on an entry outside the answers changes nothing.
        assert!(tree.set_fade(b"a01", Some(5)));
        assert_eq!(fresh(&tree), [true; 4]);
        // An entry that enters "a"'s answer: "a" and "" (it outranks
        // their last) go stale, "ap" and "b" stay.
        tree.feed(b"a05", 100.0, None).unwrap();
        assert_eq!(fresh(&tree), [false, true, true, false]);
        assert_eq!(same_kept(&tree, "a", 2), ["a05", "apple"]);
        same_kept(&tree, "", 3);
        // A member's weight, even lowered: stale.
        tree.set(b"apricot", 45.0, None).unwrap();
        assert_eq!(fresh(&tree), [false, true, false, false]);
        same_kept(&tree, "a", 10);
        same_kept(&tree, "ap", 3);
        same_kept(&tree, "", 3);
        // A member's fade time: stale (banana is in "b" and "").
        assert!(tree.set_fade(b"banana", Some(1_000)));
        assert_eq!(fresh(&tree), [true, false, true, false]);
        same_kept(&tree, "b", 3);
        same_kept(&tree, "", 3);
        // An answer that held every entry under its prefix takes any new
        // one, however light.
        tree.set(b"blueberry", -1.0, None).unwrap();
        assert_eq!(fresh(&tree), [true, false, true, true]);
        assert_eq!(same_kept(&tree, "b", 3), ["banana", "blueberry"]);
        // Removing a member (of "b" and "").
        assert!(tree.remove(b"banana"));
        assert_eq!(fresh(&tree), [true, false, true, false]);
        assert_eq!(same_kept(&tree, "b", 3), ["blueberry"]);
        // Many answers (more than a content's prefixes: probed, not
        // scanned): the same.
        for n in 0..8 {
            same_kept(&tree, &format!("a{n}"), 3);
        }
        tree.feed(b"a17", 1_000.0, None).unwrap();
        assert_eq!(stale(&tree, "a1"), Some(true));
        assert_eq!(stale(&tree, "a0"), Some(false));
        assert_eq!(same_kept(&tree, "a1", 1), ["a17"]);
    }

    #[test]
    fn kept_hints_are_bounded_counted_and_answer_until_a_write_to_them_or_a_fade() {
        let mut tree = of(&[("aa", 5.0), ("ab", 4.0), ("ac", 3.0), ("b", 1.0)]);
        tree.set(b"ad", 9.0, Some(100)).unwrap();
        let bare = tree.memory();
        let allocations = tree.allocations();
        assert_eq!(kept(&tree, "a", 2, 50, 2), ["ad", "aa"]);
        // One prefix kept: the cache, its slot, the index, its prefix,
        // nodes, text and lengths.
        assert_eq!(slots(&tree), 1);
        assert!(tree.memory() > bare);
        assert_eq!(tree.allocations(), allocations + 7);
        tree.hints.with(|cache| {
            let answer = &cache.slots[0];
            // Searched for at least KEPT_LEAST, so the whole prefix here.
            assert_eq!((answer.asked, answer.nodes.len()), (KEPT_LEAST, 4));
            assert_eq!(
                (&answer.text[..], &answer.lens[..]),
                (&b"adaaabac"[..], &[2; 4][..])
            );
            // No faded entry passed over: good at any time before 100.
            assert_eq!((answer.since, answer.until), (i64::MIN, 100));
        });
        // COUNT larger than asked: the answer held every entry, no search.
        assert_eq!(kept(&tree, "a", 20, 60, 2), ["ad", "aa", "ab", "ac"]);
        // The fade of an entry answered: searched again from then on.
        assert_eq!(kept(&tree, "a", 3, 100, 2), ["aa", "ab", "ac"]);
        assert_eq!(
            tree.hints.with(|cache| cache.slots[0].until),
            Some(i64::MAX)
        );
        // A clock that went back: searched again (the entry shows again).
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ad"]);
        // Each write answers anew.
        tree.feed(b"ac", 10.0, None).unwrap();
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ac"]);
        tree.remove(b"ac");
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ad"]);
        tree.set(b"ab", 20.0, None).unwrap();
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ab"]);
        tree.set_fade(b"ab", Some(10));
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ad"]);
        tree.fade(99, 10);
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ad"]);
        // A refused write too (nothing changed, the answer is the same).
        assert_eq!(
            tree.feed(b"aa", f64::NAN, None),
            Err(WriteError::NotANumber)
        );
        assert_eq!(kept(&tree, "a", 1, 99, 2), ["ad"]);
        // At most `keep` prefixes, the least asked replaced.
        for prefix in ["", "a", "b", "c", "aa", "ab"] {
            kept(&tree, prefix, 10, 99, 2);
            assert!(slots(&tree) <= 2);
        }
        assert_eq!(kept(&tree, "", 10, 99, 2), ["ad", "aa", "b"]);
        // Many prefixes through a few slots: each replacement leaves the
        // index whole (prefixes that collide included, in a small index).
        for round in 0..3 {
            for n in 0..200 {
                let prefix = format!("{}{n}", ["a", "b", "x"][n % 3]);
                let expected: Vec<String> = tree
                    .hint(prefix.as_bytes(), 10, 99)
                    .into_iter()
                    .map(|(c, _)| String::from_utf8(c.to_vec()).unwrap())
                    .collect();
                assert_eq!(kept(&tree, &prefix, 10, 99, 5 + round), expected);
                tree.hints.with(HintCache::check);
                assert!(slots(&tree) <= 5 + round);
            }
        }
        // More than KEPT_MOST, or a prefix longer than KEPT_PREFIX_BYTES: not
        // kept.
        let before = tree.memory();
        kept(&tree, "", KEPT_MOST + 1, 99, 2);
        kept(&tree, &"a".repeat(KEPT_PREFIX_BYTES + 1), 10, 99, 2);
        assert_eq!(tree.memory(), before);
        // A lower bound drops the extra ones; 0 drops them all.
        kept(&tree, "b", 10, 99, 1);
        assert_eq!(slots(&tree), 1);
        assert_eq!(kept(&tree, "a", 10, 99, 0), ["ad", "aa"]);
        assert_eq!(tree.memory(), bare);
        assert_eq!(tree.allocations(), allocations);
        // A copy keeps none.
        kept(&tree, "a", 10, 99, 8);
        assert_eq!(slots(&tree.clone()), 0);
        // What a prefix kept takes: about 200 bytes for COUNT 10 and a
        // short prefix, and the text of its entries, at most about 530 and
        // KEPT_TEXT_BYTES (the docs say so).
        let mut big = Suggestions::default();
        for n in 0..1_000 {
            big.set(
                format!("{n:03}{}", "x".repeat(70)).as_bytes(),
                f64::from(n),
                None,
            )
            .unwrap();
        }
        let bare = big.memory();
        for n in 0..64 {
            kept(&big, &format!("{:03}", n * 10)[..2], 10, 0, 64);
        }
        let short = (big.memory() - bare) / 64;
        let text = block(10 * 73) + block(10 * 4);
        assert!(
            (150..=260).contains(&(short - text)),
            "{short} bytes a short prefix"
        );
        for n in 0..64 {
            let prefix = format!("{n:03}{}", "x".repeat(61));
            assert_eq!(prefix.len(), KEPT_PREFIX_BYTES);
            kept(&big, &prefix, KEPT_MOST, 0, 64);
        }
        let most = (big.memory() - bare) / 64;
        // (A slot keeps the blocks of the answer it held before.)
        let text = block(KEPT_TEXT_BYTES) + block(KEPT_MOST * 4);
        assert!(most <= 530 + text, "{most} bytes a prefix at most");
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
                    tree.hints.with(HintCache::check);
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
