//! What a bounded push does to a list, without the server: which of the
//! items given are pushed, which never fit, and how many of the list's own
//! items fall out.

#![forbid(unsafe_code)]

use std::ops::Range;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// Write only what fits.
    Refuse,
    /// Make room: the oldest items fall out.
    Evict,
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Plan {
    /// The items given that are pushed, in the order given.
    pub pushed: Range<usize>,
    /// The items given that are not written: refused, or (`EVICT`) fallen
    /// out at once, being older than the `maxlen` last ones.
    pub dropped: Range<usize>,
    /// How many of the list's items are popped from its other end.
    pub popped: usize,
}

impl Plan {
    /// The plan for `given` items pushed onto a list of `len` items that may
    /// hold `maxlen` (at least 1).
    pub fn new(mode: Mode, maxlen: usize, len: usize, given: usize) -> Self {
        match mode {
            Mode::Refuse => {
                let kept = given.min(maxlen.saturating_sub(len));
                Plan {
                    pushed: 0..kept,
                    dropped: kept..given,
                    popped: 0,
                }
            }
            Mode::Evict => {
                let kept = given.min(maxlen);
                Plan {
                    pushed: given - kept..given,
                    dropped: 0..given - kept,
                    // At most `len`, as `kept <= maxlen`: the list never empties.
                    popped: len.saturating_add(kept).saturating_sub(maxlen),
                }
            }
        }
    }

    /// How many of the items given the list keeps.
    pub fn kept(&self) -> usize {
        self.pushed.len()
    }

    /// How many items fall out with `EVICT`: the list's own, then those given
    /// that never fitted.
    pub fn evicted(&self) -> usize {
        self.popped + self.dropped.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Mode, Plan};

    /// The list after pushing `given` at the tail of `list` as `RPUSH` +
    /// `LTRIM` would leave it, and what went: the model the plan must match.
    fn model(
        mode: Mode,
        maxlen: usize,
        list: &[u32],
        given: &[u32],
    ) -> (Vec<u32>, Vec<u32>, usize) {
        let mut all: Vec<u32> = list.iter().chain(given).copied().collect();
        match mode {
            // RPUSH + LTRIM 0 maxlen-1, but the list's own items never go.
            Mode::Refuse => {
                let keep = all.len().min(maxlen.max(list.len()));
                let kept = keep.saturating_sub(list.len());
                all.truncate(keep);
                (all, Vec::new(), kept)
            }
            // RPUSH + LTRIM -maxlen -1.
            Mode::Evict => {
                let cut = all.len().saturating_sub(maxlen);
                let evicted = all.drain(..cut).collect();
                (all, evicted, given.len().min(maxlen))
            }
        }
    }

    fn apply(
        mode: Mode,
        maxlen: usize,
        list: &[u32],
        given: &[u32],
    ) -> (Vec<u32>, Vec<u32>, usize) {
        let plan = Plan::new(mode, maxlen, list.len(), given.len());
        let mut after = list.to_vec();
        after.extend(&given[plan.pushed.clone()]);
        let mut evicted: Vec<u32> = after.drain(..plan.popped).collect();
        if mode == Mode::Evict {
            evicted.extend(&given[plan.dropped.clone()]);
            assert_eq!(evicted.len(), plan.evicted());
        }
        assert!(plan.popped < list.len() + plan.kept() || plan.kept() == 0);
        (after, evicted, plan.kept())
    }

    #[test]
    fn every_small_case_matches_push_then_trim() {
        for mode in [Mode::Refuse, Mode::Evict] {
            for maxlen in 1..6 {
                for len in 0..8 {
                    for given in 1..8 {
                        let list: Vec<u32> = (0..len).collect();
                        let items: Vec<u32> = (100..100 + given).collect();
                        assert_eq!(
                            apply(mode, maxlen, &list, &items),
                            model(mode, maxlen, &list, &items),
                            "{mode:?} maxlen {maxlen}, {len} in the list, {given} given"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_largest_maxlen_refuses_and_evicts_nothing() {
        let plan = Plan::new(Mode::Evict, usize::MAX, 5, 3);
        assert_eq!((plan.kept(), plan.popped), (3, 0));
        let plan = Plan::new(Mode::Refuse, usize::MAX, 5, 3);
        assert_eq!(plan.kept(), 3);
    }
}
