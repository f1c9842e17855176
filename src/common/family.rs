//! What a family gives the module, declared once in its own files: its
//! commands, its `INFO recipes` figures, its wait queues when its commands
//! may wait, its settings, its errors and its data types. `src/lib.rs` lists the
//! families; everything else is derived from this.

#![forbid(unsafe_code)]

use super::command::CommandSpec;
use super::config::Setting;
use super::datatype::StoredType;
use super::errors::ErrorText;
use super::stats::Stat;
use super::wait::Watcher;

pub struct FamilySpec {
    /// What it is, in a few words (the manual's title of its page).
    #[cfg_attr(not(test), allow(dead_code))]
    pub about: &'static str,
    /// What applications write today that it replaces (Markdown, for the
    /// README's table of families).
    #[cfg_attr(not(test), allow(dead_code))]
    pub replaces: &'static str,
    pub commands: &'static [CommandSpec],
    /// Its counters and gauges, in the order `INFO recipes` shows them.
    pub stats: &'static [&'static Stat],
    /// Its wait queues, when its commands may wait (`… WAIT ms`).
    pub waiting: Option<Watcher>,
    pub settings: &'static [&'static Setting],
    /// Its own errors (`<family>/errors.rs`), besides the shared ones of
    /// `common/errors.rs`: read by the module's spec.
    #[cfg_attr(not(test), allow(dead_code))]
    pub errors: &'static [&'static ErrorText],
    /// Its module data types, with the encoding versions each reads.
    pub stored: &'static [StoredType],
}
