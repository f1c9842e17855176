//! The module's error catalogue as its spec lists it (`docs/spec.json`,
//! written from the module's declarations and checked against them by
//! `cargo test --lib spec`).

use std::path::Path;
use std::sync::OnceLock;

/// The module's spec, `docs/spec.json`.
pub fn spec() -> &'static serde_json::Value {
    static SPEC: OnceLock<serde_json::Value> = OnceLock::new();
    SPEC.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/spec.json");
        serde_json::from_str(&std::fs::read_to_string(&path).expect("docs/spec.json"))
            .expect("docs/spec.json is JSON")
    })
}

/// The `INFO recipes` fields the spec lists (families' and shared), without
/// the section's `recipes_` prefix.
pub fn spec_info_fields() -> Vec<String> {
    let spec = spec();
    spec["families"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|family| family["info"].as_array())
        .chain(spec["info"].as_array())
        .flatten()
        .filter_map(|field| field["name"].as_str())
        .map(|name| name.trim_start_matches("recipes_").to_owned())
        .collect()
}

/// Every error text of the catalogue, `{name}` where a value goes.
pub fn error_catalogue() -> &'static [String] {
    static CATALOGUE: OnceLock<Vec<String>> = OnceLock::new();
    CATALOGUE.get_or_init(|| {
        let spec = spec();
        let lists = ["errors", "shared_errors"]
            .iter()
            .filter_map(|list| spec[list].as_array())
            .chain(
                spec["families"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|family| family["errors"].as_array()),
            );
        let texts: Vec<String> = lists
            .flatten()
            .filter_map(|error| error["text"].as_str().map(String::from))
            .collect();
        assert!(
            texts.len() > 40,
            "docs/spec.json: the errors were not found"
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
