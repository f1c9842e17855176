//! Argument parsing with Redis's rules: integers are strict base-10 (as
//! `string2ll`: no sign `+`, no leading zeros, no spaces), option tokens are
//! case-insensitive, may come in any order after the required arguments, and
//! may each appear once. Options are read from the [`ArgSpec`]s that
//! `COMMAND DOCS` shows: declared once, for both.

#![forbid(unsafe_code)]

use std::ffi::CStr;

use redis_module::RedisError;

use super::command::ArgSpec;
use super::errors;
use super::ffi::args::Arg;

/// What commands ask of an argument.
impl Arg<'_> {
    /// Whether this is `option`'s token, in any case.
    #[inline]
    pub fn is(&self, option: &ArgSpec) -> bool {
        is_option(self.as_bytes(), option)
    }

    #[inline]
    pub fn to_i64(self) -> Result<i64, RedisError> {
        parse_i64(self.as_bytes()).ok_or(errors::NOT_AN_INTEGER.error())
    }
}

/// Whether `bytes` is `token`, an upper-case ASCII word (as every option
/// token is: [`ArgSpec`] refuses another when compiled), in any case. One
/// pass, no case folding of the token: the standard library's
/// `eq_ignore_ascii_case` folds both sides and cost a hint's parse about 100
/// instructions for `COUNT`.
#[inline]
pub fn is_token(bytes: &[u8], token: &CStr) -> bool {
    let token = token.to_bytes();
    debug_assert!(
        !token.iter().any(|byte| byte.is_ascii_lowercase()),
        "{token:?}"
    );
    bytes.len() == token.len()
        && bytes
            .iter()
            .zip(token)
            .all(|(byte, want)| byte.to_ascii_uppercase() == *want)
}

/// Whether `bytes` (an argument's, read once for several options) is
/// `option`'s token, in any case.
#[inline]
pub fn is_option(bytes: &[u8], option: &ArgSpec) -> bool {
    option.token.is_some_and(|token| is_token(bytes, token))
}

/// A token or owner as the commands take it: any bytes but none, else
/// `ERR <what> must not be empty`.
pub fn nonempty<'a>(arg: &Arg<'a>, empty: RedisError) -> Result<&'a [u8], RedisError> {
    match arg.as_bytes() {
        [] => Err(empty),
        bytes => Ok(bytes),
    }
}

/// A lock's token (LOCK, RWLOCK): any bytes but none.
pub fn token<'a>(arg: &Arg<'a>) -> Result<&'a [u8], RedisError> {
    nonempty(arg, errors::EMPTY_TOKEN.error())
}

/// Parses a signed 64-bit integer exactly as Redis does for `INCR`: the
/// canonical decimal form only, so that a value this module accepts is one
/// every built-in accepts too.
#[inline]
pub fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, bytes),
    };
    match digits {
        [] => return None,
        [b'0'] => return (!negative).then_some(0), // "0" yes, "-0" no
        [b'1'..=b'9', ..] => {}
        _ => return None,
    }
    // Accumulated negative, so that i64::MIN fits; one pass, no allocation.
    let mut value: i64 = 0;
    for &byte in digits {
        let digit = match byte {
            b'0'..=b'9' => i64::from(byte - b'0'),
            _ => return None,
        };
        value = value.checked_mul(10)?.checked_sub(digit)?;
    }
    if negative {
        Some(value)
    } else {
        value.checked_neg()
    }
}

/// Splits `args` into repeatable groups, each one of `shapes`' tokens and the
/// words it takes (`FREE id`, `LEASE id at`): the index of its shape and its
/// words, in order. Anything else is `ERR syntax error`.
pub fn groups<'a>(
    args: &'a [Arg<'a>],
    shapes: &[ArgSpec],
) -> Result<Vec<(usize, &'a [Arg<'a>])>, RedisError> {
    let mut found = Vec::new();
    let mut rest = args;
    while let Some((token, after)) = rest.split_first() {
        let token = token.as_bytes();
        let (shape, spec) = shapes
            .iter()
            .enumerate()
            .find(|(_, spec)| is_option(token, spec))
            .ok_or(errors::SYNTAX.error())?;
        if after.len() < spec.values() {
            return Err(errors::SYNTAX.error());
        }
        let (words, more) = after.split_at(spec.values());
        found.push((shape, words));
        rest = more;
    }
    Ok(found)
}

/// Splits the trailing options of a command: `specs` are options of its
/// `COMMAND DOCS` arguments (each one's token, then [`ArgSpec::values`]
/// words; the choices of a one-of each on its own, the caller refusing two).
/// Returns, for each spec in order, the values that followed its token, or
/// `None` when it was absent. An unknown token, a repeated one or a missing
/// value is `ERR syntax error`.
// Inlined: with the specs constant, the token comparisons fold (about 100
// instructions a hint).
#[inline(always)]
pub fn parse_options<'a, const N: usize>(
    rest: &'a [Arg<'a>],
    specs: &[ArgSpec; N],
) -> Result<[Option<&'a [Arg<'a>]>; N], RedisError> {
    let mut found: [Option<&'a [Arg<'a>]>; N] = [None; N];
    let mut at = 0;
    while let Some(token) = rest.get(at) {
        let token = token.as_bytes();
        let index = specs
            .iter()
            .position(|spec| is_option(token, spec))
            .ok_or(errors::SYNTAX.error())?;
        let spec = &specs[index];
        let values = rest
            .get(at + 1..at + 1 + spec.values())
            .ok_or(errors::SYNTAX.error())?;
        let slot = found.get_mut(index).ok_or(errors::SYNTAX.error())?;
        if slot.replace(values).is_some() {
            return Err(errors::SYNTAX.error());
        }
        at += 1 + spec.values();
    }
    Ok(found)
}

/// The value of a one-value option, if it was given.
pub fn single<'a>(values: Option<&'a [Arg<'a>]>) -> Option<Arg<'a>> {
    values.and_then(|values| values.first().copied())
}

#[cfg(test)]
mod tests {
    use super::{is_token, parse_i64};

    #[test]
    fn tokens_match_in_any_case_and_nothing_else() {
        for yes in ["COUNT", "count", "Count", "cOUNT"] {
            assert!(is_token(yes.as_bytes(), c"COUNT"), "{yes}");
        }
        for no in [
            "COUN",
            "COUNTS",
            "",
            "C0UNT",
            "COUNT ",
            "cou\u{17f}t",
            "COUNt\0",
        ] {
            assert!(!is_token(no.as_bytes(), c"COUNT"), "{no:?}");
        }
        // Only letters fold: not the bytes 0x20 apart from other marks.
        assert!(!is_token(b"\r", c"-"));
        assert!(!is_token(b"{", c"["));
        assert!(is_token(b"with-weights_2", c"WITH-WEIGHTS_2"));
    }

    #[test]
    fn accepts_canonical_integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"7"), Some(7));
        assert_eq!(parse_i64(b"-42"), Some(-42));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
    }

    #[test]
    fn round_trips_every_magnitude() {
        let mut value: i64 = 1;
        while let Some(next) = value.checked_mul(7) {
            for v in [
                value,
                -value,
                value - 1,
                1 - value,
                next.saturating_add(value),
            ] {
                assert_eq!(parse_i64(v.to_string().as_bytes()), Some(v), "{v}");
            }
            value = next;
        }
        for v in [
            i64::MIN,
            i64::MIN + 1,
            i64::MAX - 1,
            10,
            -10,
            100_000_000_000,
        ] {
            assert_eq!(parse_i64(v.to_string().as_bytes()), Some(v), "{v}");
        }
    }

    #[test]
    fn rejects_what_incr_rejects() {
        for bad in [
            &b""[..],
            b"-",
            b"-0",
            b"+1",
            b"01",
            b" 1",
            b"1 ",
            b"1.0",
            b"1e3",
            b"abc",
            b"9223372036854775808",
            b"-9223372036854775809",
            b"\xff",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
