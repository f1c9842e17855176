//! Which key a queue is for: its database and its name. A command serves
//! its own database's keys; a timer, job or event callback selects the
//! queue's database before opening its key.

#![forbid(unsafe_code)]

use std::os::raw::c_int;

use redis_module::Context;

use crate::common::ffi::context::{select_db, selected_db};

/// Which key: the database and the key's name.
pub type KeyId = (c_int, Vec<u8>);

/// The key `name` of the database `ctx`'s client has selected.
pub fn key_id(ctx: &Context, name: &[u8]) -> KeyId {
    (selected_db(ctx), name.to_vec())
}

/// Selects `id`'s database for `ctx`'s client (a timer's or job's
/// temporary one), to open its key.
pub fn select(ctx: &Context, id: &KeyId) {
    select_db(ctx, id.0);
}
