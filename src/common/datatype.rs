//! The server's side of a module data type, once for every type: the
//! callbacks the server calls (RDB save and load, AOF rewrite, digest,
//! memory, free, copy), each under the panic guard, around what a type says
//! in [`Stored`]. A stored value is loaded only through [`Stored::load`],
//! which checks every field: a truncated or hostile payload (`RESTORE` of
//! anything) is refused with a log line, never trusted.

use std::os::raw::{c_int, c_void};
use std::ptr;

use redis_module::raw;

use super::panic::{guard, log_warning};
use crate::api;

/// A value the server stores for a module data type.
pub trait Stored: Clone + Sized + 'static {
    /// The version of the stored form, written with every value.
    const VERSION: i32;
    /// What the server log calls it ("ID pool").
    const WHAT: &'static str;
    fn save(&self, rdb: *mut raw::RedisModuleIO);
    /// Reads a stored value, checking every field.
    ///
    /// # Safety
    /// `rdb` is the server's loading context for this call.
    unsafe fn load(rdb: *mut raw::RedisModuleIO) -> Result<Self, &'static str>;
    /// Emits the commands that rebuild the value at `key`.
    fn rewrite(&self, aof: *mut raw::RedisModuleIO, key: *mut raw::RedisModuleString);
    fn digest(&self, md: *mut raw::RedisModuleDigest);
    /// Bytes held, for `MEMORY USAGE`.
    fn memory(&self) -> usize;
    /// Allocations owned, for the server's lazy-free decision.
    fn allocations(&self) -> usize;
    /// Counts the value in `INFO recipes`: `sign` 1 when the server takes
    /// it, -1 when it frees it.
    fn count(&self, sign: i64);
}

/// A new value for the server, counted in `INFO recipes` until it frees it.
pub fn adopt<T: Stored>(value: T) -> Box<T> {
    value.count(1);
    Box::new(value)
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
    value.cast::<T>().as_ref()
}

unsafe extern "C" fn rdb_save<T: Stored>(rdb: *mut raw::RedisModuleIO, value: *mut c_void) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            value.save(rdb);
        }
    })
}

unsafe extern "C" fn rdb_load<T: Stored>(
    rdb: *mut raw::RedisModuleIO,
    encver: c_int,
) -> *mut c_void {
    guard(ptr::null_mut(), || {
        if encver != T::VERSION {
            log_warning(&format!(
                "<recipes> refusing a {} stored in encoding version {encver}",
                T::WHAT
            ));
            return ptr::null_mut();
        }
        match T::load(rdb) {
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
        if let Some(value) = value_ref::<T>(value) {
            value.rewrite(aof, key);
        }
    })
}

unsafe extern "C" fn digest<T: Stored>(md: *mut raw::RedisModuleDigest, value: *mut c_void) {
    guard((), || {
        if let Some(value) = value_ref::<T>(value) {
            value.digest(md);
        }
    })
}

unsafe extern "C" fn mem_usage<T: Stored>(value: *const c_void) -> usize {
    guard(0, || value_ref::<T>(value).map_or(0, T::memory))
}

unsafe extern "C" fn free_effort<T: Stored>(
    _key: *mut raw::RedisModuleString,
    value: *const c_void,
) -> usize {
    guard(1, || value_ref::<T>(value).map_or(1, T::allocations))
}

unsafe extern "C" fn free<T: Stored>(value: *mut c_void) {
    if !value.is_null() {
        guard((), || {
            // SAFETY: made by `Box::into_raw` of a `T`; the server frees once.
            let value = Box::from_raw(value.cast::<T>());
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
    guard(ptr::null_mut(), || match value_ref::<T>(value) {
        Some(value) => Box::into_raw(adopt(value.clone())).cast(),
        None => ptr::null_mut(),
    })
}

/// Reads what `RedisModule_SaveUnsigned` wrote; a short read is an error.
///
/// # Safety
/// `rdb` is the server's loading context for this call.
pub unsafe fn load_unsigned(rdb: *mut raw::RedisModuleIO) -> Result<u64, &'static str> {
    let n = api!(RedisModule_LoadUnsigned)(rdb);
    if api!(RedisModule_IsIOError)(rdb) != 0 {
        return Err("truncated");
    }
    Ok(n)
}
