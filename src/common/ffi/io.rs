//! What a data type's callbacks write to and read from: the server's handles
//! for a value's stored form (RDB, `DUMP`/`RESTORE`), its digest and its AOF
//! rewrite, as [`Stored`](crate::common::datatype::Stored) uses them.

use std::ffi::CStr;
use std::ptr;

use redis_module::raw;

use super::replicate::{with_strings, Word};
use crate::api;

/// Where a value's stored form goes (`rdb_save`, `DUMP`).
pub struct Writer {
    pub(super) io: *mut raw::RedisModuleIO,
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
    pub(super) io: *mut raw::RedisModuleIO,
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
    pub(super) md: *mut raw::RedisModuleDigest,
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
    pub(super) aof: *mut raw::RedisModuleIO,
    pub(super) key: *mut raw::RedisModuleString,
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
