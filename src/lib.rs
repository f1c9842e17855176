//! redis-recipes: the classic Redis recipes as native, atomic module commands.
//! This file only registers; each family's behaviour lives in its own module
//! (`src/<family>.rs` and `src/<family>/`), and everything it offers is in
//! its `FamilySpec`, from which the module's spec (`docs/spec.json`) is
//! written.

mod common;

use redis_module::{redis_module, Context, RedisString, Status};

// The server's allocator inside Redis (so `INFO memory` and `maxmemory` see
// the module's memory); the system one in unit tests, which run without it.
#[cfg(not(test))]
type Allocator = redis_module::alloc::RedisAlloc;
#[cfg(test)]
type Allocator = std::alloc::System;

fn init(ctx: &Context, args: &[RedisString]) -> Status {
    common::ffi::panic::install_hook();
    common::ffi::panic::guard(Status::Err, || {
        // The module takes no arguments: a stray one (a typo of another
        // directive, a misplaced path) refuses the load, as the server does
        // for a bad configuration line.
        if let Some(arg) = args.first() {
            common::ffi::panic::log_warning(&format!(
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

/// Declares each family's module (`src/<family>.rs`) and lists them in
/// `FAMILIES`, in the order given.
macro_rules! families {
    ($($family:ident),* $(,)?) => {
        $(mod $family;)*

        static FAMILIES: &[&common::family::FamilySpec] = &[$(&$family::FAMILY),*];
    };
}

// The families, in the order `INFO recipes` shows their figures: the one
// list that names them (a new family adds its line here). Their commands,
// figures, waits, settings, errors and data types come from each family's
// `FamilySpec`.
families![
    idgen,
    lock,
    article,
    cache,
    idpool,
    rate,
    pool,
    rwlock,
    latch,
    autocomplete,
    queue,
    uqueue,
    nearby,
];

/// Registers everything, in an order that leaves nothing behind when the load
/// is refused: first each step that may refuse it and whose work the server
/// undoes then (settings, commands), then the data types, which no server
/// removes again (see `datatype::create`), then what cannot fail (options,
/// server events, which Redis 7.0 keeps after a refused load, and `INFO`).
fn load(ctx: &Context) -> Status {
    if let Err(message) = common::ffi::api::check_api() {
        common::ffi::panic::log_warning(&message);
        return Status::Err;
    }
    let settings = FAMILIES
        .iter()
        .flat_map(|family| family.settings.iter().copied());
    if let Err(message) = common::ffi::config::register(ctx, settings) {
        common::ffi::panic::log_warning(&message);
        return Status::Err;
    }
    for family in FAMILIES.iter() {
        if common::ffi::command::register(ctx, family.commands) == Status::Err {
            return Status::Err;
        }
    }
    let types = FAMILIES
        .iter()
        .flat_map(|family| family.stored)
        .map(|stored| stored.data_type);
    if let Err(message) = common::ffi::datatype::create(ctx, types) {
        common::ffi::panic::log_warning(&message);
        return Status::Err;
    }
    // Each command signals exactly the keys it changed (see `key::OPTIONS`).
    common::ffi::key::set_options(ctx, common::ffi::cluster::server_options(ctx));
    common::wait::init(ctx, FAMILIES.iter().filter_map(|family| family.waiting));
    let stats = FAMILIES
        .iter()
        .flat_map(|family| family.stats.iter().copied());
    common::ffi::stats::register(ctx.get_raw(), common::wait::figures_all, stats);
    Status::Ok
}

redis_module! {
    name: "recipes",
    version: VERSION,
    allocator: (Allocator, Allocator {}),
    // `load` creates them (each family's `stored`), once its settings are
    // applied.
    data_types: [],
    init: init,
    commands: [],
}
