//! Registration of the commands through the raw module API, with
//! everything the running server can take.
//!
//! Registration uses the raw functions rather than the crate's `#[command]`
//! route, because that route requires `RedisModule_SetCommandACLCategories`,
//! which Redis 7.0 lacks: here each extra is applied only when the server
//! has it, so the module loads on 7.0 and documents itself fully on 7.2+.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

use redis_module::{raw, Context, Status};

use super::panic::log_warning;
use crate::api;
use crate::common::command::{
    has_movable_keys, ArgSpec, ArgType, BeginSearch, CommandSpec, FindKeys, KeySpec,
};

/// Registers commands with everything the running server can take.
pub fn register(ctx: &Context, commands: &[CommandSpec]) -> Status {
    for command in commands {
        if let Err(message) = register_one(ctx, command) {
            log_warning(&message);
            return Status::Err;
        }
    }
    Status::Ok
}

fn register_one(ctx: &Context, spec: &CommandSpec) -> Result<(), String> {
    let name = spec.name().to_string_lossy();
    // The legacy (first, last, step) triple; 7.0+ derives it from the key
    // specs. Keys counted by an argument have none (`getkeys-api` finds them).
    let first_key = match spec.entry.key_specs.first() {
        Some(KeySpec {
            begin: BeginSearch::Index(pos),
            find: FindKeys::One,
            ..
        }) => *pos,
        _ => 0,
    };
    let mut flags = spec.flags.to_bytes().to_vec();
    if has_movable_keys(spec.entry.key_specs) {
        flags.extend_from_slice(b" getkeys-api");
    }
    let flags = CString::new(flags).map_err(|_| format!("bad flags for {name}"))?;
    // SAFETY: `ctx` is the module's load context; the name and flags are C
    // strings the server copies or parses during the call, and the entry point
    // is this module's function, valid while it is loaded.
    let created = unsafe {
        api!(RedisModule_CreateCommand)(
            ctx.get_raw(),
            spec.name().as_ptr(),
            Some(spec.entry.call),
            flags.as_ptr(),
            first_key,
            first_key,
            i32::from(first_key != 0),
        )
    };
    if created != raw::REDISMODULE_OK as c_int {
        return Err(format!("could not create command {name}"));
    }
    // SAFETY: `ctx` is the load context; the name is a static C string the
    // server only looks up.
    let command = unsafe { api!(RedisModule_GetCommand)(ctx.get_raw(), spec.name().as_ptr()) };
    if command.is_null() {
        return Err(format!("command {name} not found after creation"));
    }
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs. This function
    // is optional (Redis 7.0+).
    if let Some(set_info) = unsafe { raw::RedisModule_SetCommandInfo } {
        let mut key_specs: Vec<raw::RedisModuleCommandKeySpec> =
            spec.entry.key_specs.iter().map(raw_key_spec).collect();
        key_specs.push(zeroed_key_spec());
        // Choices of a one-of argument live in arrays of their own; the
        // server reads them during the call below.
        let mut nested = Vec::new();
        let mut args = raw_args(spec.args, &mut nested);
        let version = raw::RedisModuleCommandInfoVersion {
            version: 1,
            sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
            sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
            sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
        };
        let info = raw::RedisModuleCommandInfo {
            version: &version,
            summary: spec.summary.as_ptr(),
            complexity: spec.complexity.as_ptr(),
            since: spec.since.as_ptr(),
            history: ptr::null_mut(),
            tips: ptr::null(),
            arity: spec.arity,
            key_specs: key_specs.as_mut_ptr(),
            args: args.as_mut_ptr(),
        };
        // The server copies what it keeps; the vectors may go after the call.
        // SAFETY: `command` is this module's, found above; `info` points only
        // to static C strings and to `version`, `key_specs`, `args` and
        // `nested`, alive here, whose arrays end with the all-zero entry the
        // server stops at.
        if unsafe { set_info(command, &info) } != raw::REDISMODULE_OK as c_int {
            return Err(format!("the server refused the command info of {name}"));
        }
    }
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs. This function
    // is optional (Redis 7.2+).
    if let Some(set_categories) = unsafe { raw::RedisModule_SetCommandACLCategories } {
        // SAFETY: `command` is this module's, found above during the load; the
        // categories are a static C string the server only parses.
        if unsafe { set_categories(command, spec.acl_categories.as_ptr()) }
            != raw::REDISMODULE_OK as c_int
        {
            return Err(format!("the server refused the ACL categories of {name}"));
        }
    }
    Ok(())
}

fn raw_key_spec(spec: &KeySpec) -> raw::RedisModuleCommandKeySpec {
    let mut out = zeroed_key_spec();
    out.flags = u64::from(spec.flags);
    match spec.begin {
        BeginSearch::Index(pos) => {
            out.begin_search_type =
                raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
            out.bs.index.pos = pos;
        }
        BeginSearch::Keyword { keyword, from } => {
            out.begin_search_type =
                raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_KEYWORD;
            out.bs.keyword.keyword = keyword.as_ptr();
            out.bs.keyword.startfrom = from;
        }
    }
    match spec.find {
        FindKeys::One => {
            // One key: the range ends where it begins.
            out.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
            out.fk.range.lastkey = 0;
            out.fk.range.keystep = 1;
            out.fk.range.limit = 0;
        }
        FindKeys::KeyNum { .. } => {
            // The count where the search begins, the keys right after it.
            out.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_KEYNUM;
            out.fk.keynum.keynumidx = 0;
            out.fk.keynum.firstkey = 1;
            out.fk.keynum.keystep = 1;
        }
    }
    out
}

/// The zero-terminated array of `specs`; arrays for one-of choices are kept
/// in `nested`, which must outlive the use of the result.
fn raw_args(
    specs: &[ArgSpec],
    nested: &mut Vec<Vec<raw::RedisModuleCommandArg>>,
) -> Vec<raw::RedisModuleCommandArg> {
    let mut out: Vec<raw::RedisModuleCommandArg> = specs
        .iter()
        .map(|spec| {
            let mut arg = raw_arg(spec);
            if let ArgType::OneOf(parts) | ArgType::Block(parts) = spec.kind {
                let mut parts = raw_args(parts, nested);
                arg.subargs = parts.as_mut_ptr();
                // Moving the Vec into `nested` keeps its heap buffer in place.
                nested.push(parts);
            }
            arg
        })
        .collect();
    out.push(zeroed_arg());
    out
}

fn raw_arg(spec: &ArgSpec) -> raw::RedisModuleCommandArg {
    let mut out = zeroed_arg();
    out.name = spec.name.as_ptr();
    out.key_spec_index = -1;
    out.type_ = match spec.kind {
        ArgType::Key(index) => {
            out.key_spec_index = index;
            raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY
        }
        ArgType::String => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING,
        ArgType::Integer => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER,
        ArgType::Double => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_DOUBLE,
        ArgType::OneOf(_) => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_ONEOF,
        ArgType::Block(_) => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_BLOCK,
        ArgType::PureToken => raw::RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN,
    };
    out.token = spec.token.map_or(ptr::null(), CStr::as_ptr);
    if spec.optional {
        out.flags |= raw::REDISMODULE_CMD_ARG_OPTIONAL as c_int;
    }
    if spec.multiple {
        out.flags |= raw::REDISMODULE_CMD_ARG_MULTIPLE as c_int;
    }
    out
}

fn zeroed_key_spec() -> raw::RedisModuleCommandKeySpec {
    // SAFETY: a plain C struct of integers, pointers and unions; all-zero is
    // its documented "end of array" value.
    unsafe { std::mem::zeroed() }
}

fn zeroed_arg() -> raw::RedisModuleCommandArg {
    // SAFETY: as above; the all-zero argument ends the array.
    unsafe { std::mem::zeroed() }
}
