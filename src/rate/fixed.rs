//! `RATE.FIXED`'s rules, with no server in sight: a fixed-window counter —
//! a plain string integer with a TTL, what `INCR` makes — and the TTL a call
//! leaves on it. `src/rate.rs` reads the key, stores the outcome and
//! replicates it.

#![forbid(unsafe_code)]

/// The longest TTL `BACKOFF` sets: 2^53 − 1 ms (the largest integer a
/// double holds exactly, where Lua's and JavaScript's arithmetic stops).
pub const BACKOFF_CAP_MS: i64 = (1 << 53) - 1;

/// What happens to the TTL of a counter over `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Over {
    /// Nothing more than the window's own rules.
    Nothing,
    /// `BLOCK ms`: the call that takes the counter from ≤ max to > max sets
    /// the TTL to `ms`.
    Block(i64),
    /// `EXTEND`: the TTL becomes the period whenever the counter is > max.
    Extend,
    /// `BACKOFF`: the TTL becomes period × 2^(counter − max − 1), at most
    /// [`BACKOFF_CAP_MS`], whenever the counter is > max.
    Backoff,
}

/// A parsed call: `period [COST cost] [MAX max [BLOCK ms | EXTEND |
/// BACKOFF]] [RENEW]` (a waiter carries it until its turn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The window in ms; 0: no expiry.
    pub period_ms: i64,
    pub cost: i64,
    pub max: Option<i64>,
    pub over: Over,
    /// `RENEW`: the TTL becomes the period on every call.
    pub renew: bool,
}

/// What a call leaves on the key's TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ttl {
    /// As it was (none on a new key).
    Keep,
    /// Set to end this many ms from now.
    Set(i64),
}

/// A call's outcome: the counter after it and its TTL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub before: i64,
    pub counter: i64,
    pub ttl: Ttl,
}

/// The sum passes the range of a signed 64-bit integer (`INCRBY`'s error).
#[derive(Debug, PartialEq, Eq)]
pub struct Overflow;

impl Rule {
    /// The outcome on a counter holding `current` (`None`: no key) whose TTL
    /// is set or not (`has_ttl`).
    pub fn outcome(&self, current: Option<i64>, has_ttl: bool) -> Result<Outcome, Overflow> {
        let before = current.unwrap_or(0);
        let counter = before.checked_add(self.cost).ok_or(Overflow)?;
        let window = self.period_ms > 0 && (current.is_none() || !has_ttl || self.renew);
        let mut ttl = if window {
            Ttl::Set(self.period_ms)
        } else {
            Ttl::Keep
        };
        if let Some(max) = self.max {
            match self.over {
                Over::Block(ms) if before <= max && counter > max => ttl = Ttl::Set(ms),
                Over::Extend if counter > max => ttl = Ttl::Set(self.period_ms),
                Over::Backoff if counter > max => {
                    ttl = Ttl::Set(backoff(self.period_ms, counter - max - 1));
                }
                _ => {}
            }
        }
        Ok(Outcome {
            before,
            counter,
            ttl,
        })
    }

    /// Whether a call that waits (`WAIT`) takes its turn behind the clients
    /// already waiting on the key: one whose cost adds to the counter. A cost
    /// of 0 or below can never take the counter over `max`: it applies at
    /// once whatever is queued, and the room it makes goes to the queue's
    /// head.
    pub fn queues(&self) -> bool {
        self.cost > 0
    }

    /// Whether a call that waits (`WAIT`) must wait for room: it adds to the
    /// counter and would take it over `max`.
    pub fn must_wait(&self, outcome: &Outcome) -> bool {
        self.queues() && self.max.is_some_and(|max| outcome.counter > max)
    }
}

/// `period × 2^exponent`, at most [`BACKOFF_CAP_MS`].
pub fn backoff(period_ms: i64, exponent: i64) -> i64 {
    let factor = u32::try_from(exponent)
        .ok()
        .and_then(|exponent| 1i64.checked_shl(exponent))
        .filter(|factor| *factor > 0);
    factor
        .and_then(|factor| period_ms.checked_mul(factor))
        .map_or(BACKOFF_CAP_MS, |ms| ms.min(BACKOFF_CAP_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(period_ms: i64, cost: i64) -> Rule {
        Rule {
            period_ms,
            cost,
            max: None,
            over: Over::Nothing,
            renew: false,
        }
    }

    fn run(rule: Rule, current: Option<i64>, has_ttl: bool) -> (i64, Ttl) {
        let outcome = rule.outcome(current, has_ttl).unwrap();
        (outcome.counter, outcome.ttl)
    }

    #[test]
    fn a_window_starts_with_the_first_call() {
        assert_eq!(run(rule(1000, 1), None, false), (1, Ttl::Set(1000)));
        assert_eq!(run(rule(1000, 3), Some(4), true), (7, Ttl::Keep));
        // A counter without a TTL gets the period; period 0 sets none.
        assert_eq!(run(rule(1000, 1), Some(4), false), (5, Ttl::Set(1000)));
        assert_eq!(run(rule(0, 1), None, false), (1, Ttl::Keep));
        assert_eq!(run(rule(0, -2), Some(4), false), (2, Ttl::Keep));
        let renew = Rule {
            renew: true,
            ..rule(500, 1)
        };
        assert_eq!(run(renew, Some(4), true), (5, Ttl::Set(500)));
    }

    #[test]
    fn an_overflow_is_refused() {
        assert_eq!(rule(1, 1).outcome(Some(i64::MAX), true), Err(Overflow));
        assert_eq!(rule(1, -1).outcome(Some(i64::MIN), true), Err(Overflow));
        assert_eq!(
            rule(1, i64::MIN).outcome(None, false).unwrap().counter,
            i64::MIN
        );
    }

    #[test]
    fn block_is_set_by_the_call_that_crosses_max() {
        let block = Rule {
            max: Some(2),
            over: Over::Block(9000),
            ..rule(1000, 1)
        };
        assert_eq!(run(block, Some(1), true), (2, Ttl::Keep));
        assert_eq!(run(block, Some(2), true), (3, Ttl::Set(9000)));
        // Already over: the window's own rules.
        assert_eq!(run(block, Some(3), true), (4, Ttl::Keep));
        assert_eq!(run(block, Some(3), false), (4, Ttl::Set(1000)));
        // A cost that jumps over max from a fresh key blocks too.
        let jump = Rule { cost: 5, ..block };
        assert_eq!(run(jump, None, false), (5, Ttl::Set(9000)));
    }

    #[test]
    fn extend_and_backoff_act_while_over_max() {
        let extend = Rule {
            max: Some(2),
            over: Over::Extend,
            ..rule(1000, 1)
        };
        assert_eq!(run(extend, Some(1), true), (2, Ttl::Keep));
        assert_eq!(run(extend, Some(2), true), (3, Ttl::Set(1000)));
        let backoff_rule = Rule {
            over: Over::Backoff,
            ..extend
        };
        assert_eq!(run(backoff_rule, Some(2), true), (3, Ttl::Set(1000)));
        assert_eq!(run(backoff_rule, Some(3), true), (4, Ttl::Set(2000)));
        assert_eq!(run(backoff_rule, Some(5), true), (6, Ttl::Set(8000)));
        assert_eq!(
            run(backoff_rule, Some(i64::MAX - 1), true),
            (i64::MAX, Ttl::Set(BACKOFF_CAP_MS))
        );
    }

    #[test]
    fn backoff_is_capped() {
        assert_eq!(backoff(1000, 0), 1000);
        assert_eq!(backoff(1000, 10), 1_024_000);
        assert_eq!(backoff(1, 52), 1 << 52);
        assert_eq!(backoff(1, 53), BACKOFF_CAP_MS);
        assert_eq!(backoff(1000, 62), BACKOFF_CAP_MS);
        assert_eq!(backoff(1000, 63), BACKOFF_CAP_MS);
        assert_eq!(backoff(1000, 64), BACKOFF_CAP_MS);
        assert_eq!(backoff(1000, i64::MAX), BACKOFF_CAP_MS);
        assert_eq!(backoff(3_155_760_000_000, 40), BACKOFF_CAP_MS);
    }

    #[test]
    fn only_a_cost_that_takes_the_counter_over_max_waits() {
        let wait = Rule {
            max: Some(2),
            ..rule(1000, 1)
        };
        let at = |current| wait.outcome(Some(current), true).unwrap();
        assert!(!wait.must_wait(&at(1)));
        assert!(wait.must_wait(&at(2)));
        let reward = Rule { cost: -1, ..wait };
        assert!(!reward.must_wait(&reward.outcome(Some(9), true).unwrap()));
        let peek = Rule { cost: 0, ..wait };
        assert!(!peek.must_wait(&peek.outcome(Some(9), true).unwrap()));
        // Only a call that adds waits behind those already waiting.
        assert!(wait.queues());
        assert!(!reward.queues() && !peek.queues());
    }
}
