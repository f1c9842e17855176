//! The server's module API as the module calls it: [`api!`](crate::api),
//! and the check at load that the server has every function it uses.

use redis_module::raw;

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
    RedisModule_ValueLength,
    RedisModule_ZsetScore,
    RedisModule_ZsetFirstInScoreRange,
    RedisModule_ZsetRangeCurrentElement,
    RedisModule_ZsetRangeNext,
    RedisModule_ZsetRangeEndReached,
    RedisModule_ZsetRangeStop,
    RedisModule_GetRandomBytes,
    RedisModule_ListPush,
    RedisModule_ListPop,
);

pub fn check_api() -> Result<(), String> {
    match missing_api() {
        Some(name) => Err(format!("this server lacks {name}, which the module needs")),
        None => Ok(()),
    }
}
