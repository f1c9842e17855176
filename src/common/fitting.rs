//! How a server string is resized so that its allocation fits its length
//! as a new string's would: the truncation steps the key API takes before
//! writing a string value of another length (`ffi/key.rs`). Pure: a model of
//! the server's string growth, unit-tested here.

#![forbid(unsafe_code)]

/// The most room the server adds to a string it grows past its room
/// (`SDS_MAX_PREALLOC`): below it, the string gets twice the length asked.
const GREEDY_LIMIT: usize = 1 << 20;

/// The lengths to truncate a string of `current` bytes to, before the last
/// truncation to `wanted`, so that it ends in an allocation that fits
/// `wanted` bytes as a new string's does (contents are lost: the caller
/// writes them all). `RedisModule_StringTruncate` alone resizes as `APPEND`
/// does: a string grown past its room gets twice the length asked (the
/// server's `sdsMakeRoomFor`), and a shrunk one keeps its room until more
/// than half of it is unused (then the server reallocates it to fit): a
/// `SLIDING` window of 1,000 entries kept 20.5 KB for its 12 KB.
///
/// So a string is grown one byte past `wanted` first: within its room
/// nothing moves; past it, the server doubles the length, which cutting it
/// back to `wanted` leaves more than half unused: reallocated to fit. Past
/// [`GREEDY_LIMIT`] the server adds that much instead of doubling, so the
/// growth goes to twice `wanted`. A string that shrinks is cut to nothing
/// first (reallocated to fit nothing), then grown the same way. A refused
/// step (a length past the server's 512 MB) changes nothing. This costs no
/// reallocation when a string grows within its room, at most three
/// otherwise; replacing the key with a new string instead costs a key
/// deletion and insertion (and keeping its LFU count) every time.
pub fn fitting_steps(current: usize, wanted: usize) -> [Option<usize>; 2] {
    let grown = if wanted < GREEDY_LIMIT - 1 {
        wanted + 1
    } else {
        wanted.saturating_mul(2).saturating_add(1)
    };
    [(wanted < current).then_some(0), Some(grown)]
}

#[cfg(test)]
mod tests {
    use super::{fitting_steps, GREEDY_LIMIT};

    /// A server string's length and room as `RedisModule_StringTruncate`
    /// changes them (module.c and sds.c of Redis 7.0 and 8.6 and Valkey 9,
    /// without the allocator's rounding).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Sds {
        len: usize,
        room: usize,
    }

    impl Sds {
        fn truncate(&mut self, len: usize) {
            if len > self.len && len > self.room {
                self.room = if len < GREEDY_LIMIT {
                    2 * len
                } else {
                    len + GREEDY_LIMIT
                };
            } else if len < self.len && len < self.room - len {
                self.room = len;
            }
            self.len = len;
        }

        fn resized(mut self, wanted: usize) -> Sds {
            for step in fitting_steps(self.len, wanted).into_iter().flatten() {
                self.truncate(step);
            }
            self.truncate(wanted);
            self
        }
    }

    #[test]
    fn a_string_grown_past_its_room_or_shrunk_is_left_none() {
        let mb = GREEDY_LIMIT;
        let lengths = [
            0,
            1,
            13,
            25,
            12_001,
            12_013,
            mb - 3,
            mb - 2,
            mb - 1,
            mb,
            mb + 12,
            3 * mb,
        ];
        for len in lengths {
            for wanted in lengths
                .iter()
                .flat_map(|&n| [n, n + 12, n.saturating_sub(12)])
            {
                let fitted = Sds { len, room: len };
                assert_eq!(
                    fitted.resized(wanted),
                    Sds {
                        len: wanted,
                        room: wanted
                    },
                    "{len} → {wanted}"
                );
                // Resized alone, it keeps room: twice what it needs grown,
                // up to as much again shrunk.
                let mut plain = Sds { len, room: len };
                plain.truncate(wanted);
                if wanted > len && wanted < mb {
                    assert_eq!(plain.room, 2 * wanted);
                }
                if wanted < len && 2 * wanted >= len {
                    assert_eq!(plain.room, len);
                }
            }
        }
    }

    #[test]
    fn a_string_grown_within_its_room_stays_where_it_is() {
        for (len, room, wanted) in [(12_001, 12_270, 12_013), (13, 20, 19), (100, 150, 140)] {
            let resized = Sds { len, room }.resized(wanted);
            assert_eq!(resized, Sds { len: wanted, room });
        }
        // Room more than twice the string's (left by another writer) goes.
        assert_eq!(
            Sds { len: 10, room: 100 }.resized(22),
            Sds { len: 22, room: 22 }
        );
    }
}
