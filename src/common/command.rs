//! Command metadata and registration through the raw module API, plus the
//! dispatch every command goes through.
//!
//! Registration uses the raw functions rather than the crate's `#[command]`
//! route, because that route requires `RedisModule_SetCommandACLCategories`,
//! which Redis 7.0 lacks: here each extra is applied only when the server
//! has it, so the module loads on 7.0 and documents itself fully on 7.2+.

use std::ffi::{CStr, CString};
use std::os::raw::c_int;
use std::ptr;

use redis_module::{raw, Context, Status};

use super::ffi::args::{from_argv, Arg};
use super::ffi::panic::guard;
use super::ffi::reply;
use super::reply::Replied;

/// The signature of every command's behaviour: argv (with the command name at
/// index 0) in, reply out.
pub type Handler = for<'a> fn(&'a Context, &'a [Arg<'a>]) -> Replied<'a>;

/// The C function the server calls for a command.
pub type EntryPoint =
    extern "C" fn(*mut raw::RedisModuleCtx, *mut *mut raw::RedisModuleString, c_int) -> c_int;

/// A command's entry point and its key specs, stated once: made by
/// [`entry!`](crate::entry).
pub struct Entry {
    pub call: EntryPoint,
    /// Where its keys are (`COMMAND INFO`, cluster routing, key-position
    /// requests).
    pub key_specs: &'static [KeySpec],
}

/// Wraps a [`Handler`] and its command's key specs in an `extern "C"` entry
/// point for the server.
#[macro_export]
macro_rules! entry {
    ($handler:path, $key_specs:expr) => {{
        extern "C" fn entry(
            ctx: *mut redis_module::raw::RedisModuleCtx,
            argv: *mut *mut redis_module::raw::RedisModuleString,
            argc: std::os::raw::c_int,
        ) -> std::os::raw::c_int {
            $crate::common::command::dispatch(ctx, argv, argc, $handler, $key_specs)
        }
        $crate::common::command::Entry {
            call: entry,
            key_specs: $key_specs,
        }
    }};
}

/// Calls a function of the server's module API. Every function used is checked
/// to exist when the module loads (`check_api`), so this cannot fail later.
#[macro_export]
macro_rules! api {
    ($name:ident) => {{
        // SAFETY: a plain read of a server API pointer, written once by
        // `RedisModule_Init` at load, before any of this code runs.
        #[allow(unused_unsafe)]
        let function = unsafe { redis_module::raw::$name };
        function.expect(concat!(stringify!($name), " checked at load"))
    }};
}

/// Runs a handler and sends its reply, both inside the panic guard. A panic
/// (already logged by the hook) answers the client with an error and the
/// server lives on. For a command with keys found by keyword, the server may
/// instead ask where the keys are (see [`has_keyword_keys`]); the key specs
/// answer.
pub fn dispatch(
    ctx: *mut raw::RedisModuleCtx,
    argv: *mut *mut raw::RedisModuleString,
    argc: c_int,
    handler: Handler,
    key_specs: &[KeySpec],
) -> c_int {
    let answered = guard(false, || {
        // SAFETY: the server passes its own argv, valid for this call.
        let args = unsafe { from_argv(argv, argc) };
        if has_keyword_keys(key_specs)
            // SAFETY: `ctx` is the server's context of this command call.
            && unsafe { api!(RedisModule_IsKeysPositionRequest)(ctx) } != 0
        {
            // No client waits on this request: a panic reports no keys.
            guard((), || report_key_positions(ctx, args, key_specs));
            return true;
        }
        reply::send_reply(ctx, handler(&Context::new(ctx), args));
        true
    });
    if !answered {
        guard((), || reply::error(ctx, INTERNAL_ERROR));
    }
    raw::REDISMODULE_OK as c_int
}

/// The reply to a command whose code panicked.
pub const INTERNAL_ERROR: &str = "ERR internal error in module recipes (details in the server log)";

/// Where a key spec starts looking for its key.
pub enum BeginSearch {
    /// At a fixed argv index.
    Index(i32),
    /// Right after the first argument equal to `keyword`, searching from argv
    /// index `from` (e.g. `FENCE fencekey`); absent keyword, no key.
    Keyword { keyword: &'static CStr, from: i32 },
}

/// Whether a command has a key found by keyword. Such a command is registered
/// with `getkeys-api`: cluster routing (`CROSSSLOT`, `MOVED`) on Redis 7.x and
/// Valkey finds a module command's keys only through the legacy (first, last,
/// step) range or that API, and the range cannot describe an optional key.
fn has_keyword_keys(key_specs: &[KeySpec]) -> bool {
    key_specs
        .iter()
        .any(|spec| matches!(spec.begin, BeginSearch::Keyword { .. }))
}

/// Answers a key-position request from the key specs, so the server's routing
/// and `COMMAND GETKEYS` agree.
fn report_key_positions(ctx: *mut raw::RedisModuleCtx, args: &[Arg], key_specs: &[KeySpec]) {
    for spec in key_specs {
        let position = match spec.begin {
            BeginSearch::Index(at) => usize::try_from(at).ok(),
            BeginSearch::Keyword { keyword, from } => {
                let keyword = keyword.to_str().unwrap_or_default();
                let from = usize::try_from(from).unwrap_or(usize::MAX);
                args.iter()
                    .enumerate()
                    .skip(from)
                    .find(|(_, arg)| arg.is(keyword))
                    .map(|(at, _)| at + 1)
            }
        };
        let Some(position) = position.filter(|&at| at < args.len()) else {
            continue;
        };
        let Ok(position) = c_int::try_from(position) else {
            continue;
        };
        // SAFETY: called during the server's key-position request.
        unsafe {
            match raw::RedisModule_KeyAtPosWithFlags {
                Some(key_at) => key_at(ctx, position, spec.flags as c_int),
                None => api!(RedisModule_KeyAtPos)(ctx, position),
            }
        }
    }
}

/// Key flags of a key read and changed in place (as `INCR`'s).
pub const UPDATED: u32 =
    raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_ACCESS | raw::REDISMODULE_CMD_KEY_UPDATE;

/// A lease as the commands that hold something take it: `PX milliseconds |
/// EX seconds` (parsed by `time::lease`).
pub const LEASE: &[ArgSpec] = &[
    ArgSpec::tokened(c"milliseconds", c"PX", ArgType::Integer),
    ArgSpec::tokened(c"seconds", c"EX", ArgType::Integer),
];

/// The first argument, a key read and changed in place.
pub const UPDATES_FIRST: KeySpec = KeySpec {
    flags: UPDATED,
    begin: BeginSearch::Index(1),
};

/// The first argument, a key only read.
pub const READS_FIRST: KeySpec = KeySpec {
    flags: raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
    begin: BeginSearch::Index(1),
};

/// A key spec: how the server, `COMMAND GETKEYS` and cluster clients find one
/// key (or one run of keys) in the arguments.
pub struct KeySpec {
    /// `REDISMODULE_CMD_KEY_*` flags.
    pub flags: u32,
    pub begin: BeginSearch,
}

#[derive(Clone, Copy)]
pub enum ArgType {
    Key(i32),
    String,
    Integer,
    /// Exactly one of these (e.g. `PX ms | EX s`).
    OneOf(&'static [ArgSpec]),
    /// These together (e.g. `SLUG slugkey slug`).
    Block(&'static [ArgSpec]),
    /// A token alone (e.g. `JSON`).
    PureToken,
}

/// One argument as `COMMAND DOCS` shows it.
pub struct ArgSpec {
    pub name: &'static CStr,
    pub kind: ArgType,
    pub token: Option<&'static CStr>,
    pub optional: bool,
    /// May repeat (`name [name …]`).
    pub multiple: bool,
}

impl ArgSpec {
    pub const fn key(name: &'static CStr, spec: i32) -> Self {
        Self {
            name,
            kind: ArgType::Key(spec),
            token: None,
            optional: false,
            multiple: false,
        }
    }
    pub const fn required(name: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: None,
            optional: false,
            multiple: false,
        }
    }
    /// An optional `TOKEN value` pair.
    pub const fn option(name: &'static CStr, token: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: Some(token),
            optional: true,
            multiple: false,
        }
    }
    /// A required `TOKEN value` pair (e.g. one choice of a [`ArgType::OneOf`]).
    pub const fn tokened(name: &'static CStr, token: &'static CStr, kind: ArgType) -> Self {
        Self {
            name,
            kind,
            token: Some(token),
            optional: false,
            multiple: false,
        }
    }
    /// An optional token without a value (e.g. `JSON`).
    pub const fn flag(name: &'static CStr, token: &'static CStr) -> Self {
        Self {
            name,
            kind: ArgType::PureToken,
            token: Some(token),
            optional: true,
            multiple: false,
        }
    }
    /// A required token without a value (one choice of a
    /// [`ArgType::OneOf`], e.g. `READ | WRITE`).
    pub const fn keyword(name: &'static CStr, token: &'static CStr) -> Self {
        Self {
            optional: false,
            ..Self::flag(name, token)
        }
    }
    /// An optional `TOKEN value value…` group.
    pub const fn block(
        name: &'static CStr,
        token: &'static CStr,
        parts: &'static [ArgSpec],
    ) -> Self {
        Self {
            name,
            kind: ArgType::Block(parts),
            token: Some(token),
            optional: true,
            multiple: false,
        }
    }
    /// A required group of arguments without a token (e.g. `field value`).
    pub const fn group(name: &'static CStr, parts: &'static [ArgSpec]) -> Self {
        Self {
            name,
            kind: ArgType::Block(parts),
            token: None,
            optional: false,
            multiple: false,
        }
    }
    /// The same argument, allowed to repeat.
    pub const fn multiple(self) -> Self {
        Self {
            multiple: true,
            ..self
        }
    }
    /// Exactly one of `choices`.
    /// One of `choices`, required (see [`ArgSpec::optional`]).
    pub const fn one_of(name: &'static CStr, choices: &'static [ArgSpec]) -> Self {
        Self {
            name,
            kind: ArgType::OneOf(choices),
            token: None,
            optional: false,
            multiple: false,
        }
    }

    /// The same argument, which may be left out.
    pub const fn optional(self) -> Self {
        Self {
            optional: true,
            ..self
        }
    }
}

/// Everything the server is told about one command.
pub struct CommandSpec {
    pub name: &'static CStr,
    pub entry: Entry,
    /// Command flags, e.g. `write deny-oom fast`.
    pub flags: &'static CStr,
    /// ACL categories, e.g. `write fast`, applied where the server can.
    pub acl_categories: &'static CStr,
    /// As in `COMMAND INFO`: N exactly, -N at least N (the name counts).
    pub arity: i32,
    pub summary: &'static CStr,
    pub complexity: &'static CStr,
    pub since: &'static CStr,
    pub args: &'static [ArgSpec],
}

/// The server functions the module needs; a server lacking one is refused at
/// load time, so that no command can fail on a missing function later.
macro_rules! required_api {
    ($($name:ident),* $(,)?) => {
        fn missing_api() -> Option<&'static str> {
            $(
                // SAFETY: a plain read of a server API pointer, written once by
                // `RedisModule_Init` before the module's load function runs.
                if unsafe { raw::$name }.is_none() {
                    return Some(stringify!($name));
                }
            )*
            None
        }
    };
}

required_api!(
    RedisModule_CreateCommand,
    RedisModule_GetCommand,
    RedisModule_OpenKey,
    RedisModule_CloseKey,
    RedisModule_KeyType,
    RedisModule_StringDMA,
    RedisModule_StringTruncate,
    RedisModule_StringPtrLen,
    RedisModule_HashGet,
    RedisModule_HashSet,
    RedisModule_FreeString,
    RedisModule_CreateStringFromLongLong,
    RedisModule_CreateString,
    RedisModule_Replicate,
    RedisModule_NotifyKeyspaceEvent,
    RedisModule_SetModuleOptions,
    RedisModule_Log,
    RedisModule_DeleteKey,
    RedisModule_GetAbsExpire,
    RedisModule_SetAbsExpire,
    RedisModule_Milliseconds,
    RedisModule_GetContextFlags,
    RedisModule_Call,
    RedisModule_FreeCallReply,
    RedisModule_RegisterNumericConfig,
    RedisModule_LoadConfigs,
    RedisModule_GetSelectedDb,
    RedisModule_SelectDb,
    RedisModule_BlockClient,
    RedisModule_UnblockClient,
    RedisModule_SetDisconnectCallback,
    RedisModule_GetBlockedClientHandle,
    RedisModule_GetBlockedClientPrivateData,
    RedisModule_CreateTimer,
    RedisModule_StopTimer,
    RedisModule_GetTimerInfo,
    RedisModule_SubscribeToKeyspaceEvents,
    RedisModule_SubscribeToServerEvent,
    RedisModule_AvoidReplicaTraffic,
    RedisModule_IsKeysPositionRequest,
    RedisModule_ReplyWithMap,
    RedisModule_ReplyWithStringBuffer,
    RedisModule_KeyAtPos,
    RedisModule_ModuleTypeGetType,
    RedisModule_ModuleTypeGetValue,
    RedisModule_ModuleTypeSetValue,
    RedisModule_ReplicateVerbatim,
    RedisModule_SaveUnsigned,
    RedisModule_LoadUnsigned,
    RedisModule_IsIOError,
    RedisModule_EmitAOF,
    RedisModule_DigestAddLongLong,
    RedisModule_DigestEndSequence,
    RedisModule_DigestAddStringBuffer,
    RedisModule_SaveStringBuffer,
    RedisModule_LoadStringBuffer,
    RedisModule_Free,
    RedisModule_ReplyWithNull,
    RedisModule_ReplyWithLongLong,
    RedisModule_ReplyWithError,
    RedisModule_ReplyWithSimpleString,
    RedisModule_ReplyWithString,
    RedisModule_ReplyWithArray,
    RedisModule_ReplyWithDouble,
    RedisModule_WrongArity,
    RedisModule_RegisterInfoFunc,
    RedisModule_InfoAddSection,
    RedisModule_InfoAddFieldLongLong,
);

pub fn check_api() -> Result<(), String> {
    match missing_api() {
        Some(name) => Err(format!("this server lacks {name}, which the module needs")),
        None => Ok(()),
    }
}

/// Registers commands with everything the running server can take.
pub fn register(ctx: &Context, commands: &[CommandSpec]) -> Status {
    for command in commands {
        if let Err(message) = register_one(ctx, command) {
            super::ffi::panic::log_warning(&message);
            return Status::Err;
        }
    }
    Status::Ok
}

fn register_one(ctx: &Context, spec: &CommandSpec) -> Result<(), String> {
    let name = spec.name.to_string_lossy();
    // The legacy (first, last, step) triple; 7.0+ derives it from the key specs.
    let first_key = match spec.entry.key_specs.first() {
        Some(KeySpec {
            begin: BeginSearch::Index(pos),
            ..
        }) => *pos,
        _ => 0,
    };
    let mut flags = spec.flags.to_bytes().to_vec();
    if has_keyword_keys(spec.entry.key_specs) {
        flags.extend_from_slice(b" getkeys-api");
    }
    let flags = CString::new(flags).map_err(|_| format!("bad flags for {name}"))?;
    // SAFETY: `ctx` is the module's load context; the name and flags are C
    // strings the server copies or parses during the call, and the entry point
    // is this module's function, valid while it is loaded.
    let created = unsafe {
        api!(RedisModule_CreateCommand)(
            ctx.get_raw(),
            spec.name.as_ptr(),
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
    let command = unsafe { api!(RedisModule_GetCommand)(ctx.get_raw(), spec.name.as_ptr()) };
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
    // One key: the range ends where it begins.
    out.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    out.fk.range.lastkey = 0;
    out.fk.range.keystep = 1;
    out.fk.range.limit = 0;
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
