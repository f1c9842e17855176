//! What the module reads of the server's state: its clock.

use crate::api;

/// The server's wall clock, in Unix milliseconds.
pub fn now_ms() -> i64 {
    // SAFETY: the function takes no argument and only reads the clock.
    unsafe { api!(RedisModule_Milliseconds)() }
}
