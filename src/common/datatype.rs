//! The server's side of a module data type, once for every type: the
//! callbacks the server calls (RDB save and load, AOF rewrite, digest,
//! memory, free, copy), each under the panic guard, around what a type says
//! in [`Stored`]. A stored value is loaded only through [`Stored::load`],
//! which checks every field: a truncated or hostile payload (`RESTORE` of
//! anything) is refused with a log line, never trusted.

use std::ffi::CStr;
use std::os::raw::{c_int, c_void};
use std::ptr;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context};

use super::ffi::panic::{guard, log_warning};
use super::ffi::replicate::{with_strings, Word};
use crate::api;

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

/// Where a value's stored form goes (`rdb_save`, `DUMP`).
pub struct Writer {
    io: *mut raw::RedisModuleIO,
}

impl Writer {
    pub fn unsigned(&mut self, n: u64) {
        // SAFETY: `io` is the server's saving context for this callback.
        unsafe { api!(RedisModule_SaveUnsigned)(self.io, n) };
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        // SAFETY: as in `unsigned`; the server copies `bytes.len()` bytes.
        unsafe { api!(RedisModule_SaveStringBuffer)(self.io, bytes.as_ptr().cast(), bytes.len()) };
    }
}

/// Where a value's stored form comes from (`rdb_load`, `RESTORE`): a read
/// past the end, or of another kind of field, is an error.
pub struct Reader {
    io: *mut raw::RedisModuleIO,
}

impl Reader {
    pub fn unsigned(&mut self) -> Result<u64, &'static str> {
        // SAFETY: `io` is the server's loading context for this callback.
        let n = unsafe { api!(RedisModule_LoadUnsigned)(self.io) };
        if self.failed() {
            return Err("truncated");
        }
        Ok(n)
    }

    pub fn bytes(&mut self) -> Result<Vec<u8>, &'static str> {
        let mut len = 0;
        // SAFETY: as in `unsigned`.
        let buffer = unsafe { api!(RedisModule_LoadStringBuffer)(self.io, &mut len) };
        if self.failed() || buffer.is_null() {
            return Err("truncated");
        }
        // SAFETY: the server allocated `len` bytes at `buffer` for us to
        // copy and free.
        let bytes = unsafe { std::slice::from_raw_parts(buffer.cast::<u8>(), len) }.to_vec();
        // SAFETY: the buffer is ours to free, once, and is not used after.
        unsafe { api!(RedisModule_Free)(buffer.cast()) };
        Ok(bytes)
    }

    fn failed(&self) -> bool {
        // SAFETY: as in `unsigned`.
        unsafe { api!(RedisModule_IsIOError)(self.io) != 0 }
    }
}

/// `DEBUG DIGEST-VALUE`: what a value's digest is made of.
pub struct Digest {
    md: *mut raw::RedisModuleDigest,
}

impl Digest {
    pub fn integer(&mut self, n: i64) {
        // SAFETY: `md` is the server's digest context for this callback.
        unsafe { api!(RedisModule_DigestAddLongLong)(self.md, n) };
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        // SAFETY: as in `integer`; the server only reads the bytes.
        unsafe {
            api!(RedisModule_DigestAddStringBuffer)(
                self.md,
                bytes.as_ptr().cast_mut().cast(),
                bytes.len(),
            )
        };
    }

    /// Ends one ordered sequence of the digest.
    pub fn end_sequence(&mut self) {
        // SAFETY: as in `integer`.
        unsafe { api!(RedisModule_DigestEndSequence)(self.md) };
    }
}

/// An AOF rewrite of one key: the commands that rebuild its value.
pub struct Rewrite {
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
}

impl Rewrite {
    /// Emits `command key words…`.
    pub fn emit(&mut self, command: &CStr, words: &[Word]) {
        let (aof, key) = (self.aof, self.key);
        with_strings(ptr::null_mut(), words, |argv| {
            // SAFETY: `aof` and `key` are the server's for this callback;
            // `argv` holds `argv.len()` valid strings the server copies
            // ("sv": the key, then the vector and its length).
            unsafe {
                api!(RedisModule_EmitAOF)(
                    aof,
                    command.as_ptr(),
                    c"sv".as_ptr(),
                    key,
                    argv.as_mut_ptr(),
                    argv.len(),
                )
            };
        });
    }
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

/// Creates the server's data types, in order, while the module loads (the
/// only time a server lets it). No server frees a data type of a load that
/// is refused afterwards, so `src/lib.rs` creates them last of the steps
/// that may refuse the load. A refusal by the server once the module has
/// accepted its load (`MODULE LOADEX … CONFIG` naming a setting the module
/// lacks) is beyond the module: a server cannot unload a module with data
/// types, and Redis 7.0 keeps it loaded while answering an error, Valkey 9.1
/// crashes, Redis 8.6 unloads it anyway (`docs/settings.md`).
pub fn create<'t>(
    ctx: &Context,
    types: impl IntoIterator<Item = &'t RedisType>,
) -> Result<(), String> {
    for data_type in types {
        data_type.create_data_type(ctx.get_raw()).map_err(|why| {
            format!("<recipes> refusing to load: a data type could not be created ({why})")
        })?;
    }
    Ok(())
}

/// The callbacks of type `T`, for `RedisType::new`.
pub const fn methods<T: Stored>() -> raw::RedisModuleTypeMethods {
    raw::RedisModuleTypeMethods {
        version: raw::REDISMODULE_TYPE_METHOD_VERSION as u64,
        rdb_load: Some(rdb_load::<T>),
        rdb_save: Some(rdb_save::<T>),
        aof_rewrite: Some(aof_rewrite::<T>),
        mem_usage: Some(mem_usage::<T>),
        digest: Some(digest::<T>),
        free: Some(free::<T>),
        aux_load: None,
        aux_save: None,
        aux_save_triggers: 0,
        free_effort: Some(free_effort::<T>),
        unlink: None,
        copy: Some(copy::<T>),
        defrag: None,
        mem_usage2: None,
        free_effort2: None,
        unlink2: None,
        copy2: None,
        aux_save2: None,
    }
}

/// # Safety
/// `value` is a `T` the server holds for this type.
unsafe fn value_ref<'v, T>(value: *const c_void) -> Option<&'v T> {
    // SAFETY: null, or a `T` the server holds for this type (the caller's
    // promise), alive during the callback.
    unsafe { value.cast::<T>().as_ref() }
}

unsafe extern "C" fn rdb_save<T: Stored>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    guard((), || {
        // SAFETY: the server hands this type's callback a value of this type.
        if let Some(value) = unsafe { value_ref::<T>(value) } {
            value.save(&mut Writer { io: rdb });
        }
    })
}

unsafe extern "C" fn rdb_load<T: Stored>(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if let Some(why) = refusal(T::WHAT, encver, T::ENCODINGS) {
            log_warning(&why);
            return ptr::null_mut();
        }
        match T::load(&mut Reader { io: rdb }, encver) {
            Ok(value) => Box::into_raw(adopt(value)).cast(),
            Err(why) => {
                log_warning(&format!("<recipes> refusing a stored {}: {why}", T::WHAT));
                ptr::null_mut()
            }
        }
    })
}

unsafe extern "C" fn aof_rewrite<T: Stored>(
    aof: *mut raw::RedisModuleIO,
    key: *mut raw::RedisModuleString,
    value: *mut c_void,
) {
    guard((), || {
        // SAFETY: the server hands this type's callback a value of this type.
        if let Some(value) = unsafe { value_ref::<T>(value) } {
            value.rewrite(&mut Rewrite { aof, key });
        }
    })
}

unsafe extern "C" fn digest<T: Stored>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guard((), || {
        // SAFETY: the server hands this type's callback a value of this type.
        if let Some(value) = unsafe { value_ref::<T>(value) } {
            value.digest(&mut Digest { md });
        }
    })
}

unsafe extern "C" fn mem_usage<T: Stored>(value: *const c_void) -> usize {
    guard(0, || {
        // SAFETY: the server hands this type's callback a value of this type.
        let value = unsafe { value_ref::<T>(value) };
        value.map_or(0, T::memory)
    })
}

unsafe extern "C" fn free_effort<T: Stored>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    guard(1, || {
        // SAFETY: the server hands this type's callback a value of this type.
        let value = unsafe { value_ref::<T>(value) };
        value.map_or(1, T::allocations)
    })
}

unsafe extern "C" fn free<T: Stored>(value: *mut c_void) {
    if !value.is_null() {
        guard((), || {
            // SAFETY: made by `Box::into_raw` of a `T`; the server frees once.
            let value = unsafe { Box::from_raw(value.cast::<T>()) };
            value.count(-1);
            drop(value);
        });
    }
}

unsafe extern "C" fn copy<T: Stored>(
    _from: *mut raw::RedisModuleString,
    _to: *mut raw::RedisModuleString,
    value: *const c_void,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: the server hands this type's callback a value of this type.
        match unsafe { value_ref::<T>(value) } {
            Some(value) => Box::into_raw(adopt(value.clone())).cast(),
            None => ptr::null_mut(),
        }
    })
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
