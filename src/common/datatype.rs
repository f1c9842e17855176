//! A module data type as a family declares it: what its values say in
//! [`Stored`] (their stored form, in encoding versions numbered by release,
//! their AOF rewrite, digest and memory), and the refusal of a stored form
//! this build does not read. The server's callbacks around it are
//! `ffi/datatype.rs`, on the handles of `ffi/io.rs`.

#![forbid(unsafe_code)]

use redis_module::native_types::RedisType;

use super::ffi::io::{Digest, Reader, Rewrite, Writer};

/// A value the server stores for a module data type.
pub trait Stored: Clone + Sized + 'static {
    /// The encoding versions of the stored form this build reads, oldest
    /// first; the last is the one it writes, with every value. A release
    /// that changes a type's stored form adds a version (numbered by
    /// [`release_of`]'s rule) and keeps reading every earlier one.
    const ENCODINGS: &'static [i32];
    /// What the server log calls it ("ID pool").
    const WHAT: &'static str;
    /// The server's data type whose values are `Self`.
    fn data_type() -> &'static redis_module::native_types::RedisType;
    /// Writes the stored form (the newest encoding).
    fn save(&self, out: &mut Writer);
    /// Reads a value stored in `encoding` (one of [`Stored::ENCODINGS`]),
    /// checking every field, into today's form.
    fn load(input: &mut Reader, encoding: i32) -> Result<Self, &'static str>;
    /// Emits the commands that rebuild the value at its key (AOF rewrite).
    fn rewrite(&self, out: &mut Rewrite);
    /// Feeds `DEBUG DIGEST-VALUE`.
    fn digest(&self, out: &mut Digest);
    /// Bytes held, for `MEMORY USAGE`.
    fn memory(&self) -> usize;
    /// Allocations owned, for the server's lazy-free decision.
    fn allocations(&self) -> usize;
    /// Counts the value in `INFO recipes`: `sign` 1 when the server takes
    /// it, -1 when it frees it.
    fn count(&self, sign: i64);
}

/// The encoding version type `T` writes: the newest it reads.
pub const fn written<T: Stored>() -> i32 {
    match T::ENCODINGS.last() {
        Some(&version) => version,
        None => panic!("a stored type reads at least one encoding"),
    }
}

/// The first release that writes encoding version `encoding`, when the
/// numbering tells it. Version 1 is each type's first form; every later one
/// is numbered `major × 100 + minor` of the release that introduces it (0.4
/// → 4, 1.2 → 102; patch releases never change a stored form), so a build
/// can name the release a value from the future needs.
pub fn release_of(encoding: i32) -> Option<String> {
    (encoding >= 4).then(|| format!("{}.{}.0", encoding / 100, encoding % 100))
}

/// Why a value in `encoding` is not loaded, for the server log; `None` when
/// this build reads it.
pub fn refusal(what: &str, encoding: i32, reads: &[i32]) -> Option<String> {
    if reads.contains(&encoding) {
        return None;
    }
    let this = env!("CARGO_PKG_VERSION");
    let list = reads
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let newest = reads.iter().copied().max().unwrap_or(0);
    Some(if encoding > newest {
        let needs = release_of(encoding).map_or_else(
            || "a later release of redis-recipes".to_string(),
            |release| format!("redis-recipes {release} or later"),
        );
        format!(
            "<recipes> refusing a stored {what} in encoding version {encoding}: it was written by \
             {needs}; this is redis-recipes {this}, which reads encoding versions {list}. \
             Load the data with {needs}"
        )
    } else {
        format!(
            "<recipes> refusing a stored {what} in encoding version {encoding}: no release of \
             redis-recipes writes it (this one, {this}, reads encoding versions {list})"
        )
    })
}

/// A new value for the server, counted in `INFO recipes` until it frees it.
pub fn adopt<T: Stored>(value: T) -> Box<T> {
    value.count(1);
    Box::new(value)
}

/// A module data type as a family declares it: the type, and the encoding
/// versions it reads (its `Stored::ENCODINGS`).
pub struct StoredType {
    pub data_type: &'static RedisType,
    /// Read by the test of how encoding versions are numbered (below); the
    /// loader reads the type's own `Stored::ENCODINGS`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub encodings: &'static [i32],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_from_a_later_release_names_the_release_it_needs() {
        let why = refusal("ID pool", 102, &[1, 4]).unwrap();
        assert!(
            why.contains("encoding version 102: it was written by redis-recipes 1.2.0 or later")
        );
        assert!(why.contains("reads encoding versions 1, 4"));
        assert!(why.ends_with("Load the data with redis-recipes 1.2.0 or later"));
        assert!(refusal("ID pool", 3, &[1])
            .unwrap()
            .contains("written by a later release of redis-recipes;"));
        assert!(refusal("ID pool", 0, &[1])
            .unwrap()
            .contains("no release of redis-recipes writes it"));
        assert!(refusal("ID pool", 2, &[1, 4])
            .unwrap()
            .contains("no release"));
        assert_eq!(refusal("ID pool", 1, &[1, 4]), None);
        assert_eq!(refusal("ID pool", 4, &[1, 4]), None);
    }

    /// Every type's encoding versions follow [`release_of`]'s numbering, and
    /// none is newer than this release.
    #[test]
    fn encoding_versions_are_numbered_by_release() {
        let this = env!("CARGO_PKG_VERSION_MAJOR").parse::<i32>().unwrap() * 100
            + env!("CARGO_PKG_VERSION_MINOR").parse::<i32>().unwrap();
        let stored = crate::FAMILIES.iter().flat_map(|family| family.stored);
        for (at, StoredType { encodings, .. }) in stored.enumerate() {
            assert!(
                encodings.windows(2).all(|pair| pair[0] < pair[1]),
                "data type {at}"
            );
            for &version in *encodings {
                assert!(
                    version == 1 || (4..=this).contains(&version),
                    "data type {at}: {version}"
                );
            }
        }
    }
}
