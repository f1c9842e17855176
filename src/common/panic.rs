//! The panic hook: a panic is a bug, and the server log is where an operator
//! looks. The command dispatcher then turns the panic into an error reply
//! (see `command::dispatch`), so the server keeps running.

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw;

pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|at| format!(" at {}:{}", at.file(), at.line()))
            .unwrap_or_default();
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| (*text).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_owned());
        log_warning(&format!("<recipes> panic{location}: {payload}"));
    }));
}

/// Runs code the server called into (a command, callback or timer): a panic,
/// already logged by the hook, yields `fallback` instead of unwinding into the
/// server.
pub fn guard<R>(fallback: R, run: impl FnOnce() -> R) -> R {
    catch_unwind(AssertUnwindSafe(run)).unwrap_or(fallback)
}

/// Logs through the server log. The text goes in as a `%s` argument, never as
/// the format, so a `%` in it is harmless.
pub fn log_warning(text: &str) {
    let text: Vec<u8> = text
        .bytes()
        .map(|b| if b == 0 { b'?' } else { b })
        .collect();
    let Ok(text) = CString::new(text) else { return };
    if let Some(log) = unsafe { raw::RedisModule_Log } {
        unsafe {
            log(
                std::ptr::null_mut(),
                c"warning".as_ptr(),
                c"%s".as_ptr(),
                text.as_ptr(),
            )
        };
    }
}
