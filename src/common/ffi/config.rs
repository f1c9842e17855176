//! The module's settings (`recipes.*`), registered with the server's module
//! configuration API: read with `CONFIG GET`, changed with `CONFIG SET`,
//! given in `redis.conf` or with `MODULE LOADEX … CONFIG`. The server checks
//! each value against the setting's range and answers a bad one with its
//! usual error, changing nothing. A family declares its settings next to the
//! code that applies them; `src/lib.rs` lists them once.
//!
//! A setting is a cap on what a client's command may write. The commands a
//! replica applies from its primary, and those a server replays from its
//! AOF, are held to the widest value of the range instead: they do what the
//! primary accepted, whatever this server's setting says.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_longlong, c_void};
use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::{raw, Context};

use super::panic::guard;
use super::replicate;
use crate::api;

/// A numeric setting, `recipes.<name>`.
pub struct Setting {
    /// The name after `recipes.`.
    pub name: &'static CStr,
    pub default: i64,
    pub min: i64,
    pub max: i64,
    value: AtomicI64,
}

impl Setting {
    pub const fn new(name: &'static CStr, default: i64, min: i64, max: i64) -> Setting {
        Setting {
            name,
            default,
            min,
            max,
            value: AtomicI64::new(default),
        }
    }

    /// The cap on the running command: the setting for a client's command,
    /// the widest value for a primary's command or an AOF replay.
    pub fn cap(&self, ctx: &Context) -> i64 {
        if replicate::deciding(ctx) {
            self.value.load(Ordering::Relaxed)
        } else {
            self.max
        }
    }
}

/// Registers `settings` and applies the values the server was given for
/// them (or their defaults). An error says why the module cannot load: a
/// value out of range in `redis.conf` or `MODULE LOADEX` (the server logs
/// which).
pub fn register(
    ctx: &Context,
    settings: impl IntoIterator<Item = &'static Setting>,
) -> Result<(), String> {
    for setting in settings {
        setting.value.store(setting.default, Ordering::Relaxed);
        let private: *const Setting = setting;
        // SAFETY: the name is a NUL-terminated static string; `private`
        // points to a static `Setting`, valid for as long as the module is
        // loaded, and the callbacks only read it as one.
        let status = unsafe {
            api!(RedisModule_RegisterNumericConfig)(
                ctx.get_raw(),
                setting.name.as_ptr(),
                setting.default,
                raw::REDISMODULE_CONFIG_DEFAULT,
                setting.min,
                setting.max,
                Some(get),
                Some(set),
                None,
                private.cast_mut().cast(),
            )
        };
        if status != raw::REDISMODULE_OK as c_int {
            return Err(format!(
                "<recipes> refusing to load: the setting recipes.{} could not be registered",
                setting.name.to_string_lossy()
            ));
        }
    }
    // SAFETY: called from the module's load with its context, after every
    // setting is registered.
    if unsafe { api!(RedisModule_LoadConfigs)(ctx.get_raw()) } != raw::REDISMODULE_OK as c_int {
        return Err(
            "<recipes> refusing to load: a recipes.* value given in the configuration or \
                    MODULE LOADEX was refused (the server's log says which)"
                .to_string(),
        );
    }
    Ok(())
}

/// # Safety
/// `private` is the `Setting` registered with the callback.
unsafe fn setting<'s>(private: *mut c_void) -> Option<&'s Setting> {
    // SAFETY: the caller passes the pointer registered for a `Setting`, a
    // static that lives as long as the module.
    unsafe { private.cast::<Setting>().cast_const().as_ref() }
}

unsafe extern "C" fn get(_name: *const c_char, private: *mut c_void) -> c_longlong {
    guard(0, || {
        // SAFETY: the server passes back the private data registered above.
        unsafe { setting(private) }.map_or(0, |setting| setting.value.load(Ordering::Relaxed))
    })
}

unsafe extern "C" fn set(
    _name: *const c_char,
    value: c_longlong,
    private: *mut c_void,
    _error: *mut *mut raw::RedisModuleString,
) -> c_int {
    guard(raw::REDISMODULE_ERR as c_int, || {
        // SAFETY: as in `get`; the server checked the value's range.
        match unsafe { setting(private) } {
            Some(setting) => {
                setting.value.store(value, Ordering::Relaxed);
                raw::REDISMODULE_OK as c_int
            }
            None => raw::REDISMODULE_ERR as c_int,
        }
    })
}
