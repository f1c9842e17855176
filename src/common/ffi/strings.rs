//! Server strings the module makes: of bytes, of an integer's digits, and
//! of fixed words kept for the life of the module, used by the key API and
//! replication alike; and [`OwnedString`], one the module owns until it drops
//! it.

use std::ffi::CStr;
use std::ptr;
use std::sync::Mutex;

use redis_module::{raw, Context};

use super::args::{string_bytes, Arg};
use crate::api;

/// A server string of an integer's digits. Formatting them here and handing
/// the bytes over costs about 100 instructions less than
/// `RedisModule_CreateStringFromLongLong` (callgrind), whose `ll2string` is
/// slower than `itoa`.
pub fn integer_string(ctx: *mut raw::RedisModuleCtx, value: i64) -> *mut raw::RedisModuleString {
    create_string(ctx, itoa::Buffer::new().format(value).as_bytes())
}

pub fn create_string(ctx: *mut raw::RedisModuleCtx, bytes: &[u8]) -> *mut raw::RedisModuleString {
    // SAFETY: `ctx` is the running call's context or null, which the server
    // allows; it copies the bytes. The caller owns the string it returns.
    unsafe { api!(RedisModule_CreateString)(ctx, bytes.as_ptr().cast(), bytes.len()) }
}

/// The server strings of fixed words (field names, replicated tokens), by the
/// address of their text. The server only reads them or takes references, so
/// one string serves every call; each is made once and kept for the life of
/// the module. Made and freed at each use instead, the two an
/// `ARTICLE.VIEW` uses cost it 696 instructions more, 8.6% of the command
/// (Redis 8.6, callgrind, `bench/results/cost.md`); the lock and scan cost it
/// about 100 (1.2%).
static FIXED_STRINGS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

pub fn fixed_string(text: &'static CStr) -> *mut raw::RedisModuleString {
    let address = text.as_ptr() as usize;
    let mut strings = FIXED_STRINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&(_, string)) = strings.iter().find(|(at, _)| *at == address) {
        return string as *mut raw::RedisModuleString;
    }
    // Without a context the string is not freed with any call's context.
    let string = create_string(ptr::null_mut(), text.to_bytes());
    strings.push((address, string as usize));
    string
}

/// A string the module created or was handed ownership of; freed on drop.
pub struct OwnedString<'a> {
    pub(super) ctx: &'a Context,
    pub(super) inner: *mut raw::RedisModuleString,
}

impl<'a> OwnedString<'a> {
    pub fn from_i64(ctx: &'a Context, value: i64) -> Self {
        let inner = integer_string(ctx.get_raw(), value);
        Self { ctx, inner }
    }

    pub fn from_bytes(ctx: &'a Context, bytes: &[u8]) -> Self {
        // SAFETY: `ctx` is the server's context of the running call; the server
        // copies the bytes. The string is ours (no automatic memory), freed in
        // `Drop`.
        let inner = unsafe {
            api!(RedisModule_CreateString)(ctx.get_raw(), bytes.as_ptr().cast(), bytes.len())
        };
        Self { ctx, inner }
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: the string is ours until drop.
        unsafe { string_bytes(self.inner) }
    }

    /// This string as a command argument (e.g. a key name), valid while it
    /// lives.
    pub fn as_arg(&self) -> Arg<'_> {
        // SAFETY: the string is ours until drop, which the borrow outlives.
        unsafe { Arg::from_ptr(self.inner) }
    }
}

impl Drop for OwnedString<'_> {
    fn drop(&mut self) {
        if !self.inner.is_null() {
            // SAFETY: `inner` is owned by this value (made by us, or handed
            // over by `HashGet`) and is freed here, once.
            unsafe { api!(RedisModule_FreeString)(self.ctx.get_raw(), self.inner) };
        }
    }
}
