//! Effect replication. A command decides on the primary and sends replicas and
//! the AOF the plain commands that reproduce its effect (`SET … KEEPTTL`,
//! `HSET`, later `PEXPIREAT` with absolute times), never itself, so a replica
//! or an AOF replay reaches the primary's state whatever its own clock or
//! module version.

use std::ffi::CStr;
use std::os::raw::{c_char, c_longlong};

use redis_module::raw;

use super::args::Arg;

/// A value that can be an argument of a replicated command. Each type knows
/// its letter in `RedisModule_Replicate`'s format, so the format can never
/// disagree with the arguments.
pub trait Effect {
    type C;
    const FORMAT: u8;
    fn to_c(&self) -> Self::C;
}

impl Effect for Arg<'_> {
    type C = *mut raw::RedisModuleString;
    const FORMAT: u8 = b's';
    fn to_c(&self) -> Self::C {
        self.as_ptr()
    }
}

impl Effect for i64 {
    type C = c_longlong;
    const FORMAT: u8 = b'l';
    fn to_c(&self) -> Self::C {
        *self
    }
}

impl Effect for &CStr {
    type C = *const c_char;
    const FORMAT: u8 = b'c';
    fn to_c(&self) -> Self::C {
        self.as_ptr()
    }
}

pub fn format_of<T: Effect>(_: &T) -> u8 {
    T::FORMAT
}

/// `replicate!(ctx, c"SET", key, value, c"KEEPTTL")` sends `SET key value
/// KEEPTTL` to replicas and the AOF, after the command that called it.
#[macro_export]
macro_rules! replicate {
    ($ctx:expr, $command:expr $(, $arg:expr)* $(,)?) => {{
        #[allow(unused_imports)]
        use $crate::common::replicate::{format_of, Effect};
        let command: &std::ffi::CStr = $command;
        let format = [$(format_of(&$arg),)* 0u8];
        // Replicate fails only for an unknown command name, fixed at compile
        // time here; nothing a client sends can make it fail.
        unsafe {
            $crate::api!(RedisModule_Replicate)(
                $ctx.get_raw(),
                command.as_ptr(),
                format.as_ptr().cast() $(, Effect::to_c(&$arg))*
            )
        };
    }};
}
