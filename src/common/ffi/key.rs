//! The low-level key API (`RedisModule_OpenKey`, string DMA, hash get/set),
//! wrapped so a key is always closed and every write is announced like a
//! built-in's: `WATCH`/client-tracking invalidation and a keyspace event.
//!
//! A key is opened to read (`Key::read`, a [`Key<Read>`]) or to write
//! (`Key::write`, a [`Key<Write>`]); only a key opened to write has the
//! write methods, and they take it `&mut`, so a slice or value read from a
//! key cannot outlive a write through it.

use std::ffi::CStr;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::ptr;
use std::sync::atomic::{AtomicI32, Ordering};

use redis_module::{raw, Context, RedisError};

use super::args::Arg;
use super::strings::{fixed_string, OwnedString};
use crate::api;
use crate::common::args::parse_i64;
use crate::common::datatype::Stored;
use crate::common::errors;
use crate::common::fitting::fitting_steps;

/// What a key holds, as far as the recipes care.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    Empty,
    String,
    Hash,
    Other,
}

/// An end of a list: where `LPUSH` (`Head`) or `RPUSH` (`Tail`) pushes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    Head,
    Tail,
}

impl End {
    /// The other end: where the oldest items of a list pushed at this one are.
    pub fn other(self) -> Self {
        match self {
            End::Head => End::Tail,
            End::Tail => End::Head,
        }
    }

    fn raw(self) -> c_int {
        match self {
            End::Head => raw::REDISMODULE_LIST_HEAD as c_int,
            End::Tail => raw::REDISMODULE_LIST_TAIL as c_int,
        }
    }
}

/// A key opened to read: null when the key is missing.
pub enum Read {}
/// A key opened to write: always a handle, through which it may be created.
pub enum Write {}

pub struct Key<'a, M = Write> {
    ctx: &'a Context,
    name: Arg<'a>,
    inner: *mut raw::RedisModuleKey,
    /// Changed by this command: closing the key signals it (see [`OPTIONS`]).
    changed: bool,
    mode: PhantomData<M>,
}

/// The module's options. Keys are not signalled as modified when closed, so
/// a command that changed nothing does not abort a `WATCH`; a key this module
/// changed is signalled as it closes, by lifting the option for that one
/// close. Closing signals from the open key's own value, where
/// `RedisModule_SignalModifiedKey` looks the key up again: on Redis 8.6 that
/// second lookup costs 340 instructions a write, 6.9% of `IDGEN.NEXT` (4.4%
/// of `ARTICLE.VIEW`); none on 7.0 (callgrind, `bench/results/cost.md`,
/// "Optimisations that depend on server internals"). A short read
/// of a stored value (a truncated `RESTORE` payload) is reported to the
/// loader, which refuses it, instead of stopping the server.
pub const OPTIONS: c_int = NO_IMPLICIT_SIGNAL | raw::REDISMODULE_OPTIONS_HANDLE_IO_ERRORS as c_int;

const NO_IMPLICIT_SIGNAL: c_int = raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;

/// [`OPTIONS`] and those the running server needs too (set once at load).
static SERVER_OPTIONS: AtomicI32 = AtomicI32::new(OPTIONS);

/// Sets the module's options at load: [`OPTIONS`] and `server`'s.
pub fn set_options(ctx: &Context, server: c_int) {
    let options = OPTIONS | server;
    SERVER_OPTIONS.store(options, Ordering::Relaxed);
    // SAFETY: `ctx` is the module's load context; the server only stores
    // `options` in the module.
    unsafe { api!(RedisModule_SetModuleOptions)(ctx.get_raw(), options) };
}

impl<'a> Key<'a, Read> {
    pub fn read(ctx: &'a Context, name: Arg<'a>) -> Self {
        Self::open(ctx, name, raw::REDISMODULE_READ)
    }
}

impl<'a> Key<'a, Write> {
    pub fn write(ctx: &'a Context, name: Arg<'a>) -> Self {
        Self::open(ctx, name, raw::REDISMODULE_READ | raw::REDISMODULE_WRITE)
    }
}

impl<'a, M> Key<'a, M> {
    fn open(ctx: &'a Context, name: Arg<'a>, mode: u32) -> Self {
        // SAFETY: `ctx` is the context of a command, timer or job, all with a
        // client (whose database is used); `name` is a live server string
        // (`Arg`), of which the key takes its own reference.
        let inner =
            unsafe { api!(RedisModule_OpenKey)(ctx.get_raw(), name.as_ptr(), mode as c_int) };
        Self {
            ctx,
            name,
            inner: inner.cast(),
            changed: false,
            mode: PhantomData,
        }
    }

    pub fn name(&self) -> Arg<'a> {
        self.name
    }

    pub fn kind(&self) -> Kind {
        if self.inner.is_null() {
            return Kind::Empty;
        }
        // SAFETY: `inner` is non-null (checked above) and open: made by `open`,
        // closed only in `Drop`.
        let kind = unsafe { api!(RedisModule_KeyType)(self.inner) } as isize;
        match kind {
            raw::REDISMODULE_KEYTYPE_EMPTY => Kind::Empty,
            raw::REDISMODULE_KEYTYPE_STRING => Kind::String,
            raw::REDISMODULE_KEYTYPE_HASH => Kind::Hash,
            _ => Kind::Other,
        }
    }

    /// The string value, or `None` for an empty key. Any other type is
    /// `WRONGTYPE`.
    pub fn string(&self) -> Result<Option<&[u8]>, RedisError> {
        match self.kind() {
            Kind::Empty => Ok(None),
            Kind::String => {
                let mut len = 0;
                // SAFETY: `inner` is open (closed only in `Drop`) and non-null,
                // since `kind` saw a string; `len` is a local the server writes
                // the length to.
                let data = unsafe {
                    api!(RedisModule_StringDMA)(
                        self.inner,
                        &mut len,
                        raw::REDISMODULE_READ as c_int,
                    )
                };
                if data.is_null() {
                    return Err(RedisError::WrongType);
                }
                // SAFETY: `data` is non-null and points to the key's `len`
                // bytes, valid until the key is written or closed: the slice
                // borrows the key, and both writing (`&mut self`) and closing
                // (`self`) need it back.
                Ok(Some(unsafe {
                    std::slice::from_raw_parts(data.cast::<u8>(), len)
                }))
            }
            Kind::Hash | Kind::Other => Err(RedisError::WrongType),
        }
    }

    /// The length of the list at this key, `None` for an empty key; a key
    /// of another type is `WRONGTYPE`.
    pub fn list_len(&self) -> Result<Option<usize>, RedisError> {
        if self.inner.is_null() {
            return Ok(None);
        }
        // SAFETY: `inner` is non-null (checked above) and open: made by `open`,
        // closed only in `Drop`.
        match unsafe { api!(RedisModule_KeyType)(self.inner) } as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(None),
            raw::REDISMODULE_KEYTYPE_LIST => {
                // SAFETY: as above; the key holds a list, whose length the
                // server reads from it.
                Ok(Some(unsafe { api!(RedisModule_ValueLength)(self.inner) }))
            }
            _ => Err(RedisError::WrongType),
        }
    }

    /// Whether this key holds a sorted set: `false` for an empty key; a key
    /// of another type is `WRONGTYPE`.
    pub fn is_zset(&self) -> Result<bool, RedisError> {
        if self.inner.is_null() {
            return Ok(false);
        }
        // SAFETY: `inner` is non-null (checked above) and open: made by `open`,
        // closed only in `Drop`.
        match unsafe { api!(RedisModule_KeyType)(self.inner) } as isize {
            raw::REDISMODULE_KEYTYPE_EMPTY => Ok(false),
            raw::REDISMODULE_KEYTYPE_ZSET => Ok(true),
            _ => Err(RedisError::WrongType),
        }
    }

    /// The score of `member` in the sorted set at this key, `None` when the
    /// key or the member is absent; a key of another type is `WRONGTYPE`.
    pub fn zset_score(&self, member: Arg) -> Result<Option<f64>, RedisError> {
        if !self.is_zset()? {
            return Ok(None);
        }
        let mut score = 0.0;
        // SAFETY: `inner` is open and holds a sorted set (`is_zset`); the
        // member is a live server string, `score` a local the server writes.
        let found = unsafe { api!(RedisModule_ZsetScore)(self.inner, member.as_ptr(), &mut score) };
        Ok((found == raw::REDISMODULE_OK as c_int).then_some(score))
    }

    /// Calls `each` with every member of the sorted set at this key scored
    /// in `start..end` (`start` included), in score order, with its score;
    /// nothing for an empty key. A key of another type is `WRONGTYPE`.
    pub fn zset_range(
        &self,
        start: f64,
        end: f64,
        mut each: impl FnMut(OwnedString<'a>, f64),
    ) -> Result<(), RedisError> {
        if !self.is_zset()? {
            return Ok(());
        }
        // SAFETY: `inner` is open and holds a sorted set (`is_zset`); the range
        // iterator is stopped below before the key can be used otherwise
        // (`each` gets no access to the key).
        let started =
            unsafe { api!(RedisModule_ZsetFirstInScoreRange)(self.inner, start, end, 0, 1) };
        if started != raw::REDISMODULE_OK as c_int {
            return Ok(());
        }
        loop {
            // SAFETY: as above, the iterator started and not yet stopped.
            if unsafe { api!(RedisModule_ZsetRangeEndReached)(self.inner) } != 0 {
                break;
            }
            let mut score = 0.0;
            // SAFETY: as above; the string returned is ours, freed by
            // `OwnedString`.
            let member =
                unsafe { api!(RedisModule_ZsetRangeCurrentElement)(self.inner, &mut score) };
            if !member.is_null() {
                each(
                    OwnedString {
                        ctx: self.ctx,
                        inner: member,
                    },
                    score,
                );
            }
            // SAFETY: as above.
            if unsafe { api!(RedisModule_ZsetRangeNext)(self.inner) } == 0 {
                break;
            }
        }
        // SAFETY: as above; stopping an iterator that ended is allowed.
        unsafe { api!(RedisModule_ZsetRangeStop)(self.inner) };
        Ok(())
    }

    /// The integer a counter key holds (what `INCR` makes), `None` for an
    /// empty key. A non-integer is INCR's error; another type `WRONGTYPE`.
    pub fn integer(&self) -> Result<Option<i64>, RedisError> {
        match self.string()? {
            None => Ok(None),
            Some(value) => parse_i64(value)
                .map(Some)
                .ok_or(errors::NOT_AN_INTEGER.error()),
        }
    }

    /// The value of a key holding the module data type of `T`, `None` for
    /// an empty key; a key of any other type is `WRONGTYPE`.
    #[inline]
    pub fn value<T: Stored>(&self) -> Result<Option<&T>, RedisError> {
        Ok(self.value_ptr::<T>()?.and_then(|value| {
            // SAFETY: a `T` owned by the key (see `value_ptr`), borrowed no
            // longer than the key, which a write (`&mut self`) needs back.
            unsafe { value.as_ref() }
        }))
    }

    /// The pointer to the `T` a key of `T`'s data type holds.
    #[inline]
    fn value_ptr<T: Stored>(&self) -> Result<Option<*mut T>, RedisError> {
        if self.inner.is_null() {
            return Ok(None);
        }
        let ty = *T::data_type().raw_type.borrow();
        // SAFETY: `inner` is open (closed only in `Drop`) and non-null; the
        // server answers null for an empty key or one of another type, so
        // the key type is asked only then.
        if unsafe { api!(RedisModule_ModuleTypeGetType)(self.inner) } != ty {
            return match self.kind() {
                Kind::Empty => Ok(None),
                _ => Err(RedisError::WrongType),
            };
        }
        // SAFETY: as above. The server holds values of `T`'s data type only as
        // set by `set_typed_value::<T>` (or `T`'s load and copy callbacks), so
        // this one is a `T`, owned by the key.
        let value = unsafe { api!(RedisModule_ModuleTypeGetValue)(self.inner) };
        Ok(Some(value.cast::<T>()))
    }

    /// The absolute expiry time in Unix milliseconds, `None` without a TTL
    /// or without a key (which Redis 8.6 would abort on).
    pub fn expire_at(&self) -> Option<i64> {
        if self.kind() == Kind::Empty {
            return None;
        }
        // SAFETY: `inner` is open and non-null, since `kind` saw a value (the
        // server reads through it unchecked).
        let at = unsafe { api!(RedisModule_GetAbsExpire)(self.inner) };
        (at != raw::REDISMODULE_NO_EXPIRE as i64).then_some(at)
    }

    /// A field of the hash at this key; `None` when the key or field is
    /// absent. A key of another type is `WRONGTYPE`.
    pub fn hash_field(&self, field: Field) -> Result<Option<OwnedString<'a>>, RedisError> {
        match self.kind() {
            Kind::Empty => Ok(None),
            Kind::Hash => {
                let mut value: *mut raw::RedisModuleString = ptr::null_mut();
                // SAFETY: `inner` is open and non-null (`kind` saw a hash); the
                // field is a live server string, `value` a local out-pointer,
                // and the null pointer ends the list. The string returned is
                // ours, freed by `OwnedString`.
                unsafe {
                    api!(RedisModule_HashGet)(
                        self.inner,
                        field.flags(),
                        field.as_ptr(),
                        &mut value as *mut *mut raw::RedisModuleString,
                        ptr::null_mut::<raw::RedisModuleString>(),
                    )
                };
                Ok((!value.is_null()).then(|| OwnedString {
                    ctx: self.ctx,
                    inner: value,
                }))
            }
            Kind::String | Kind::Other => Err(RedisError::WrongType),
        }
    }

    /// Fires a keyspace event on this key (a second event of one write, as
    /// `SET … PX` fires `set` then `expire`).
    pub fn notify(&self, class: c_int, event: &CStr) {
        let ctx = self.ctx.get_raw();
        // SAFETY: `ctx` is the server's context of the running call (refused
        // without a client); the event is a C string and the name a live server
        // string, both only read during the call.
        unsafe {
            api!(RedisModule_NotifyKeyspaceEvent)(ctx, class, event.as_ptr(), self.name.as_ptr())
        };
    }
}

/// The writes, only through a key opened to write: its handle is never null
/// (a write open always returns one, even for a missing key).
impl<'a> Key<'a, Write> {
    /// Stores a counter's new value as `INCR` would (in place, TTL kept) and
    /// announces `incrby`. The caller replicates.
    pub fn store_integer(&mut self, value: i64) -> Result<(), RedisError> {
        self.set_string(itoa::Buffer::new().format(value).as_bytes())?;
        self.written(raw::REDISMODULE_NOTIFY_STRING as c_int, c"incrby");
        Ok(())
    }

    /// Makes the key the string `value` with its TTL ending at `expire_at` (or
    /// none), as `SET key value [PXAT t]` does — a value of another type is
    /// replaced, and the string's allocation fits `value` as a new string's
    /// would (see [`fitting_steps`]) — and announces it. The caller
    /// replicates.
    pub fn set_value(&mut self, value: &[u8], expire_at: Option<i64>) -> Result<(), RedisError> {
        let fit = match self.kind() {
            // Made at exactly this length.
            Kind::Empty => false,
            Kind::String => true,
            Kind::Hash | Kind::Other => {
                self.delete();
                false
            }
        };
        self.write_string(value, fit)?;
        self.set_expire_at(expire_at);
        self.written(raw::REDISMODULE_NOTIFY_STRING as c_int, c"set");
        if expire_at.is_some() {
            self.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"expire");
        }
        Ok(())
    }

    /// Replaces the string value in place (creating the key if empty), keeping
    /// its TTL, as `INCR` does.
    pub fn set_string(&mut self, value: &[u8]) -> Result<(), RedisError> {
        self.write_string(value, false)
    }

    /// Writes `value` over the string value in place (creating the key if
    /// empty); with `fit`, a string of another length is resized by
    /// [`fitting_steps`], so that no room is left over.
    fn write_string(&mut self, value: &[u8], fit: bool) -> Result<(), RedisError> {
        const FAILED: RedisError = errors::NOT_STORED.error();
        let mut len = 0;
        // SAFETY: `inner` is open and non-null: only keys opened with
        // `Key::write` are written, and a write open always returns a handle
        // (the server reads through it unchecked). `len` is a local the server
        // writes to.
        let mut data = unsafe {
            api!(RedisModule_StringDMA)(self.inner, &mut len, raw::REDISMODULE_WRITE as c_int)
        };
        if data.is_null() {
            return Err(FAILED);
        }
        if len != value.len() {
            let truncate = |len: usize| {
                // SAFETY: `inner` as above: open, non-null (a key opened for
                // writing). The DMA pointer is not used across the call.
                let done = unsafe { api!(RedisModule_StringTruncate)(self.inner, len) };
                done == raw::REDISMODULE_OK as c_int
            };
            if fit {
                // Only the allocation depends on these: were one refused,
                // the last step still sets the length.
                for step in fitting_steps(len, value.len()).into_iter().flatten() {
                    truncate(step);
                }
            }
            if !truncate(value.len()) {
                return Err(FAILED);
            }
            // SAFETY: `inner` as above; `len` is the same local.
            data = unsafe {
                api!(RedisModule_StringDMA)(self.inner, &mut len, raw::REDISMODULE_WRITE as c_int)
            };
            if data.is_null() || len != value.len() {
                return Err(FAILED);
            }
        }
        // SAFETY: `data` is non-null and points to `len == value.len()` bytes
        // of the key's own string, writable after a write-mode DMA (zero bytes
        // for an empty value); `value` is our slice, so the two do not overlap.
        unsafe { ptr::copy_nonoverlapping(value.as_ptr(), data.cast::<u8>(), value.len()) };
        Ok(())
    }

    /// The value of a key holding the module data type of `T`, to change in
    /// place; `None` for an empty key, `WRONGTYPE` for any other type.
    pub fn typed_value<T: Stored>(&mut self) -> Result<Option<&mut T>, RedisError> {
        Ok(self.value_ptr::<T>()?.and_then(|value| {
            // SAFETY: a `T` owned by the key (see `value_ptr`), borrowed
            // mutably no longer than the key itself.
            unsafe { value.as_mut() }
        }))
    }

    /// Makes the (empty) key hold `value` as `T`'s module data type.
    pub fn set_typed_value<T: Stored>(&self, value: Box<T>) -> Result<(), RedisError> {
        let ty = *T::data_type().raw_type.borrow();
        let value = Box::into_raw(value);
        // SAFETY: `inner` is open and non-null (values are only set on keys
        // opened with `Key::write`); `ty` is `T`'s type, created at load. On
        // success the server owns `value` and frees it with `T`'s `free`
        // callback.
        let set = unsafe { api!(RedisModule_ModuleTypeSetValue)(self.inner, ty, value.cast()) };
        if set != raw::REDISMODULE_OK as c_int {
            // SAFETY: the server refused it, so the box is still ours.
            drop(unsafe { Box::from_raw(value) });
            return Err(errors::NOT_STORED.error());
        }
        Ok(())
    }

    /// Sets the absolute expiry time in Unix milliseconds, or removes the TTL
    /// with `None`. The key must exist.
    pub fn set_expire_at(&mut self, at: Option<i64>) {
        let at = at.unwrap_or(raw::REDISMODULE_NO_EXPIRE as i64);
        // SAFETY: `inner` is open and non-null: expiries are only set on keys
        // opened with `Key::write`, which always have a handle; the server
        // refuses a key without a value.
        unsafe { api!(RedisModule_SetAbsExpire)(self.inner, at) };
    }

    /// Pushes `item` at `end` of the list at this key, creating the list on
    /// an empty key. Creating it signals the key as ready, as `RPUSH` does,
    /// so clients blocked on it (`BLPOP`, `BLMOVE`, …) are served once the
    /// command ends. The caller has checked the key is a list or empty
    /// ([`Key::list_len`]), and announces and replicates the write.
    pub fn list_push(&mut self, end: End, item: Arg) -> Result<(), RedisError> {
        // SAFETY: `inner` is open and non-null (a key opened to write always
        // has a handle); `item` is a live server string, which the server
        // copies into the list.
        let pushed = unsafe { api!(RedisModule_ListPush)(self.inner, end.raw(), item.as_ptr()) };
        if pushed != raw::REDISMODULE_OK as c_int {
            return Err(errors::NOT_STORED.error());
        }
        Ok(())
    }

    /// Pops the item at `end` of the list at this key straight into the
    /// reply being built (the next bulk string of an array, see
    /// [`direct`](super::reply::direct)): `false`, sending nothing, when the
    /// key holds no list. No string is kept: the server's own is sent and
    /// freed. A list left empty is deleted (the caller keeps it from
    /// emptying where that would lose the key's TTL) and announces the write.
    pub fn list_pop_reply(&mut self, end: End) -> bool {
        // SAFETY: `inner` is open and non-null (a key opened to write); the
        // server checks the key holds a list (null otherwise). The module
        // never enables automatic memory, so the string returned is ours: the
        // server copies it into the reply, and it is released here, once.
        unsafe {
            let popped = api!(RedisModule_ListPop)(self.inner, end.raw());
            if popped.is_null() {
                return false;
            }
            api!(RedisModule_ReplyWithString)(self.ctx.get_raw(), popped);
            api!(RedisModule_FreeString)(ptr::null_mut(), popped);
        }
        true
    }

    /// Deletes the key.
    pub fn delete(&mut self) {
        // SAFETY: `inner` is open and non-null: only keys opened with
        // `Key::write`, which always have a handle, are deleted.
        unsafe { api!(RedisModule_DeleteKey)(self.inner) };
    }

    /// Sets a hash field (creating the hash if the key is empty) to `value`
    /// (an argument, or an [`OwnedString`]'s `as_arg()`). `true` when the
    /// field existed.
    pub fn set_hash_field(&mut self, field: Field, value: Arg) -> bool {
        self.hash_set(field, value.as_ptr())
    }

    /// `RedisModule_HashSet` of one field to a server string, or to the
    /// server's delete marker: `true` when the field existed (its value was
    /// replaced, or deleted).
    fn hash_set(&mut self, field: Field, value: *mut raw::RedisModuleString) -> bool {
        // SAFETY: `inner` is open and non-null (a key opened to write); the
        // field is a live server string, and so is `value` (an `Arg`) unless
        // it is the delete marker; the server copies both, and
        // the null pointer ends the list.
        let replaced = unsafe {
            api!(RedisModule_HashSet)(
                self.inner,
                field.flags(),
                field.as_ptr(),
                value,
                ptr::null_mut::<raw::RedisModuleString>(),
            )
        };
        // HashSet counts the fields that existed and were replaced or deleted;
        // callers have checked the key is a hash or empty.
        replaced > 0
    }

    /// Deletes a hash field; a hash left empty is deleted, as `HDEL` does.
    pub fn delete_hash_field(&mut self, field: Field) {
        // The server's "delete this field" marker value.
        self.hash_set(
            field,
            raw::REDISMODULE_HASH_DELETE as *mut raw::RedisModuleString,
        );
    }

    /// Announces a write to this key as a built-in does: fires the keyspace
    /// event now, and invalidates `WATCH` and client-tracking caches when the
    /// key closes, before the command returns.
    pub fn written(&mut self, class: c_int, event: &CStr) {
        self.changed = true;
        self.notify(class, event);
    }
}

impl<M> Drop for Key<'_, M> {
    // Not inlined: where a key sits in an `Option` (`ARTICLE.CREATE`'s
    // index), the inlined test of `inner` came before the `Option`'s own,
    // reading the pointer of a key never opened (harmless, the `Option`
    // decided, but valgrind counted it as a jump on uninitialised memory).
    #[inline(never)]
    fn drop(&mut self) {
        if self.inner.is_null() {
            return;
        }
        let close = api!(RedisModule_CloseKey);
        if self.changed {
            let set_options = api!(RedisModule_SetModuleOptions);
            let ctx = self.ctx.get_raw();
            let options = SERVER_OPTIONS.load(Ordering::Relaxed);
            // Nothing runs between the two option changes but the close.
            // SAFETY: `ctx` is the context the key was opened in; `inner` is
            // open and non-null (checked above) and is closed here, once.
            unsafe {
                set_options(ctx, options & !NO_IMPLICIT_SIGNAL);
                close(self.inner);
                set_options(ctx, options);
            }
        } else {
            // SAFETY: `inner` is open and non-null (checked above); closed
            // here, once.
            unsafe { close(self.inner) };
        }
    }
}

/// Keys a command hands over to be closed, by value, so that it cannot use
/// them after: a [`Key`] opened to read or to write, an `Option` of one, a
/// pair, a `Vec` of them, or `()` for none. The wait queues take them before
/// serving or parking, which may open the same keys again.
pub trait OpenKeys {
    /// Closes them, in order: a key written is signalled as it closes.
    fn close(self);
}

impl<M> OpenKeys for Key<'_, M> {
    fn close(self) {
        drop(self);
    }
}

impl<K: OpenKeys> OpenKeys for Option<K> {
    fn close(self) {
        if let Some(keys) = self {
            keys.close();
        }
    }
}

impl<A: OpenKeys, B: OpenKeys> OpenKeys for (A, B) {
    fn close(self) {
        self.0.close();
        self.1.close();
    }
}

impl<K: OpenKeys> OpenKeys for Vec<K> {
    fn close(self) {
        for keys in self {
            keys.close();
        }
    }
}

impl OpenKeys for () {
    fn close(self) {}
}

/// A hash field name: a command argument, or one fixed by the module.
#[derive(Clone, Copy)]
pub enum Field<'f> {
    Arg(Arg<'f>),
    Name(&'static CStr),
}

impl Field<'_> {
    fn flags(&self) -> c_int {
        raw::REDISMODULE_HASH_NONE as c_int
    }

    fn as_ptr(&self) -> *mut raw::RedisModuleString {
        match self {
            Field::Arg(arg) => arg.as_ptr(),
            // A made-once string: no allocation per lookup, as C-string
            // field names (REDISMODULE_HASH_CFIELDS) would cost.
            Field::Name(name) => fixed_string(name),
        }
    }
}
