//! AUTOCOMPLETE: suggestions by prefix, each weighted by how often it was
//! fed and optionally fading at a set time (the book's chapter 16, 自动补全).
//!
//! So far only the pure core: `autocomplete/core.rs` keeps the entries of
//! one key and answers hints and fades; `autocomplete/text.rs` checks and
//! counts the characters of what the commands are given.

pub mod core;
pub mod text;
