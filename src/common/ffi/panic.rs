//! Panics never reach the server. A Rust panic unwinding out of an
//! `extern "C"` function aborts the process, so every function the server
//! calls into runs its whole body inside [`guard`]; the hook logs the panic
//! to the server log, and the caller degrades as follows:
//!
//! | callback | on a panic |
//! |---|---|
//! | a command (`command::dispatch`), its reply included | the client gets `ERR internal error …` |
//! | key-position request (`getkeys-api`) | no keys are reported |
//! | module load (`init`) | the module refuses to load |
//! | blocked client: reply callback | the client gets `ERR internal error …` |
//! | blocked client: `CLIENT UNBLOCK`, disconnect, free of its private data | that step is skipped (at worst the data leaks) |
//! | timer, post-notification job | that run is skipped (the next event or timer serves the waiters) |
//! | keyspace and server events | the event is ignored |
//! | data type: `rdb_load`, `copy` | null: the server refuses the value (`RESTORE` / `COPY` error) |
//! | data type: `rdb_save`, `aof_rewrite`, `digest` | what was written so far stands; a short value is refused when loaded |
//! | data type: `mem_usage`, `free_effort` | 0 / 1 |
//! | data type: `free` | the value leaks rather than the server dying |
//!
//! A panic is a bug: the tests fail on any `panic` line in the server log, and
//! `INFO recipes` counts them (`recipes_panics_caught`, which must stay 0).

use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};

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
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        CAUGHT.fetch_add(1, Ordering::Relaxed);
        fallback
    })
}

/// Bugs the guard contained since the module loaded (`INFO recipes`
/// `recipes_panics_caught`).
static CAUGHT: AtomicI64 = AtomicI64::new(0);

pub fn caught() -> i64 {
    CAUGHT.load(Ordering::Relaxed)
}

/// Logs through the server log. The text goes in as a `%s` argument, never as
/// the format, so a `%` in it is harmless.
pub fn log_warning(text: &str) {
    let text: Vec<u8> = text
        .bytes()
        .map(|b| if b == 0 { b'?' } else { b })
        .collect();
    let Ok(text) = CString::new(text) else { return };
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs. It is `None`
    // until then.
    if let Some(log) = unsafe { raw::RedisModule_Log } {
        // SAFETY: a null context is allowed (from any thread); the level, the
        // "%s" format and `text` are C strings, and the one `%s` takes `text`.
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
