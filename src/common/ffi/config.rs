//! The settings' side in the server: registers each [`Setting`] with the
//! module configuration API, whose callbacks read and change its value.

use std::os::raw::{c_char, c_int, c_longlong, c_void};
use std::sync::atomic::Ordering;

use redis_module::{raw, Context};

use super::panic::guard;
use crate::api;
use crate::common::config::Setting;

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
