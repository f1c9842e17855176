//! The answers an AUTOCOMPLETE key keeps: those to the last prefixes
//! hinted (a bounded number, replaced by the clock algorithm), as node
//! numbers of the suggestions' tree (see `core.rs`) and a copy of their
//! first contents, so a hint asked again costs a hash of its prefix, not a
//! search (`search.rs`).
//!
//! An answer is good until the earliest fade time among its own entries
//! (entries left out were faded, and stay so while the clock goes forward,
//! or lighter, so whether they fade changes nothing), and until a write that
//! can change it: a write to an entry concerns only the answers of that
//! entry's prefixes (found by probing each of its prefixes, O(length)), and
//! of those only the answers holding the entry, those it now outranks the
//! last of, and those that held every entry under their prefix. A node
//! moved in the arena (a removal fills the removed node's slot with the
//! arena's last node) is renamed in the answers holding it. Answers are
//! never saved, copied or digested.

#![forbid(unsafe_code)]

use super::core::Suggestions;
use crate::common::memory::block;
use std::cell::Cell;
use std::mem::size_of;

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
pub(super) struct Kept(Cell<Option<Box<HintCache>>>);

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
    /// Bytes held by the answers kept (none before a hint).
    pub(super) fn memory(&self) -> usize {
        self.with(HintCache::memory).unwrap_or(0)
    }

    /// Allocations held by the answers kept.
    pub(super) fn allocations(&self) -> usize {
        self.with(HintCache::allocations).unwrap_or(0)
    }

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
        let rest = nodes
            .skip(copied)
            .map(move |&at| &*tree.entries.node(at).content);
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
        let node = self.tree.entries.node(*self.nodes.next()?);
        Some((&node.content, node.weight))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.nodes.size_hint()
    }
}

impl ExactSizeIterator for Hints<'_> {}

impl Suggestions {
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
        if count == 0 || self.entries.is_empty() {
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
            let len = self.entries.node(at).content.len();
            if bytes + len > KEPT_TEXT_BYTES {
                break;
            }
            bytes += len;
            copied += 1;
        }
        answer.text.reserve_exact(bytes);
        answer.lens.reserve_exact(copied);
        for &at in answer.nodes.iter().take(copied) {
            let content = &self.entries.node(at).content;
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
    pub(super) fn written(&self, content: &[u8], at: u32, weight: Option<f64>) {
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
                                let last = self.entries.node(last);
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
    pub(super) fn moved(&self, from: u32, to: u32) {
        let Some(mut cache) = self.hints.0.take() else {
            return;
        };
        cache.prefixes_of(&self.entries.node(to).content, |answer| {
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
}

#[cfg(test)]
mod tests {
    use super::super::core::tests::of;
    use super::super::core::WriteError;
    use super::*;

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

    impl Suggestions {
        /// Checks the index of the kept answers (see [`HintCache::check`]).
        pub(crate) fn check_kept(&self) {
            self.hints.with(HintCache::check);
        }
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
        tree.check_kept();
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
                    .map(|&at| tree.entries.node(at).content.len())
                    .sum();
                assert_eq!(copied, answer.text.len());
                let next = answer
                    .nodes
                    .get(answer.lens.len())
                    .map_or(0, |&at| tree.entries.node(at).content.len());
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
                tree.check_kept();
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
}
