//! JSON checked and minified in one pass, without building a document tree.
//!
//! The output is exactly what parsing into `serde_json::Value` (with
//! `arbitrary_precision` and `preserve_order`) and serializing again gives:
//! whitespace outside strings dropped, numbers and key order as written, text
//! re-escaped as serde_json writes it (`\u00e9` becomes `é`; `"`, `\` and
//! control characters escaped, `\b \f \n \r \t` in short form, the rest as
//! `\u00xx`). What this pass does not handle itself — anything invalid, an
//! object with a repeated key (serde_json keeps the last value), nesting past
//! serde_json's limit — it reports as `None`, and the caller takes the
//! tree-building path, which also words the error.
//!
//! Building the tree for every document instead costs a 197-byte
//! `CACHE.SETJSON` 12,854 instructions more, 89% of the command (Redis 8.6,
//! callgrind, `bench/results/cost.md`, "Optimisations that depend on server internals").

#![forbid(unsafe_code)]

use std::ops::Range;

/// serde_json's recursion limit: nesting deeper is its error.
const MAX_DEPTH: usize = 127;

/// The minified document, or `None` when the tree-building path must decide.
pub fn minify(input: &[u8]) -> Option<Vec<u8>> {
    std::str::from_utf8(input).ok()?;
    let mut pass = Pass {
        input,
        at: 0,
        out: Vec::with_capacity(input.len()),
        keys: Vec::new(),
    };
    pass.skip_space();
    pass.value(0)?;
    pass.skip_space();
    (pass.at == input.len()).then_some(pass.out)
}

struct Pass<'a> {
    input: &'a [u8],
    at: usize,
    out: Vec<u8>,
    /// The keys of the objects being read, as ranges of `out`; each object
    /// owns the tail from where it started.
    keys: Vec<Range<usize>>,
}

impl Pass<'_> {
    fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at + word.len();
        (self.input.get(self.at..end)? == word).then(|| {
            self.out.extend_from_slice(word);
            self.at = end;
        })
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, copied as written
    /// but for the exponent, which serde_json writes `e` with its sign
    /// (`1E9` → `1e+9`).
    fn number(&mut self) -> Option<()> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek()? {
            b'0' => self.at += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        self.out.extend_from_slice(self.input.get(start..self.at)?);
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let sign = match self.peek() {
                Some(sign @ (b'+' | b'-')) => {
                    self.at += 1;
                    sign
                }
                _ => b'+',
            };
            let digits = self.at;
            self.some_digits()?;
            self.out.extend_from_slice(&[b'e', sign]);
            self.out.extend_from_slice(self.input.get(digits..self.at)?);
        }
        Some(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }

    /// After an item: `true` at the container's `close`, `false` after a
    /// comma (written), `None` at anything else.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.skip_space();
        let byte = self.peek()?;
        self.at += 1;
        if byte == close {
            return Some(true);
        }
        (byte == b',').then(|| {
            self.out.push(b',');
            self.skip_space();
            false
        })
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.out.push(b'[');
        self.skip_space();
        if self.eat(b']').is_none() {
            loop {
                self.value(depth)?;
                if self.closed(b']')? {
                    break;
                }
            }
        }
        self.out.push(b']');
        Some(())
    }

    fn object(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.out.push(b'{');
        let first_key = self.keys.len();
        self.skip_space();
        if self.eat(b'}').is_none() {
            loop {
                if self.peek()? != b'"' {
                    return None;
                }
                let key = self.string()?;
                self.keys.push(key);
                self.skip_space();
                self.eat(b':')?;
                self.out.push(b':');
                self.skip_space();
                self.value(depth)?;
                if self.closed(b'}')? {
                    break;
                }
            }
        }
        self.out.push(b'}');
        // A repeated key: serde_json keeps its last value at its first place.
        let out = &self.out;
        let keys = self.keys.get_mut(first_key..)?;
        keys.sort_unstable_by(|a, b| out.get(a.clone()).cmp(&out.get(b.clone())));
        let repeated = keys
            .windows(2)
            .any(|pair| out.get(pair[0].clone()) == out.get(pair[1].clone()));
        self.keys.truncate(first_key);
        (!repeated).then_some(())
    }

    /// A string, written re-escaped; returns where its text (between the
    /// quotes) stands in `out`.
    fn string(&mut self) -> Option<Range<usize>> {
        self.at += 1;
        self.out.push(b'"');
        let start = self.out.len();
        loop {
            let byte = self.peek()?;
            match byte {
                b'"' => {
                    self.at += 1;
                    break;
                }
                b'\\' => {
                    self.at += 1;
                    let c = self.escape()?;
                    self.push_char(c);
                }
                0..=0x1f => return None,
                _ => {
                    // Copy the run up to the next quote, backslash or control
                    // byte (the input is valid UTF-8, checked up front).
                    let run = self.input.get(self.at..)?;
                    let len = run
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .unwrap_or(run.len());
                    self.out.extend_from_slice(run.get(..len)?);
                    self.at += len;
                }
            }
        }
        let end = self.out.len();
        self.out.push(b'"');
        Some(start..end)
    }

    fn escape(&mut self) -> Option<char> {
        let byte = self.peek()?;
        self.at += 1;
        Some(match byte {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                match unit {
                    0xD800..=0xDBFF => {
                        // A surrogate pair, or serde_json's error.
                        if self.input.get(self.at..self.at + 2)? != b"\\u" {
                            return None;
                        }
                        self.at += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    unit => char::from_u32(unit)?,
                }
            }
            _ => return None,
        })
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.input.get(self.at..self.at + 4)?;
        let mut value = 0;
        for &digit in digits {
            value = value * 16 + char::from(digit).to_digit(16)?;
        }
        self.at += 4;
        Some(value)
    }

    /// A character as serde_json writes it inside a string.
    fn push_char(&mut self, c: char) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let short = match c {
            '"' => Some(b'"'),
            '\\' => Some(b'\\'),
            '\u{8}' => Some(b'b'),
            '\u{c}' => Some(b'f'),
            '\n' => Some(b'n'),
            '\r' => Some(b'r'),
            '\t' => Some(b't'),
            _ => None,
        };
        match short {
            Some(letter) => self.out.extend_from_slice(&[b'\\', letter]),
            None if (c as u32) < 0x20 => {
                let code = c as usize;
                self.out.extend_from_slice(b"\\u00");
                self.out.push(HEX[code >> 4]);
                self.out.push(HEX[code & 0xf]);
            }
            None => {
                let mut buffer = [0; 4];
                self.out
                    .extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::minify;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    /// What the tree-building path writes.
    fn by_tree(input: &[u8]) -> Option<Vec<u8>> {
        let value: serde_json::Value = serde_json::from_slice(input).ok()?;
        serde_json::to_vec(&value).ok()
    }

    /// Either the one pass agrees with the tree, or it hands over.
    fn agrees(input: &[u8]) {
        if let Some(fast) = minify(input) {
            assert_eq!(
                Some(&fast),
                by_tree(input).as_ref(),
                "{}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn writes_what_the_tree_writes() {
        for document in [
            r#" { "z" : 1 , "a" : [ 123456789012345678901234567890.000, 1e-400, -0, 1.5E+3 ] } "#,
            r#""caf\u00e9 \u65e5 \"q\" \/ \b\f\n\r\t \u0001 \u001f \u007f \ud83d\ude00 😀""#,
            r#"[true,false,null,{},[],"",{"":""}]"#,
            "\"raw \u{7f} é 日\"",
            "0",
            " -12.5e-3\n",
        ] {
            assert!(minify(document.as_bytes()).is_some(), "{document}");
            agrees(document.as_bytes());
        }
    }

    #[test]
    fn hands_over_what_it_does_not_decide() {
        for document in [
            &b""[..],
            b"{\"a\":1} x",
            b"{\"a\":1,\"a\":2}",
            b"{\"a\":{\"b\":1,\"b\":2}}",
            b"01",
            b"1.",
            b"-",
            b"1e",
            b"[1,]",
            b"{\"a\" 1}",
            b"\"\\ud800\"",
            b"\"\\udc00\"",
            b"\"\\ud800\\u0041\"",
            b"\"\\x\"",
            b"\"tab\tinside\"",
            b"\"\xff\"",
            b"tru",
            b"nul",
        ] {
            assert_eq!(
                minify(document),
                None,
                "{}",
                String::from_utf8_lossy(document)
            );
        }
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert_eq!(minify(deep.as_bytes()), None);
        let fine = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert_eq!(minify(fine.as_bytes()), by_tree(fine.as_bytes()));
    }

    /// A random document, its text drawn from escapes, multi-byte text and
    /// control characters, with random whitespace; sometimes broken.
    fn document(rng: &mut StdRng, depth: usize, out: &mut String) {
        let space = |rng: &mut StdRng, out: &mut String| {
            for _ in 0..rng.random_range(0..3) {
                out.push([' ', '\n', '\t', '\r'][rng.random_range(0..4)]);
            }
        };
        space(rng, out);
        match rng.random_range(0..if depth > 4 { 4 } else { 6 }) {
            0 => out.push_str(["true", "false", "null"][rng.random_range(0..3)]),
            1 => out.push_str(
                [
                    "0",
                    "-0",
                    "12",
                    "-3.25",
                    "1e9",
                    "2E-7",
                    "123456789012345678901234567890",
                    "0.000100",
                    "1E+007",
                    "-0.0e0",
                ][rng.random_range(0..10)],
            ),
            2 | 3 => {
                out.push('"');
                for _ in 0..rng.random_range(0..6) {
                    out.push_str(
                        [
                            "a",
                            "é",
                            "日本",
                            "😀",
                            "\\\"",
                            "\\\\",
                            "\\/",
                            "\\n",
                            "\\t",
                            "\\b",
                            "\\f",
                            "\\r",
                            "\\u0000",
                            "\\u001F",
                            "\\u00e9",
                            "\\u65E5",
                            "\\ud83d\\ude00",
                            "\u{7f}",
                            "'",
                            "k",
                        ][rng.random_range(0..20)],
                    );
                }
                out.push('"');
            }
            4 => {
                out.push('[');
                for i in 0..rng.random_range(0..4) {
                    if i > 0 {
                        out.push(',');
                    }
                    document(rng, depth + 1, out);
                }
                space(rng, out);
                out.push(']');
            }
            _ => {
                out.push('{');
                for i in 0..rng.random_range(0..4) {
                    if i > 0 {
                        out.push(',');
                    }
                    space(rng, out);
                    out.push_str(
                        ["\"a\"", "\"b\"", "\"\\u0061\"", "\"é\"", "\"\""][rng.random_range(0..5)],
                    );
                    space(rng, out);
                    out.push(':');
                    document(rng, depth + 1, out);
                }
                space(rng, out);
                out.push('}');
            }
        }
        space(rng, out);
    }

    #[test]
    fn agrees_with_the_tree_on_random_documents() {
        let mut rng = StdRng::seed_from_u64(0x1503);
        let (mut fast, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = String::new();
            document(&mut rng, 0, &mut text);
            let mut bytes = text.into_bytes();
            if rng.random_ratio(1, 4) && !bytes.is_empty() {
                // Broken: a byte dropped or replaced.
                let at = rng.random_range(0..bytes.len());
                if rng.random_bool(0.5) {
                    bytes.remove(at);
                } else {
                    bytes[at] = [b',', b'"', b'\\', b'}', 0xff, b'x'][rng.random_range(0..6)];
                }
            }
            agrees(&bytes);
            total += 1;
            fast += usize::from(minify(&bytes).is_some());
        }
        // Most valid documents take the one pass.
        assert!(fast > total / 3, "{fast} of {total}");
    }
}
