//! redis-recipes: the classic Redis recipes as native, atomic module commands.
//! This file only registers; each family's behaviour lives in its own module.

mod article;
mod cache;
mod common;
mod idgen;
mod idpool;
mod lock;
mod rate;

use idpool::POOL_TYPE;
use redis_module::{redis_module, Context, ModuleOptions, RedisString, Status};

// The server's allocator inside Redis (so `INFO memory` and `maxmemory` see
// the module's memory); the system one in unit tests, which run without it.
#[cfg(not(test))]
type Allocator = redis_module::alloc::RedisAlloc;
#[cfg(test)]
type Allocator = std::alloc::System;

fn init(ctx: &Context, _args: &[RedisString]) -> Status {
    common::panic::install_hook();
    common::panic::guard(Status::Err, || load(ctx))
}

fn load(ctx: &Context) -> Status {
    if let Err(message) = common::command::check_api() {
        common::panic::log_warning(&message);
        return Status::Err;
    }
    // Each command signals exactly the keys it changed (see `Key::written`),
    // so a WATCH is not aborted by a command that changed nothing. A short
    // read of a stored value (a truncated `RESTORE` payload) is reported to
    // the loader, which refuses it, instead of stopping the server.
    ctx.set_module_options(
        ModuleOptions::NO_IMPLICIT_SIGNAL_MODIFIED | ModuleOptions::HANDLE_IO_ERRORS,
    );
    lock::init(ctx);
    let families = [
        idgen::COMMANDS,
        lock::COMMANDS,
        article::COMMANDS,
        cache::COMMANDS,
        idpool::COMMANDS,
        rate::COMMANDS,
    ];
    for commands in families {
        if common::command::register(ctx, commands) == Status::Err {
            return Status::Err;
        }
    }
    Status::Ok
}

redis_module! {
    name: "recipes",
    version: 1,
    allocator: (Allocator, Allocator {}),
    data_types: [POOL_TYPE],
    init: init,
    commands: [],
}
