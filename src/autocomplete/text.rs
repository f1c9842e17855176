//! Text checks for AUTOCOMPLETE's commands, apart from the server: contents
//! and prefixes are UTF-8 text, counted in characters (Chinese is common).

#![forbid(unsafe_code)]

/// The bytes are not valid UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotUtf8;

/// The number of characters in `bytes`, or [`NotUtf8`]. ASCII (checked a
/// word at a time) is its length; other text is validated, then its
/// characters counted, in one pass each.
pub fn chars(bytes: &[u8]) -> Result<usize, NotUtf8> {
    if bytes.is_ascii() {
        return Ok(bytes.len());
    }
    let text = std::str::from_utf8(bytes).map_err(|_| NotUtf8)?;
    Ok(text.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(chars(b""), Ok(0));
        assert_eq!(chars(b"redis"), Ok(5));
        assert_eq!(chars("自动补全".as_bytes()), Ok(4));
        assert_eq!(chars("redis 使用手册".as_bytes()), Ok(10));
        assert_eq!(chars("é😀".as_bytes()), Ok(2));
        let long = "a".repeat(1000) + "中";
        assert_eq!(chars(long.as_bytes()), Ok(1001));
    }

    #[test]
    fn refuses_what_is_not_utf8() {
        for bad in [
            &b"\xff"[..],
            b"abc\x80",
            b"\xe4\xb8",         // a character cut short
            b"\xc0\xaf",         // an overlong encoding
            b"\xed\xa0\x80",     // a surrogate
            b"\xf4\x90\x80\x80", // past U+10FFFF
        ] {
            assert_eq!(chars(bad), Err(NotUtf8), "{bad:?}");
        }
    }
}
