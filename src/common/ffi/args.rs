//! Command arguments as the server hands them: borrowed server strings
//! (`argv`), read without a copy.

use std::marker::PhantomData;

use redis_module::raw;

/// One argument of the command being run, borrowed from the server's `argv`.
/// It is a bare pointer (no reference counting), valid for the duration of the
/// command call that the lifetime ties it to.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Arg<'a> {
    ptr: *mut raw::RedisModuleString,
    _call: PhantomData<&'a raw::RedisModuleString>,
}

impl<'a> Arg<'a> {
    pub fn as_bytes(&self) -> &'a [u8] {
        // SAFETY: `ptr` is an argv entry of the running command (see `Arg`).
        unsafe { string_bytes(self.ptr) }
    }

    pub fn as_ptr(&self) -> *mut raw::RedisModuleString {
        self.ptr
    }

    /// Views a server string as an argument.
    ///
    /// # Safety
    /// `ptr` must be a valid server string that outlives `'a`.
    pub unsafe fn from_ptr(ptr: *mut raw::RedisModuleString) -> Self {
        Self {
            ptr,
            _call: PhantomData,
        }
    }
}

/// The bytes of a server string.
///
/// # Safety
/// `string` must be a valid server string that outlives `'a`.
pub unsafe fn string_bytes<'a>(string: *const raw::RedisModuleString) -> &'a [u8] {
    // SAFETY: a plain read of a server API pointer, written once by
    // `RedisModule_Init` at load, before any of this code runs.
    let Some(ptr_len) = (unsafe { raw::RedisModule_StringPtrLen }) else {
        return &[];
    };
    let mut len = 0;
    // SAFETY: the caller hands a valid server string.
    let data = unsafe { ptr_len(string, &mut len) };
    if data.is_null() {
        return &[];
    }
    // SAFETY: the server's buffer of `len` bytes, alive as long as the
    // string, which outlives `'a` (the caller's promise).
    unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) }
}

/// Reinterprets the server's `argv` as arguments.
///
/// # Safety
/// `argv` must point to `argc` valid strings that outlive `'a`.
pub unsafe fn from_argv<'a>(argv: *mut *mut raw::RedisModuleString, argc: i32) -> &'a [Arg<'a>] {
    match usize::try_from(argc) {
        // SAFETY: `argv` holds `argc` valid strings that outlive `'a` (the
        // caller's promise); `Arg` is a transparent wrapper of the pointer.
        Ok(len) if !argv.is_null() => unsafe {
            std::slice::from_raw_parts(argv.cast::<Arg<'a>>(), len)
        },
        _ => &[],
    }
}
