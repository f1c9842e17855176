//! The module's settings (`recipes.*`), registered with the server's module
//! configuration API (`ffi/config.rs`): read with `CONFIG GET`, changed with
//! `CONFIG SET`, given in `redis.conf` or with `MODULE LOADEX … CONFIG`. The
//! server checks each value against the setting's range and answers a bad
//! one with its usual error, changing nothing. A family declares its
//! settings next to the code that applies them; `src/lib.rs` lists them
//! once.
//!
//! A setting is a cap on what a client's command may write. The commands a
//! replica applies from its primary, and those a server replays from its
//! AOF, are held to the widest value of the range instead: they do what the
//! primary accepted, whatever this server's setting says.

#![forbid(unsafe_code)]

use std::ffi::CStr;
use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::Context;

use super::ffi::replicate;

/// A numeric setting, `recipes.<name>`.
pub struct Setting {
    /// The name after `recipes.`.
    pub name: &'static CStr,
    pub default: i64,
    pub min: i64,
    pub max: i64,
    /// What it bounds (Markdown, for the module's spec and the manual).
    #[cfg_attr(not(test), allow(dead_code))]
    pub doc: &'static str,
    pub(in crate::common) value: AtomicI64,
}

impl Setting {
    pub const fn new(
        name: &'static CStr,
        (default, min, max): (i64, i64, i64),
        doc: &'static str,
    ) -> Setting {
        Setting {
            name,
            default,
            min,
            max,
            doc,
            value: AtomicI64::new(default),
        }
    }

    /// The value set, for what is not a cap on writes (no replica or AOF
    /// replay reads it differently).
    pub fn value(&self) -> i64 {
        self.value.load(Ordering::Relaxed)
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
