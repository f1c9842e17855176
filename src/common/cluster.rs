//! Which keys this node serves, in a cluster.

use redis_module::{Context, RedisError};

use super::args::Arg;

/// A key whose slot this node does not serve now.
pub struct Moved;

impl Moved {
    /// What a waiter on such a key is told.
    pub fn error(&self) -> RedisError {
        RedisError::Str(
            "TRYAGAIN the key's slot moved to another node while waiting; retry the command",
        )
    }
}

/// `Ok` when this node serves `key` now: always outside a cluster.
pub fn served_here(_ctx: &Context, _key: Arg) -> Result<(), Moved> {
    Ok(())
}
