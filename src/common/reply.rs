//! What a command answers ([`Reply`]), and client text quoted in an error
//! or status line ([`quote`]). `ffi/reply.rs` sends it.

#![forbid(unsafe_code)]

use std::fmt::Write;

use redis_module::{RedisError, RedisValue};

use super::ffi::strings::OwnedString;

/// The most bytes of client input an error quotes, as the server's own
/// `ERR unknown command '%.128s'` does.
pub const QUOTED_BYTES: usize = 128;

/// Client bytes as they may stand inside an error or status line: valid
/// UTF-8 kept as it is, `\r` and `\n` made spaces (as the server does for its
/// own errors), NUL, other control bytes and invalid UTF-8 escaped as `\xNN`,
/// cut after [`QUOTED_BYTES`] bytes of input with `...`.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().min(QUOTED_BYTES) + 3);
    let mut taken = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if taken + c.len_utf8() > QUOTED_BYTES {
                out.push_str("...");
                return out;
            }
            taken += c.len_utf8();
            match c {
                '\r' | '\n' => out.push(' '),
                c if c.is_ascii_control() => {
                    let _ = write!(out, "\\x{:02x}", c as u32);
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            if taken + 1 > QUOTED_BYTES {
                out.push_str("...");
                return out;
            }
            taken += 1;
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    out
}

/// What a command answers: every handler returns one, and
/// `ffi::reply::send_reply` sends it.
pub enum Reply<'a> {
    /// Any value the crate's type expresses.
    Value(RedisValue),
    /// Named fields in this order: a RESP3 map, a flat name/value array
    /// under RESP2.
    Map(Vec<(&'static [u8], Item<'a>)>),
    /// Named integers: a RESP3 map, the values alone in their order under
    /// RESP2 (as `CL.THROTTLE` answers). One value per name, the rest of the
    /// array unused: a record is a fixed set of fields (RATE's five or six),
    /// built without an allocation (a `Vec` of them cost `RATE.LIMIT` 1.9%
    /// of its instructions, callgrind on Redis 8.6).
    Record(&'static [&'static [u8]], [i64; RECORD_FIELDS]),
}

impl From<RedisValue> for Reply<'_> {
    fn from(value: RedisValue) -> Self {
        Reply::Value(value)
    }
}

/// The most fields a [`Reply::Record`] has.
pub const RECORD_FIELDS: usize = 8;

/// What a command's handler gives back.
pub type Replied<'a> = Result<Reply<'a>, RedisError>;

/// One value of a map or record reply.
pub enum Item<'a> {
    /// A string the server made for the command (a hash field's value).
    String(OwnedString<'a>),
    Int(i64),
    Null,
    /// Any other value (an array of rows).
    Value(RedisValue),
}

#[cfg(test)]
mod tests {
    use super::{quote, QUOTED_BYTES};

    #[test]
    fn quote_keeps_valid_utf8_as_it_is() {
        assert_eq!(quote("가".as_bytes()), "가");
        assert_eq!(quote("一Ā café 😀".as_bytes()), "一Ā café 😀");
    }

    #[test]
    fn quote_escapes_what_a_line_cannot_hold() {
        assert_eq!(quote(b"caf\xe9"), "caf\\xe9");
        assert_eq!(quote(b"\xff\xfe"), "\\xff\\xfe");
        assert_eq!(quote(b"a\x00b"), "a\\x00b");
        assert_eq!(quote(b"a\r\nb\tc"), "a  b\\x09c");
        assert_eq!(quote(b"%s%n"), "%s%n");
    }

    #[test]
    fn quote_cuts_long_input_on_a_character() {
        let long = "x".repeat(500);
        assert_eq!(
            quote(long.as_bytes()),
            format!("{}...", "x".repeat(QUOTED_BYTES))
        );
        // 3-byte characters: 42 fit in 128 bytes, the 43rd would not.
        let hangul = "가".repeat(100);
        assert_eq!(quote(hangul.as_bytes()), format!("{}...", "가".repeat(42)));
        let exact = "y".repeat(QUOTED_BYTES);
        assert_eq!(quote(exact.as_bytes()), exact);
    }
}
