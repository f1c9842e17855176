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

/// Whether `bytes` are UTF-8 (their characters not counted): the standard
/// library's rule (no overlong form, no surrogate, nothing past U+10FFFF)
/// in a few lines of code, since a hint validates its prefix and the
/// library's validator, built for long texts, took several cache lines of
/// code a hint.
pub fn is_utf8(bytes: &[u8]) -> bool {
    let mut at = 0;
    while let Some(&first) = bytes.get(at) {
        // The length, and the range of the second byte.
        let (len, second) = match first {
            0x00..=0x7f => {
                at += 1;
                continue;
            }
            0xc2..=0xdf => (2, 0x80..=0xbf),
            0xe0 => (3, 0xa0..=0xbf),
            0xe1..=0xec | 0xee..=0xef => (3, 0x80..=0xbf),
            0xed => (3, 0x80..=0x9f),
            0xf0 => (4, 0x90..=0xbf),
            0xf1..=0xf3 => (4, 0x80..=0xbf),
            0xf4 => (4, 0x80..=0x8f),
            _ => return false,
        };
        if !bytes.get(at + 1).is_some_and(|byte| second.contains(byte)) {
            return false;
        }
        for next in at + 2..at + len {
            if !matches!(bytes.get(next), Some(0x80..=0xbf)) {
                return false;
            }
        }
        at += len;
    }
    true
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
        for good in ["", "redis", "自动补全", "é😀", &long] {
            assert!(is_utf8(good.as_bytes()), "{good}");
        }
    }

    #[test]
    fn is_utf8_agrees_with_the_standard_library() {
        let std_says = |bytes: &[u8]| std::str::from_utf8(bytes).is_ok();
        // Every sequence of one, two and three bytes.
        for a in 0..=255u8 {
            assert_eq!(is_utf8(&[a]), std_says(&[a]), "{a:x}");
            for b in 0..=255u8 {
                assert_eq!(is_utf8(&[a, b]), std_says(&[a, b]), "{a:x} {b:x}");
                for c in 0..=255u8 {
                    assert_eq!(
                        is_utf8(&[a, b, c]),
                        std_says(&[a, b, c]),
                        "{a:x} {b:x} {c:x}"
                    );
                }
            }
        }
        // Four-byte leads with every second and fourth byte, and random
        // longer texts built from pieces of good and bad sequences.
        for a in 0xf0..=0xf5u8 {
            for b in 0..=255u8 {
                for d in [0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xff] {
                    let four = [a, b, 0x80, d];
                    assert_eq!(is_utf8(&four), std_says(&four), "{four:x?}");
                }
            }
        }
        let pieces: [&[u8]; 10] = [
            b"a",
            "中".as_bytes(),
            "é".as_bytes(),
            "😀".as_bytes(),
            b"\xe4\xb8",
            b"\x80",
            b"\xf4\x90\x80\x80",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            for _ in 0..6 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.extend_from_slice(pieces[(state % 10) as usize]);
            }
            assert_eq!(is_utf8(&text), std_says(&text), "{text:x?}");
        }
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
            assert!(!is_utf8(bad), "{bad:?}");
        }
    }
}
