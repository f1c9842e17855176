//! The server's side of a module data type, once for every type: the
//! callbacks the server calls (RDB save and load, AOF rewrite, digest,
//! memory, free, copy), each under the panic guard, around what a type says
//! in [`Stored`]. A stored value is loaded only through [`Stored::load`],
//! which checks every field: a truncated or hostile payload (`RESTORE` of
//! anything) is refused with a log line, never trusted.

use std::os::raw::{c_int, c_void};
use std::ptr;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context};

use super::io::{Digest, Reader, Rewrite, Writer};
use super::panic::{guard, log_warning};
use crate::common::datatype::{adopt, refusal, Stored};

/// Creates the server's data types, in order, while the module loads (the
/// only time a server lets it). No server frees a data type of a load that
/// is refused afterwards, so `src/lib.rs` creates them last of the steps
/// that may refuse the load. A refusal by the server once the module has
/// accepted its load (`MODULE LOADEX … CONFIG` naming a setting the module
/// lacks) is beyond the module: a server cannot unload a module with data
/// types, and Redis 7.0 keeps it loaded while answering an error, Valkey 9.1
/// crashes, Redis 8.6 unloads it anyway (`docs/src/settings.md`).
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
