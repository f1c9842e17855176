//! redis-recipes: the classic Redis recipes as native, atomic module commands.
//! This file only registers; each family's behaviour lives in its own module.

mod article;
mod cache;
mod common;
mod idgen;
mod idpool;
mod lock;
mod pool;
mod rate;

use idpool::POOL_TYPE;
use pool::POOL_TYPE as RESOURCE_POOL_TYPE;
use redis_module::{redis_module, Context, RedisString, Status};

// The server's allocator inside Redis (so `INFO memory` and `maxmemory` see
// the module's memory); the system one in unit tests, which run without it.
#[cfg(not(test))]
type Allocator = redis_module::alloc::RedisAlloc;
#[cfg(test)]
type Allocator = std::alloc::System;

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    common::panic::install_hook();
    common::panic::guard(Status::Err, || {
        // The module takes no arguments: a stray one (a typo of another
        // directive, a misplaced path) refuses the load, as the server does
        // for a bad configuration line.
        if let Some(arg) = args.first() {
            common::panic::log_warning(&format!(
                "<recipes> refusing to load: unknown module argument '{}' (the module takes none)",
                common::reply::quote(arg.as_slice())
            ));
            return Status::Err;
        }
        load(ctx)
    })
}

/// `MODULE LIST` `ver`: the crate's version as major·10000 + minor·100 +
/// patch (0.2.0 → 200), as other modules number theirs.
const VERSION: i32 = number(env!("CARGO_PKG_VERSION_MAJOR")) * 10_000
    + number(env!("CARGO_PKG_VERSION_MINOR")) * 100
    + number(env!("CARGO_PKG_VERSION_PATCH"));

const fn number(digits: &str) -> i32 {
    let bytes = digits.as_bytes();
    let (mut value, mut at) = (0, 0);
    while at < bytes.len() {
        value = value * 10 + (bytes[at] - b'0') as i32;
        at += 1;
    }
    value
}

/// Every module data type, with the encoding versions it reads.
#[cfg(test)]
const STORED_TYPES: [(&str, &[i32]); 2] = [
    ("rr-idpool", idpool::ENCODINGS),
    ("rr-rspool", pool::ENCODINGS),
];

/// The module's settings (`recipes.*`), each declared by its family.
static SETTINGS: [&common::config::Setting; 3] = [
    &rate::SLIDING_MAX,
    &rate::MAX_LIMITS_SETTING,
    &article::SLUG_MAX_CHARS,
];

/// The families whose commands may wait (`… WAIT ms`).
static WAITING: [common::wait::Watcher; 3] = [
    common::wait::watcher::<lock::Locks>(),
    common::wait::watcher::<pool::Pools>(),
    common::wait::watcher::<idpool::Waiting>(),
];

fn load(ctx: &Context) -> Status {
    if let Err(message) = common::command::check_api() {
        common::panic::log_warning(&message);
        return Status::Err;
    }
    if let Err(message) = common::config::register(ctx, &SETTINGS) {
        common::panic::log_warning(&message);
        return Status::Err;
    }
    // Each command signals exactly the keys it changed (see `key::OPTIONS`).
    common::key::set_options(ctx, common::cluster::server_options(ctx));
    common::wait::init(ctx, &WAITING);
    common::stats::register(ctx.get_raw(), common::wait::figures_all);
    let families = [
        idgen::COMMANDS,
        lock::COMMANDS,
        article::COMMANDS,
        cache::COMMANDS,
        idpool::COMMANDS,
        rate::COMMANDS,
        pool::COMMANDS,
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
    version: VERSION,
    allocator: (Allocator, Allocator {}),
    data_types: [POOL_TYPE, RESOURCE_POOL_TYPE],
    init: init,
    commands: [],
}
