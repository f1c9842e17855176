//! Rate-limit decisions, with no server in sight: limits, the two
//! algorithms (GCRA and the exact sliding window) over an injected clock, and
//! the decision a call replies with. `src/rate.rs` stores the state in a key
//! and replicates it.
//!
//! Times in the state are absolute (GCRA: nanoseconds; sliding window: the
//! server's milliseconds), so a replica or an AOF replay holding the same
//! state makes the same next decision whatever its own clock says.

#![forbid(unsafe_code)]

/// The longest `period` accepted, and the longest a GCRA limit may take to
/// refill from empty (`burst × period / max`): 100 years of 365.25 days.
pub const MAX_PERIOD_MS: i64 = 36_525 * 86_400_000;
/// The largest `max`, `burst` and cost.
pub const MAX_COUNT: i64 = (1 << 31) - 1;
/// The most limits one call checks (`recipes.rate-max-limits` may lower it).
pub const MAX_LIMITS: usize = 16;

const NS_PER_MS: i128 = 1_000_000;

/// One limit: `max` actions per `period` ms, and (GCRA only) bursts of up to
/// `burst` actions from an idle limiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub max: i64,
    pub period_ms: i64,
    pub burst: i64,
}

/// What a call answers: the five fields of `CL.THROTTLE`, times in ms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    pub limited: bool,
    /// The most actions the deciding limit allows at once (its burst; `max`
    /// for a sliding window).
    pub limit: i64,
    /// Actions of cost 1 the deciding limit still allows now.
    pub remaining: i64,
    /// Milliseconds until this call would be allowed; -1 when it was.
    pub retry_after_ms: i64,
    /// Milliseconds until the deciding limit is back to full.
    pub reset_after_ms: i64,
    /// Milliseconds until the deciding limit frees its next action: for a
    /// sliding window, until the oldest action it counts leaves the window;
    /// for GCRA, until `remaining` grows by one. 0 when it counts nothing.
    pub refill_after_ms: i64,
}

impl Decision {
    /// Among the limits' own decisions, the one that decides the call: when
    /// it is refused, the refusing limit that frees last (its retry-after is
    /// the call's); when allowed, the limit with the fewest remaining actions.
    /// Ties go to the first limit given.
    fn deciding(decisions: impl Iterator<Item = Decision>) -> Option<Decision> {
        decisions.reduce(|best, next| {
            let better = match (best.limited, next.limited) {
                (false, true) => true,
                (true, true) => next.retry_after_ms > best.retry_after_ms,
                (false, false) => next.remaining < best.remaining,
                (true, false) => false,
            };
            if better {
                next
            } else {
                best
            }
        })
    }
}

/// Nanoseconds to milliseconds, rounded up: waiting that long is enough.
fn ceil_ms(ns: i128) -> i64 {
    let ms = (ns.max(0) + NS_PER_MS - 1) / NS_PER_MS;
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// GCRA for one limit: each action of cost `n` moves the limit's theoretical
/// arrival time (TAT) `n × interval` later; an action is allowed when that
/// leaves the TAT at most `tolerance` ahead of now.
#[derive(Clone, Copy, Debug)]
pub struct Gcra {
    /// `period / max`, rounded up to the nanosecond (so never more than `max`
    /// actions per `period`).
    interval_ns: i128,
    /// `burst × interval`.
    tolerance_ns: i128,
    burst: i64,
}

impl Default for Gcra {
    /// One action per nanosecond: a placeholder for an unused slot.
    fn default() -> Self {
        Self {
            interval_ns: 1,
            tolerance_ns: 1,
            burst: 1,
        }
    }
}

/// A limit whose `burst × period / max` passes [`MAX_PERIOD_MS`].
#[derive(Debug, PartialEq, Eq)]
pub struct TooSlow;

impl Gcra {
    pub fn new(limit: Limit) -> Result<Self, TooSlow> {
        let period_ns = i128::from(limit.period_ms) * NS_PER_MS;
        let max = i128::from(limit.max.max(1));
        let interval_ns = (period_ns + max - 1) / max;
        let tolerance_ns = interval_ns * i128::from(limit.burst);
        if tolerance_ns > i128::from(MAX_PERIOD_MS) * NS_PER_MS {
            return Err(TooSlow);
        }
        Ok(Self {
            interval_ns,
            tolerance_ns,
            burst: limit.burst,
        })
    }

    /// The decision for an action of `cost` at `now_ns` on a limit whose TAT
    /// is `tat_ns` (0 for a fresh limiter), and the TAT to store if allowed.
    /// The reply describes the limit after the action when `consume`, as it
    /// stands when not (a peek).
    fn decide(&self, tat_ns: i64, now_ns: i64, cost: i64, consume: bool) -> (Decision, i64) {
        let now = i128::from(now_ns);
        let base = i128::from(tat_ns).max(now);
        let new_tat = base + i128::from(cost) * self.interval_ns;
        let allowed_at = new_tat - self.tolerance_ns;
        let limited = allowed_at > now;
        let tat = if limited || !consume { base } else { new_tat };
        let held = tat - now;
        let remaining = (self.tolerance_ns - held).max(0) / self.interval_ns;
        // `remaining` grows by one once `held` has drained to
        // `tolerance - (remaining + 1) × interval` (always > 0 ns away).
        let refill_after_ms = if held > 0 {
            ceil_ms(held - self.tolerance_ns + (remaining + 1) * self.interval_ns)
        } else {
            0
        };
        let decision = Decision {
            limited,
            limit: self.burst,
            remaining: i64::try_from(remaining).unwrap_or(i64::MAX),
            retry_after_ms: if limited {
                ceil_ms(allowed_at - now)
            } else {
                -1
            },
            reset_after_ms: ceil_ms(held),
            refill_after_ms,
        };
        // Bounded by now + 2 × 100 years of nanoseconds: fits an i64.
        (decision, i64::try_from(new_tat).unwrap_or(i64::MAX))
    }
}

/// Decides an action of `cost` at `now_ns` against every GCRA limit at once
/// (`tats`: their stored TATs, same order). Allowed only if every limit
/// allows it; then, when `consume`, `tats` holds the new TATs. Refused or
/// peeked, `tats` is unchanged.
pub fn gcra(limits: &[Gcra], tats: &mut [i64], now_ns: i64, cost: i64, consume: bool) -> Decision {
    let decisions = || {
        limits
            .iter()
            .zip(tats.iter())
            .map(|(limit, &tat)| limit.decide(tat, now_ns, cost, consume))
    };
    let limited = decisions().any(|(decision, _)| decision.limited);
    let decision = Decision::deciding(decisions().map(|(decision, _)| decision));
    if !limited && consume {
        for (limit, tat) in limits.iter().zip(tats.iter_mut()) {
            *tat = limit.decide(*tat, now_ns, cost, consume).1;
        }
    }
    decision.unwrap_or(FRESH)
}

/// A decision for a call with no limits (never made: a call has at least one).
const FRESH: Decision = Decision {
    limited: false,
    limit: 0,
    remaining: 0,
    retry_after_ms: -1,
    reset_after_ms: 0,
    refill_after_ms: 0,
};

/// When the GCRA state stops mattering: the latest TAT, in ms rounded up.
/// From then on every limit is full, as for a fresh limiter.
pub fn gcra_idle_at_ms(tats: &[i64]) -> i64 {
    ceil_ms(i128::from(tats.iter().copied().max().unwrap_or(0)))
}

/// One entry of a sliding window: `cost` actions allowed at `at_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub at_ms: i64,
    pub cost: i64,
}

/// The exact sliding window: an action is allowed when, for every limit, the
/// actions in the last `period` ms (`(now - period, now]`) plus this one are
/// at most `max`. `entries` are in time order. The reply describes each
/// limit after the action when `consume`, as it stands when not (a peek).
pub fn sliding(
    limits: &[Limit],
    entries: &[Entry],
    now_ms: i64,
    cost: i64,
    consume: bool,
) -> Decision {
    let one = |limit: &Limit| {
        let start = now_ms.saturating_sub(limit.period_ms);
        let first = entries.partition_point(|entry| entry.at_ms <= start);
        let window = entries.get(first..).unwrap_or(&[]);
        let used = window
            .iter()
            .fold(0i64, |sum, entry| sum.saturating_add(entry.cost));
        let limited = used.saturating_add(cost) > limit.max;
        let mut retry_after_ms = -1;
        if limited {
            // Allowed once enough of the oldest actions have left the window.
            let mut leaving = 0;
            for entry in window {
                leaving = entry.cost.saturating_add(leaving);
                if used.saturating_sub(leaving).saturating_add(cost) <= limit.max {
                    retry_after_ms = entry
                        .at_ms
                        .saturating_add(limit.period_ms)
                        .saturating_sub(now_ms)
                        .max(1);
                    break;
                }
            }
        }
        let oldest = window.first().map(|entry| entry.at_ms);
        let (used, oldest, newest) = if limited || !consume {
            (used, oldest, window.last().map(|entry| entry.at_ms))
        } else {
            let at = newest_at(entries, now_ms);
            (used.saturating_add(cost), oldest.or(Some(at)), Some(at))
        };
        let leaves_after = |at: Option<i64>| {
            at.map_or(0, |at| {
                at.saturating_add(limit.period_ms)
                    .saturating_sub(now_ms)
                    .max(0)
            })
        };
        Decision {
            limited,
            limit: limit.max,
            remaining: limit.max.saturating_sub(used).max(0),
            retry_after_ms,
            reset_after_ms: leaves_after(newest),
            refill_after_ms: leaves_after(oldest),
        }
    };
    Decision::deciding(limits.iter().map(one)).unwrap_or(FRESH)
}

/// The time an action allowed now is recorded at: now, or the newest entry's
/// time if the clock went back (entries stay in order).
pub fn newest_at(entries: &[Entry], now_ms: i64) -> i64 {
    entries
        .last()
        .map_or(now_ms, |entry| entry.at_ms.max(now_ms))
}

/// Records an allowed action of `cost` at `at_ms` (merged into the newest
/// entry when it has the same time) and forgets entries no window of `keep_ms`
/// ending at `at_ms` still sees.
pub fn record(entries: &mut Vec<Entry>, at_ms: i64, cost: i64, keep_ms: i64) {
    match entries.last_mut() {
        Some(last) if last.at_ms == at_ms => last.cost = last.cost.saturating_add(cost),
        _ => entries.push(Entry { at_ms, cost }),
    }
    let start = at_ms.saturating_sub(keep_ms);
    let old = entries.partition_point(|entry| entry.at_ms <= start);
    entries.drain(..old);
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;

    /// The decisions of `RATE.LIMIT` (they consume).
    fn gcra(limits: &[Gcra], tats: &mut [i64], now_ns: i64, cost: i64) -> Decision {
        super::gcra(limits, tats, now_ns, cost, true)
    }

    fn sliding(limits: &[Limit], entries: &[Entry], now_ms: i64, cost: i64) -> Decision {
        super::sliding(limits, entries, now_ms, cost, true)
    }

    #[test]
    fn a_peek_describes_the_limit_as_it_stands() {
        let limits = [Gcra::new(limit(5, 60_000)).unwrap()];
        let mut tats = [0];
        gcra(&limits, &mut tats, T0 * MS, 1);
        gcra(&limits, &mut tats, T0 * MS, 1);
        let before = tats;
        let peek = super::gcra(&limits, &mut tats, T0 * MS, 1, false);
        assert_eq!(tats, before);
        assert_eq!(
            (peek.limited, peek.remaining, peek.reset_after_ms),
            (false, 3, 24_000)
        );
        let taken = gcra(&limits, &mut tats, T0 * MS, 1);
        assert_eq!((taken.remaining, taken.reset_after_ms), (2, 36_000));
        let window = [limit(3, 1_000)];
        let entries = [Entry { at_ms: T0, cost: 1 }];
        let peek = super::sliding(&window, &entries, T0 + 100, 1, false);
        assert_eq!(
            (peek.limited, peek.remaining, peek.reset_after_ms),
            (false, 2, 900)
        );
        let taken = sliding(&window, &entries, T0 + 100, 1);
        assert_eq!((taken.remaining, taken.reset_after_ms), (1, 1_000));
    }
    const T0: i64 = 1_763_000_000_000; // a Unix time in ms

    fn limit(max: i64, period_ms: i64) -> Limit {
        Limit {
            max,
            period_ms,
            burst: max,
        }
    }

    /// The reference: GCRA's equivalent leaky bucket, written from its
    /// definition. The bucket holds `level` ns of work, drains 1 ns per ns,
    /// and an action of cost `n` pours `n × interval` into it if that does
    /// not overflow `burst × interval`.
    struct ModelBucket {
        limit: Limit,
        level_ns: i128,
        last_ms: i64,
    }

    impl ModelBucket {
        fn interval(&self) -> i128 {
            let period = i128::from(self.limit.period_ms) * 1_000_000;
            let max = i128::from(self.limit.max);
            (period + max - 1) / max
        }
        /// (limited, remaining, retry-after ms, reset-after ms)
        fn step(&mut self, now_ms: i64, cost: i64) -> (bool, i64, i64, i64) {
            let t = self.interval();
            let capacity = t * i128::from(self.limit.burst);
            let drained = i128::from(now_ms - self.last_ms) * 1_000_000;
            self.level_ns = (self.level_ns - drained).max(0);
            self.last_ms = now_ms;
            let pour = i128::from(cost) * t;
            let ms_up = |ns: i128| ((ns + 999_999) / 1_000_000) as i64;
            if self.level_ns + pour <= capacity {
                self.level_ns += pour;
                let remaining = (capacity - self.level_ns) / t;
                (false, remaining as i64, -1, ms_up(self.level_ns))
            } else {
                let remaining = (capacity - self.level_ns) / t;
                let retry = ms_up(self.level_ns + pour - capacity);
                (true, remaining as i64, retry, ms_up(self.level_ns))
            }
        }
    }

    /// A small deterministic generator for random schedules.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> i64 {
            (self.next() % n) as i64
        }
    }

    #[test]
    fn gcra_matches_the_reference_model_over_random_schedules() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let max = 1 + rng.below(50);
            let mut lim = limit(max, 1 + rng.below(5_000));
            lim.burst = 1 + rng.below(60);
            let gcra_limit = Gcra::new(lim).unwrap();
            let mut model = ModelBucket {
                limit: lim,
                level_ns: 0,
                last_ms: T0,
            };
            let mut tats = [0i64];
            let mut now = T0;
            for _ in 0..400 {
                now += rng.below(lim.period_ms as u64 / max as u64 + 3);
                let cost = 1 + rng.below(lim.burst.min(4) as u64);
                let got = gcra(&[gcra_limit], &mut tats, now * MS, cost);
                let want = model.step(now, cost);
                assert_eq!(
                    (
                        got.limited,
                        got.remaining,
                        got.retry_after_ms,
                        got.reset_after_ms
                    ),
                    want,
                    "{lim:?} at {now} cost {cost}"
                );
            }
        }
    }

    #[test]
    fn gcra_allows_the_burst_then_one_per_interval() {
        // 5 per minute (the book's login limiter).
        let limits = [Gcra::new(limit(5, 60_000)).unwrap()];
        let mut tats = [0];
        for n in 0..5 {
            let decision = gcra(&limits, &mut tats, T0 * MS, 1);
            assert_eq!(
                decision,
                Decision {
                    limited: false,
                    limit: 5,
                    remaining: 4 - n,
                    retry_after_ms: -1,
                    reset_after_ms: 12_000 * (n + 1),
                    // One action frees every interval.
                    refill_after_ms: 12_000,
                }
            );
        }
        let sixth = gcra(&limits, &mut tats, T0 * MS, 1);
        assert_eq!(
            sixth,
            Decision {
                limited: true,
                limit: 5,
                remaining: 0,
                retry_after_ms: 12_000,
                reset_after_ms: 60_000,
                refill_after_ms: 12_000,
            }
        );
        // 12 s later exactly one more fits.
        assert!(!gcra(&limits, &mut tats, (T0 + 12_000) * MS, 1).limited);
        assert!(gcra(&limits, &mut tats, (T0 + 12_000) * MS, 1).limited);
    }

    #[test]
    fn a_refused_action_consumes_nothing() {
        let limits = [Gcra::new(limit(3, 1_000)).unwrap()];
        let mut tats = [0];
        assert!(!gcra(&limits, &mut tats, T0 * MS, 2).limited);
        let before = tats;
        let refused = gcra(&limits, &mut tats, T0 * MS, 2);
        assert!(refused.limited);
        assert_eq!(refused.remaining, 1);
        assert_eq!(tats, before);
        assert!(!gcra(&limits, &mut tats, T0 * MS, 1).limited);
    }

    #[test]
    fn never_more_than_max_per_period_at_a_steady_rate() {
        // 6000 per second, called every 10 µs of a ms clock: per whole second
        // after the first burst, at most 6000 allowed.
        let limits = [Gcra::new(limit(6_000, 1_000)).unwrap()];
        let mut tats = [0];
        let mut allowed = 0;
        for ms in 0..10_000 {
            for _ in 0..100 {
                allowed += i64::from(!gcra(&limits, &mut tats, (T0 + ms) * MS, 1).limited);
            }
        }
        // The burst (6000) plus 6000 per second for the 10 s.
        assert!(allowed <= 6_000 + 60_000, "{allowed}");
        assert!(allowed >= 6_000 + 59_990, "{allowed}");
    }

    #[test]
    fn several_limits_are_all_or_nothing_and_the_tightest_decides() {
        let limits = [
            Gcra::new(limit(10, 1_000)).unwrap(),
            Gcra::new(limit(3, 3_600_000)).unwrap(),
        ];
        let mut tats = [0, 0];
        let first = gcra(&limits, &mut tats, T0 * MS, 1);
        assert_eq!((first.limit, first.remaining), (3, 2));
        gcra(&limits, &mut tats, T0 * MS, 1);
        gcra(&limits, &mut tats, T0 * MS, 1);
        let before = tats;
        let refused = gcra(&limits, &mut tats, T0 * MS, 1);
        assert!(refused.limited);
        assert_eq!(refused.limit, 3);
        assert_eq!(refused.retry_after_ms, 1_200_000);
        // The per-second limit consumed nothing either.
        assert_eq!(tats, before);
    }

    #[test]
    fn extreme_parameters_do_not_overflow() {
        for (max, period, burst) in [
            (1, 1, 1),
            (MAX_COUNT, 1, MAX_COUNT),
            (MAX_COUNT, MAX_PERIOD_MS, 1),
            (1, MAX_PERIOD_MS, 1),
            (MAX_COUNT, MAX_PERIOD_MS, MAX_COUNT),
        ] {
            let lim = Limit {
                max,
                period_ms: period,
                burst,
            };
            let Ok(g) = Gcra::new(lim) else { continue };
            let mut tats = [0];
            for now in [0, T0, i64::MAX / MS] {
                let d = gcra(&[g], &mut tats, now * MS, burst);
                assert!(d.reset_after_ms >= 0);
                gcra(&[g], &mut tats, now * MS, 1);
            }
        }
        assert_eq!(
            Gcra::new(Limit {
                max: 1,
                period_ms: MAX_PERIOD_MS,
                burst: 2
            })
            .err(),
            Some(TooSlow)
        );
        let fine = Limit {
            max: 1,
            period_ms: MAX_PERIOD_MS,
            burst: 1,
        };
        assert!(Gcra::new(fine).is_ok());
        // The widest window `recipes.rate-sliding-max` allows.
        let big = sliding(
            &[limit(10_000_000, MAX_PERIOD_MS)],
            &[],
            i64::MAX,
            10_000_000,
        );
        assert!(!big.limited);
    }

    /// The reference for the sliding window: every action's time, counted
    /// one by one.
    fn model_allows(times: &[i64], limits: &[Limit], now: i64, cost: i64) -> bool {
        limits.iter().all(|limit| {
            let used = times.iter().filter(|&&t| t > now - limit.period_ms).count() as i64;
            used + cost <= limit.max
        })
    }

    #[test]
    fn the_sliding_window_matches_a_per_action_model_and_never_exceeds_max() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..300 {
            let mut limits = vec![limit(1 + rng.below(20), 1 + rng.below(2_000))];
            if rng.below(2) == 0 {
                limits.push(limit(1 + rng.below(60), 1 + rng.below(20_000)));
            }
            let keep = limits.iter().map(|l| l.period_ms).max().unwrap();
            let mut entries = Vec::new();
            let mut times: Vec<i64> = Vec::new();
            let mut now = T0;
            for _ in 0..300 {
                now += rng.below(200);
                let cost = 1 + rng.below(3);
                if limits.iter().any(|l| cost > l.max) {
                    continue;
                }
                let decision = sliding(&limits, &entries, now, cost);
                assert_eq!(!decision.limited, model_allows(&times, &limits, now, cost));
                if decision.limited {
                    // Waiting retry-after is enough, and not a ms less.
                    let later = now + decision.retry_after_ms;
                    assert!(model_allows(&times, &limits, later, cost));
                    assert!(!model_allows(&times, &limits, later - 1, cost));
                } else {
                    let at = newest_at(&entries, now);
                    record(&mut entries, at, cost, keep);
                    times.extend(std::iter::repeat_n(now, cost as usize));
                    for l in &limits {
                        for &t in &times {
                            let inside = times.iter().filter(|&&u| u > t - l.period_ms && u <= t);
                            assert!(inside.count() as i64 <= l.max);
                        }
                    }
                }
            }
        }
    }

    /// `refill_after_ms` is when `remaining` next grows: a peek a
    /// millisecond before still sees the same `remaining`, a peek then sees
    /// more; 0 exactly when the limit is full.
    #[test]
    fn refill_after_is_when_remaining_next_grows() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for _ in 0..200 {
            let max = 1 + rng.below(20);
            let mut lim = limit(max, 1 + rng.below(3_000));
            let sliding_lim = lim;
            lim.burst = 1 + rng.below(30);
            let gcra_limit = [Gcra::new(lim).unwrap()];
            let mut tats = [0i64];
            let mut entries = Vec::new();
            let mut now = T0;
            for _ in 0..100 {
                now += rng.below(lim.period_ms as u64 / max as u64 + 2);
                let g = gcra(&gcra_limit, &mut tats, now * MS, 1);
                let s = sliding(&[sliding_lim], &entries, now, 1);
                if !s.limited {
                    let at = newest_at(&entries, now);
                    record(&mut entries, at, 1, sliding_lim.period_ms);
                }
                for (decision, full) in [(g, lim.burst), (s, sliding_lim.max)] {
                    assert_eq!(decision.refill_after_ms == 0, decision.remaining == full);
                }
                let peek_g = |at: i64, tats: &mut [i64]| {
                    super::gcra(&gcra_limit, tats, at * MS, 1, false).remaining
                };
                let peek_s =
                    |at: i64| super::sliding(&[sliding_lim], &entries, at, 1, false).remaining;
                let (g_now, s_now) = (peek_g(now, &mut tats), peek_s(now));
                assert_eq!((g_now, s_now), (g.remaining, s.remaining));
                if g.refill_after_ms > 0 {
                    let grows = now + g.refill_after_ms;
                    assert_eq!(peek_g(grows - 1, &mut tats), g_now, "{lim:?} at {now}");
                    assert!(peek_g(grows, &mut tats) > g_now, "{lim:?} at {now}");
                }
                if s.refill_after_ms > 0 {
                    let grows = now + s.refill_after_ms;
                    assert_eq!(peek_s(grows - 1), s_now, "{sliding_lim:?} at {now}");
                    assert!(peek_s(grows) > s_now, "{sliding_lim:?} at {now}");
                }
            }
        }
    }

    #[test]
    fn sliding_reply_fields() {
        let limits = [limit(2, 1_000)];
        let mut entries = Vec::new();
        let first = sliding(&limits, &entries, T0, 1);
        assert_eq!(
            first,
            Decision {
                limited: false,
                limit: 2,
                remaining: 1,
                retry_after_ms: -1,
                reset_after_ms: 1_000,
                refill_after_ms: 1_000,
            }
        );
        record(&mut entries, T0, 1, 1_000);
        record(&mut entries, T0 + 300, 1, 1_000);
        let third = sliding(&limits, &entries, T0 + 500, 1);
        assert_eq!(
            third,
            Decision {
                limited: true,
                limit: 2,
                remaining: 0,
                retry_after_ms: 500,
                reset_after_ms: 800,
                refill_after_ms: 500,
            }
        );
        // Old entries are forgotten once no window sees them.
        record(&mut entries, T0 + 1_000, 1, 1_000);
        assert_eq!(entries.len(), 2);
    }
}
