//! The module's error catalogue as `docs/src/errors.md` lists it (generated from
//! `src/common/errors.rs`, and checked against it by `cargo test --lib`).

use std::path::Path;
use std::sync::OnceLock;

/// Every error text of the catalogue, `{name}` where a value goes.
pub fn error_catalogue() -> &'static [String] {
    static CATALOGUE: OnceLock<Vec<String>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/errors.md");
        let doc = std::fs::read_to_string(&path).expect("docs/src/errors.md");
        let mut texts = Vec::new();
        let mut in_table = false;
        for line in doc.lines() {
            if line.starts_with("<!-- errors:") {
                in_table = true;
            } else if !line.starts_with('|') {
                in_table = false;
            } else if let Some(rest) = line.strip_prefix("| `").filter(|_| in_table) {
                let text = rest.split("` |").next().unwrap_or(rest);
                texts.push(text.replace("\\|", "|"));
            }
        }
        assert!(
            texts.len() > 40,
            "docs/src/errors.md: the catalogue's tables were not found"
        );
        texts
    })
}

/// Whether `text` is a catalogue error, some text in each `{name}`.
pub fn in_error_catalogue(text: &str) -> bool {
    error_catalogue()
        .iter()
        .any(|template| fits(template, text))
}

/// Whether `text` is `template` with some text (maybe none: a key may be
/// empty) in each `{name}`.
pub fn fits(template: &str, text: &str) -> bool {
    let mut pieces = template.split('{');
    let first = pieces.next().unwrap_or("");
    // The literal text after each `{name}`.
    let after: Vec<&str> = pieces
        .map(|piece| piece.split_once('}').map_or(piece, |(_, rest)| rest))
        .collect();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for (at, literal) in after.iter().enumerate() {
        let found = if at + 1 == after.len() {
            // The last literal ends the text.
            rest.ends_with(literal).then(|| rest.len() - literal.len())
        } else {
            rest.find(literal)
        };
        let Some(start) = found else { return false };
        rest = &rest[start + literal.len()..];
    }
    rest.is_empty()
}
