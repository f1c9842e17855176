//! RWLOCK: a fair readers-writer lock. Many readers or one writer, each
//! holder with its own lease; waiters served in arrival order.
//!
//! A lock is a key of the module data type `rr-rwlock` (see
//! `rwlock/core.rs` for the rules). A lock left without holders is deleted,
//! so a missing key is a free lock. The key's TTL is the last lease end of
//! its holders (none while some holder has no lease): a lock whose holders
//! all died goes by itself.
//!
//! Fairness: a client that finds the lock taken, or finds clients already
//! waiting, waits (`… WAIT ms`) in the key's queue (`common/wait/`). The
//! oldest waiter is served first; readers at the head of the queue are
//! admitted together, and a writer at the head holds back every reader that
//! came after it, so a stream of readers never starves a writer. Waiters
//! are served when a holder lets go (inside `RWLOCK.RELEASE`, or a
//! downgrade), when a lease ends (a timer at that time), or when anything
//! else deletes or replaces the key (`DEL`, `RESTORE`, `FLUSHALL`, …).
//!
//! Replication. An acquisition, an extension and every ended lease
//! reclaimed are sent as their effect, `RWLOCK.APPLY key [DROP token]…
//! [READ|WRITE token at]…`, with absolute lease ends (0 for none), and a new
//! fencing token as `SET fencekey n KEEPTTL`; a release that reclaimed
//! nothing goes verbatim. The key's TTL follows from the holders, on every
//! server alike. As with keys that expire, only the primary reclaims ended
//! leases, and replicates that.

#![forbid(unsafe_code)]

mod core;
mod errors;

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::native_types::RedisType;
use redis_module::{raw, Context, RedisError, RedisValue};

use self::core::{Decision, Mode, RwLock};
use crate::common::args::{groups, parse_options, single, token};
use crate::common::command::{
    internal_only, ArgSpec, ArgType, BeginSearch, CommandSpec, Events, FindKeys, KeySpec, ADD, EX,
    FENCE, LEASE, PX, READS_FIRST, UPDATED, UPDATES_FIRST, WAIT,
};
use crate::common::datatype::{self, adopt, Stored, StoredType};
use crate::common::family::FamilySpec;
use crate::common::ffi;
use crate::common::ffi::args::Arg;
use crate::common::ffi::context::now_ms;
use crate::common::ffi::io::{Digest, Reader, Rewrite, Writer};
use crate::common::ffi::key::{Key, Kind};
use crate::common::ffi::replicate::{self, Word};
use crate::common::ffi::strings::OwnedString;
use crate::common::lease::{self, NO_END};
use crate::common::reply::{Item, Replied, Reply};
use crate::common::stats::Stat;
use crate::common::time;
use crate::common::wait::{self, Cause, Event, Offer, Take, WaitStats, Waitable, Waits};
use crate::entry;

/// The encoding versions of a lock's stored form this build reads, oldest
/// first; it writes the last (see `Stored for RwLock` below).
pub const ENCODINGS: &[i32] = &[1];

pub static RWLOCK_TYPE: RedisType = RedisType::new(
    "rr-rwlock",
    datatype::written::<RwLock>(),
    ffi::datatype::methods::<RwLock>(),
);

const EVENT_CLASS: c_int = raw::REDISMODULE_NOTIFY_MODULE;

const UPGRADE: RedisError = errors::NO_UPGRADE.error();

/// The server's clock, in Unix milliseconds.
fn now() -> u64 {
    now_ms().max(0) as u64
}

/// `READ` or `WRITE`, in any case.
fn mode(arg: &Arg) -> Result<Mode, RedisError> {
    if arg.is(&READ) {
        Ok(Mode::Read)
    } else if arg.is(&WRITE) {
        Ok(Mode::Write)
    } else {
        Err(errors::SYNTAX.error())
    }
}

/// The lock at `key`, `None` for a missing key.
fn lock_at<'k>(key: &'k mut Key) -> Result<Option<&'k mut RwLock>, RedisError> {
    key.typed_value::<RwLock>()
}

/// Lets go the holders whose lease ended before `now` (see
/// [`lease::reclaim_ended`]).
fn reclaim(ctx: &Context, lock: &mut RwLock, now: u64) -> Vec<Box<[u8]>> {
    if lock.first_end().is_none_or(|first| first >= now) {
        // Nothing ended: no need to ask whether this server decides.
        return Vec::new();
    }
    lease::reclaim_ended(ctx, None, |freed| {
        lock.reclaim(now, |token| freed.push(token.into()))
    })
}

/// Makes the key follow its lock after a change, given the lock's last
/// lease end (`None`: no holder left): deleted without holders, else living
/// until the last lease end.
fn follow(key: &mut Key, last: Option<u64>, event: &CStr) {
    key.written(EVENT_CLASS, event);
    let Some(last) = last else {
        key.delete();
        key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, c"del");
        return;
    };
    let at = (last != NO_END).then_some(last as i64);
    if key.expire_at() != at {
        key.set_expire_at(at);
        // The events of `PEXPIREAT` and `PERSIST`.
        let event = match at {
            Some(_) => c"expire",
            None => c"persist",
        };
        key.notify(raw::REDISMODULE_NOTIFY_GENERIC as c_int, event);
    }
}

/// Replicates a change as its effect: `RWLOCK.APPLY key [DROP token]…
/// [READ|WRITE token at]`.
fn replicate_effect(
    ctx: &Context,
    name: Arg,
    dropped: &[Box<[u8]>],
    held: Option<(Mode, &[u8], u64)>,
) {
    let held = held.map(|(mode, token, until)| {
        [
            Word::Token(mode.word()),
            Word::Bytes(token),
            Word::Int(lease::to_wire(until)),
        ]
    });
    if let ([], Some([mode, token, at])) = (dropped, held) {
        // An acquisition that reclaimed nothing: the usual case.
        return replicate::effect(ctx, APPLY.upper_name(), &[Word::Arg(name), mode, token, at]);
    }
    let mut words = Vec::with_capacity(1 + 2 * dropped.len() + 3);
    words.push(Word::Arg(name));
    for token in dropped {
        words.extend([Word::Token(c"DROP"), Word::Bytes(token)]);
    }
    words.extend(held.into_iter().flatten());
    replicate::effect(ctx, APPLY.upper_name(), &words);
}

/// What an acquisition asks for; a waiter carries it until its turn.
pub struct Request {
    token: Vec<u8>,
    asked: Asked,
    fence: Option<Vec<u8>>,
}

/// The mode asked for, and the lease in milliseconds counted from the
/// grant (`None`: no end).
#[derive(Clone, Copy)]
struct Asked {
    mode: Mode,
    lease: Option<i64>,
}

/// The fencing token a grant answers, and whether it is new (the counter
/// moves): a new writer's is the next; a reader's, or a writer's asking
/// again, is the counter's current value.
fn fencing(fence: &Key, mode: Mode, decision: Decision) -> Result<(i64, bool), RedisError> {
    let current = fence.integer()?;
    match (mode, decision, current) {
        (Mode::Read, _, current) => Ok((current.unwrap_or(0), false)),
        (Mode::Write, Decision::Again, Some(current)) => Ok((current, false)),
        (Mode::Write, _, current) => Ok((
            current
                .unwrap_or(0)
                .checked_add(1)
                .ok_or(errors::OVERFLOW.error())?,
            true,
        )),
    }
}

/// Grants `token` the mode `asked` if the lock allows it now
/// (`others_wait`: a new arrival finding clients already waiting is not
/// served before them), replicating it as its effect; or says when to look
/// again. Everything is checked before anything is written: an error
/// changes nothing.
fn take(
    ctx: &Context,
    key: &mut Key,
    fence: Option<&mut Key>,
    token: &[u8],
    asked: Asked,
    others_wait: bool,
) -> Result<Take<(RedisValue, Decision)>, RedisError> {
    let name = key.name();
    let now = now();
    let until = lease::end_after(now, asked.lease)?;
    let held = lock_at(key)?;
    let decision = match &held {
        Some(lock) => lock.decide(token, asked.mode, others_wait, now),
        None => RwLock::default().decide(token, asked.mode, others_wait, now),
    };
    let fenced = match (fence, decision) {
        (_, Decision::Upgrade) => return Err(UPGRADE),
        (Some(fence), Decision::New | Decision::Again | Decision::Downgrade) => {
            let fenced = fencing(fence, asked.mode, decision)?;
            Some((fence, fenced))
        }
        _ => None,
    };
    let lock = match held {
        Some(lock) => lock,
        None if decision == Decision::Busy => return Ok(Take::Nothing(None)),
        None => {
            key.set_typed_value(adopt(RwLock::default()))?;
            lock_at(key)?.ok_or(errors::NOT_STORED.error())?
        }
    };
    let freed = reclaim(ctx, lock, now);
    if decision == Decision::Busy {
        // A lease lasts through its end: look again just after it.
        let next = lock.first_end().filter(|&end| end != NO_END);
        let last = lock.last_end();
        if !freed.is_empty() {
            replicate_effect(ctx, name, &freed, None);
            follow(key, last, c"rwlock.reclaim");
        }
        return Ok(Take::Nothing(
            next.map(|end| (end as i64).saturating_add(1)),
        ));
    }
    lock.hold(token, asked.mode, until);
    let last = lock.last_end();
    replicate_effect(ctx, name, &freed, Some((asked.mode, token, until)));
    follow(key, last, c"rwlock.acquire");
    let reply = match fenced {
        Some((fence, (value, moved))) => {
            if moved {
                fence.store_integer(value)?;
                replicate::effect(
                    ctx,
                    c"SET",
                    &[
                        Word::Arg(fence.name()),
                        Word::Int(value),
                        Word::Token(c"KEEPTTL"),
                    ],
                );
            }
            RedisValue::Integer(value)
        }
        None => RedisValue::Integer(1),
    };
    Ok(Take::Got((reply, decision)))
}

/// What a hand-off gave a waiter: its token, mode and lease end.
pub struct Handed {
    token: Vec<u8>,
    mode: Mode,
    until: Option<u64>,
}

/// RWLOCK's waits (see `common/wait/`).
pub struct RwLocks;

static WAITS: Waits<Request> = Waits::new();

impl Waitable for RwLocks {
    type Request = Request;
    type Grant = Handed;
    const KEYS_WAITED_ON: &'static CStr = c"rwlocks_with_waiters";

    fn waits() -> &'static Waits<Request> {
        &WAITS
    }

    fn command(_: &Request) -> &'static CommandSpec {
        &ACQUIRE
    }

    /// The oldest waiter is served as its acquisition would have been,
    /// whoever waits behind it.
    fn offer(ctx: &Context, name: Arg, request: &Request) -> Offer<Handed> {
        let mut key = Key::write(ctx, name);
        let fence_name = request
            .fence
            .as_ref()
            .map(|f| OwnedString::from_bytes(ctx, f));
        let mut fence = fence_name.as_ref().map(|f| Key::write(ctx, f.as_arg()));
        let taken = take(
            ctx,
            &mut key,
            fence.as_mut(),
            &request.token,
            request.asked,
            false,
        );
        let until = lock_at(&mut key)
            .ok()
            .flatten()
            .and_then(|lock| lock.end_of(&request.token));
        Offer::of(taken.map(|taken| {
            taken.map(|(reply, _)| {
                let handed = Handed {
                    token: request.token.clone(),
                    mode: request.asked.mode,
                    until,
                };
                (reply, handed)
            })
        }))
    }

    /// A hand-off whose reply never reached the waiter: that holder lets go
    /// if it still holds the lock as granted (a fencing token it took stays
    /// used: fences only rise), replicated as `RWLOCK.APPLY key DROP token`.
    fn revoke(ctx: &Context, name: Arg, handed: &Handed) -> bool {
        let mut key = Key::write(ctx, name);
        let Ok(Some(lock)) = lock_at(&mut key) else {
            return false;
        };
        let held = lock.held_by(&handed.token) == Some(handed.mode)
            && lock.end_of(&handed.token) == handed.until;
        if !held || !lock.release(&handed.token) {
            return false;
        }
        let last = lock.last_end();
        replicate_effect(ctx, name, &[handed.token.as_slice().into()], None);
        follow(&mut key, last, c"rwlock.release");
        true
    }

    fn count(event: Event) {
        WAIT_STATS.count(event);
    }
}

/// `RWLOCK.ACQUIRE key READ|WRITE token [PX ms | EX s] [WAIT ms] [FENCE
/// fencekey]` → 1 (with `FENCE`, the fencing token), or nil when not
/// acquired (after waiting up to `ms` with `WAIT`).
fn acquire<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, mode_arg, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let mode = mode(mode_arg)?;
    let token = token(token_arg)?;
    let [px, ex, wait, fence] = parse_options(options, &[PX, EX, WAIT, FENCE])?;
    let lease = time::lease(px, ex)?;
    let wait = wait::parse_wait(single(wait))?;
    let fence = single(fence);
    if fence.is_some_and(|fence| fence.as_bytes() == name.as_bytes()) {
        return Err(errors::FENCE_KEY.error());
    }
    // What came free while clients wait belongs to the oldest of them.
    wait::serve_waiters::<RwLocks>(ctx, name.as_bytes(), (), Cause::Expiry);
    let others_wait = wait::waiting_on::<RwLocks>(ctx, name.as_bytes()) > 0;
    let asked = Asked { mode, lease };
    let mut key = Key::write(ctx, *name);
    let mut fence_key = fence.map(|fence| Key::write(ctx, fence));
    // Checked whatever the outcome, so a bad FENCE key is always an error.
    if let Some(fence_key) = &fence_key {
        fence_key.integer()?;
    }
    let next = match take(ctx, &mut key, fence_key.as_mut(), token, asked, others_wait)? {
        Take::Got((reply, decision)) => {
            if decision == Decision::Downgrade {
                // The readers at the head of the queue may join it now.
                let open = (fence_key, key);
                wait::serve_waiters::<RwLocks>(ctx, name.as_bytes(), open, Cause::Release);
            }
            return Ok(reply.into());
        }
        Take::Nothing(next) => next,
    };
    let Some(wait) = wait else {
        return Ok(RedisValue::Null.into());
    };
    let request = Request {
        token: token.to_vec(),
        asked,
        fence: fence.map(|fence| fence.as_bytes().to_vec()),
    };
    let open = (fence_key, key);
    Ok(wait::park::<RwLocks>(ctx, name.as_bytes(), open, request, wait, next).into())
}

/// `RWLOCK.RELEASE key token` → 1 when `token` held the lock (the waiters
/// it held back are served), else 0.
fn release<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let (released, changed) = {
        let mut key = Key::write(ctx, *name);
        let Some(lock) = lock_at(&mut key)? else {
            return Ok(RedisValue::Integer(0).into());
        };
        let mut freed = reclaim(ctx, lock, now());
        let reclaimed = !freed.is_empty();
        let released = lock.release(token);
        let last = lock.last_end();
        if reclaimed {
            // The clock let other holders go too: send all that went.
            if released {
                freed.push(token.into());
            }
            replicate_effect(ctx, *name, &freed, None);
        } else if released {
            replicate::verbatim(ctx);
        }
        if released || reclaimed {
            let event = match released {
                true => c"rwlock.release",
                false => c"rwlock.reclaim",
            };
            follow(&mut key, last, event);
        }
        (released, released || reclaimed)
    };
    if changed {
        wait::serve_waiters::<RwLocks>(ctx, name.as_bytes(), (), Cause::Release);
    }
    Ok(RedisValue::Integer(i64::from(released)).into())
}

/// `RWLOCK.EXTEND key token PX ms | EX s [ADD]` → 1 when `token` holds the
/// lock: its lease now ends `ms` from now, or with `ADD` `ms` after its
/// current end (a holder without a lease keeps none, and answers 0). Else 0.
fn extend<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, token_arg, options @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    let token = token(token_arg)?;
    let [px, ex, add] = parse_options(options, &[PX, EX, ADD])?;
    let lease = time::lease(px, ex)?.ok_or(errors::SYNTAX.error())?;
    let extended = {
        let mut key = Key::write(ctx, *name);
        let Some(lock) = lock_at(&mut key)? else {
            return Ok(RedisValue::Integer(0).into());
        };
        let now = now();
        // Decided before anything is written: a lease that ended counts as
        // gone (it is reclaimed below), and an end past the largest time is
        // an error that changes nothing.
        let held = lock
            .held_by(token)
            .zip(lock.end_of(token))
            .filter(|&(_, end)| end >= now);
        let until = match (held, add.is_some()) {
            (None, _) | (Some((_, NO_END)), true) => None,
            (Some((mode, end)), true) => Some((mode, lease::end_after(end, Some(lease))?)),
            (Some((mode, _)), false) => Some((mode, lease::end_after(now, Some(lease))?)),
        };
        let freed = reclaim(ctx, lock, now);
        if let Some((mode, until)) = until {
            lock.hold(token, mode, until);
        }
        let last = lock.last_end();
        if until.is_some() || !freed.is_empty() {
            let held = until.map(|(mode, until)| (mode, token, until));
            replicate_effect(ctx, *name, &freed, held);
            let event = match until {
                Some(_) => c"rwlock.extend",
                None => c"rwlock.reclaim",
            };
            follow(&mut key, last, event);
        }
        until.is_some()
    };
    // The waiters' timer follows the new lease ends.
    wait::serve_waiters::<RwLocks>(ctx, name.as_bytes(), (), Cause::Expiry);
    Ok(RedisValue::Integer(i64::from(extended)).into())
}

/// `RWLOCK.INFO key` → map of `mode` (`read`, `write` or `none`), `holders`
/// (`[token, lease end]` pairs in token order, -1 for no end; live leases
/// only) and `waiting` (clients waiting now).
fn info<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name] = args else {
        return Err(RedisError::WrongArity);
    };
    let key = Key::read(ctx, *name);
    let now = now();
    let (mode, holders) = match key.value::<RwLock>()? {
        None => (None, Vec::new()),
        Some(lock) => {
            let holders: Vec<RedisValue> = lock
                .holders()
                .filter(|&(_, until)| until >= now)
                .map(|(token, until)| {
                    RedisValue::Array(vec![
                        RedisValue::StringBuffer(token.to_vec()),
                        RedisValue::Integer(lease::to_reply(until)),
                    ])
                })
                .collect();
            let mode = lock.mode().filter(|_| !holders.is_empty());
            (mode, holders)
        }
    };
    let mode = match mode {
        None => "none",
        Some(Mode::Read) => "read",
        Some(Mode::Write) => "write",
    };
    let waiting = wait::waiting_on::<RwLocks>(ctx, name.as_bytes());
    Ok(Reply::Map(vec![
        (b"mode", Item::Value(RedisValue::SimpleStringStatic(mode))),
        (b"holders", Item::Value(RedisValue::Array(holders))),
        (b"waiting", Item::Int(waiting as i64)),
    ]))
}

/// One change of an `RWLOCK.APPLY`.
enum Change<'a> {
    Drop(&'a [u8]),
    Hold(Mode, &'a [u8], u64),
}

/// `RWLOCK.APPLY key [DROP token]… [READ|WRITE token at]…` → `OK`: a
/// primary's decision, applied in order as made (`at`: absolute Unix ms, 0
/// for none). Only the replication stream and AOF loading may send it.
fn apply<'a>(ctx: &'a Context, args: &'a [Arg<'a>]) -> Replied<'a> {
    let [_, name, changes @ ..] = args else {
        return Err(RedisError::WrongArity);
    };
    if replicate::deciding(ctx) {
        return Err(internal_only(&APPLY, &[&ACQUIRE, &RELEASE, &EXTEND]));
    }
    let mut parsed = Vec::new();
    for group in groups(changes, CHANGES)? {
        parsed.push(match group {
            (0, [held]) => Change::Drop(held.as_bytes()),
            (shape, [held, at]) => Change::Hold(
                if shape == 1 { Mode::Read } else { Mode::Write },
                token(held)?,
                lease::from_wire(at.to_i64()?)?,
            ),
            _ => return Err(errors::SYNTAX.error()),
        });
    }
    let mut key = Key::write(ctx, *name);
    let holds = parsed
        .iter()
        .any(|change| matches!(change, Change::Hold(..)));
    if key.kind() == Kind::Empty && holds {
        key.set_typed_value(adopt(RwLock::default()))?;
    }
    let Some(lock) = lock_at(&mut key)? else {
        return Ok(RedisValue::SimpleStringStatic("OK").into());
    };
    for change in parsed {
        match change {
            Change::Drop(held) => {
                lock.release(held);
            }
            Change::Hold(mode, held, until) => lock.hold(held, mode, until),
        }
    }
    let last = lock.last_end();
    replicate::verbatim(ctx);
    follow(&mut key, last, c"rwlock.apply");
    Ok(RedisValue::SimpleStringStatic("OK").into())
}

// ---- the data type ---------------------------------------------------------

impl Stored for RwLock {
    const ENCODINGS: &'static [i32] = ENCODINGS;
    fn data_type() -> &'static RedisType {
        &RWLOCK_TYPE
    }
    const WHAT: &'static str = "readers-writer lock";

    /// Stored form (version 1): the mode (1 read, 2 write), the number of
    /// holders, then each holder's token and lease end (`u64::MAX`: none),
    /// in token order.
    fn save(&self, out: &mut Writer) {
        out.unsigned(self.stored_mode());
        out.unsigned(self.holder_count() as u64);
        for (token, until) in self.holders() {
            out.bytes(token);
            out.unsigned(until);
        }
    }

    /// Version 1 is the only stored form so far.
    fn load(input: &mut Reader, _encoding: i32) -> Result<RwLock, &'static str> {
        let mode = input.unsigned()?;
        // Grown as read: a hostile count cannot make us reserve memory.
        let mut holders = Vec::new();
        for _ in 0..input.unsigned()? {
            holders.push((input.bytes()?, input.unsigned()?));
        }
        RwLock::restore(mode, holders)
    }

    /// The command that rebuilds a lock: `RWLOCK.APPLY` holding each holder.
    fn rewrite(&self, out: &mut Rewrite) {
        let Some(mode) = self.mode() else {
            return;
        };
        let mut words = Vec::new();
        for (token, until) in self.holders() {
            words.extend([
                Word::Token(mode.word()),
                Word::Bytes(token),
                Word::Int(lease::to_wire(until)),
            ]);
        }
        out.emit(APPLY.upper_name(), &words);
    }

    /// `DEBUG DIGEST-VALUE`: the mode, then each holder. A primary and its
    /// replicas store the same state (only the primary reclaims ended
    /// leases, and replicates that), so their digests agree.
    fn digest(&self, out: &mut Digest) {
        out.integer(self.stored_mode() as i64);
        out.end_sequence();
        for (token, until) in self.holders() {
            out.bytes(token);
            out.integer(lease::to_wire(until));
            out.end_sequence();
        }
    }

    fn memory(&self) -> usize {
        RwLock::memory(self)
    }

    fn allocations(&self) -> usize {
        RwLock::allocations(self)
    }

    fn count(&self, sign: i64) {
        RWLOCKS.add(sign);
    }
}

// ---- registration --------------------------------------------------------

/// The lock, and the fence counter after `FENCE` (searched from the options).
const ACQUIRE_KEYS: &[KeySpec] = &[
    UPDATES_FIRST,
    KeySpec {
        flags: UPDATED,
        begin: BeginSearch::after(&FENCE, 4),
        find: FindKeys::One,
    },
];
const WRITE_KEY: &[KeySpec] = &[UPDATES_FIRST];
const READ_KEY: &[KeySpec] = &[READS_FIRST];
const KEY: ArgSpec = ArgSpec::key(c"key", 0);
const TOKEN: ArgSpec = ArgSpec::required(c"token", ArgType::String);
const READ: ArgSpec = ArgSpec::keyword(c"read", c"READ");
const WRITE: ArgSpec = ArgSpec::keyword(c"write", c"WRITE");
const MODES: &[ArgSpec] = &[READ, WRITE];
/// A holder as `RWLOCK.APPLY` carries it: its token and lease end.
const HOLDER: &[ArgSpec] = &[TOKEN, ArgSpec::required(c"at", ArgType::Integer)];
/// The changes of an `RWLOCK.APPLY`, in the order [`apply`] reads them.
const DROP: ArgSpec = ArgSpec::option(c"drop", c"DROP", ArgType::String).multiple();
const HOLD_READ: ArgSpec = ArgSpec::block(c"read", c"READ", HOLDER).multiple();
const HOLD_WRITE: ArgSpec = ArgSpec::block(c"write", c"WRITE", HOLDER).multiple();
const CHANGES: &[ArgSpec] = &[DROP, HOLD_READ, HOLD_WRITE];
const SINCE: &CStr = c"0.5.0";

/// Readers-writer locks stored (copies included).
pub static RWLOCKS: Stat = Stat::gauge(
    c"rwlocks",
    "readers-writer locks stored (`rr-rwlock` values, copies included)",
);
pub static WAIT_STATS: WaitStats = WaitStats::new(
    (c"rwlock_waits", "`RWLOCK.ACQUIRE … WAIT`s started"),
    (
        c"rwlock_waits_timed_out",
        "`RWLOCK.ACQUIRE … WAIT`s that ran out",
    ),
    (
        c"rwlock_handoffs",
        "waiters admitted to a readers-writer lock",
    ),
);

pub static FAMILY: FamilySpec = FamilySpec {
    about: "readers-writer locks with a lease per holder and a fair queue",
    replaces: "Redisson's `RReadWriteLock`, Lua readers-writer locks polled while busy",
    commands: COMMANDS,
    stats: &[
        &RWLOCKS,
        &WAIT_STATS.started,
        &WAIT_STATS.timed_out,
        &WAIT_STATS.handoffs,
    ],
    waiting: Some(wait::watcher::<RwLocks>()),
    settings: &[],
    errors: errors::OWN,
    stored: &[StoredType {
        data_type: &RWLOCK_TYPE,
        encodings: ENCODINGS,
    }],
};

pub const COMMANDS: &[CommandSpec] = &[
    ACQUIRE,
    RELEASE,
    EXTEND,
    CommandSpec {
        entry: entry!(c"rwlock.info", info, READ_KEY),
        flags: c"readonly",
        acl_categories: c"read slow",
        arity: 2,
        summary: c"Returns a readers-writer lock's mode, its holders with their lease ends, and how many clients wait",
        complexity: c"O(N) for N holders: the reply lists every holder",
        since: SINCE,
        reply: "`mode` (simple string `read`, `write` or `none`), `holders` (an array of \
                `[token, lease end]` pairs for the live holders in token order, the end in \
                Unix ms, `-1` for never) and `waiting` (clients waiting now): a flat array of \
                names and values under RESP2, a map under RESP3; a missing key answers `none` \
                and no holders.",
        events: None,
        args: &[KEY],
    },
    APPLY,
];

const ACQUIRE: CommandSpec = CommandSpec {
    entry: entry!(c"rwlock.acquire", acquire, ACQUIRE_KEYS),
    flags: c"write deny-oom blocking",
    acl_categories: c"write slow blocking",
    arity: -4,
    summary: c"Takes a readers-writer lock to read (shared) or write (alone) for a token, with a lease, a fair wait and a fencing token; nil when not acquired",
    complexity: c"O(log N) for N holders; O(N) when holders go (ended leases, a writer taking over) or the earliest or latest lease end moves inward; plus O(log N) per waiter admitted",
    since: SINCE,
    reply: "`1` when granted: a new holder, a holder asking its own mode again (lease \
            reset), or a writer asking `READ` (downgraded); with `FENCE`, instead: for \
            `WRITE` the new fencing token (`fencekey` incremented; for a writer asking \
            again the current value, or a new one if `fencekey` is missing), for `READ` \
            `fencekey`'s current value (`0` when missing); nil when not granted (held in \
            a conflicting mode, or other clients already wait) after waiting up to `WAIT` \
            ms in the key's first-come-first-served queue (at once inside `MULTI` or a \
            script).",
    events: Some(Events {
        fires: "`rwlock.acquire`, or `rwlock.reclaim` when refused and only ended leases \
                went; `expire` when the key's TTL moves, `persist` when it goes (a \
                downgrade to a holder without a lease); `incrby` on the fence key",
        replica: Some("`rwlock.apply`, `expire`, `persist`; `set` on the fence key"),
    }),
    args: &[
        KEY,
        ArgSpec::one_of(c"mode", MODES),
        TOKEN,
        ArgSpec::one_of(c"lease", LEASE).optional(),
        WAIT,
        FENCE,
    ],
};

const RELEASE: CommandSpec = CommandSpec {
    entry: entry!(c"rwlock.release", release, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: 3,
    summary: c"Lets a token's hold of a readers-writer lock go; the waiters it held back are served",
    complexity: c"O(log N) for N holders; O(N) when ended leases go or the holder had the earliest or latest lease end; plus O(log N) per waiter admitted",
    since: SINCE,
    reply: "`1` when `token` held the lock by a live lease, its hold now ended (the \
            waiters it held back served); `0` when it holds nothing.",
    events: Some(Events {
        fires: "`rwlock.release`, or `rwlock.reclaim` by a token that holds nothing when \
                ended leases went; `del` when the last holder goes",
        replica: Some("`rwlock.release` (sent as the command), or `rwlock.apply`; `del`"),
    }),
    args: &[KEY, TOKEN],
};

const EXTEND: CommandSpec = CommandSpec {
    entry: entry!(c"rwlock.extend", extend, WRITE_KEY),
    flags: c"write fast",
    acl_categories: c"write fast",
    arity: -5,
    summary: c"Sets a holder's lease to end the given time from now (with ADD, after its current end), only if the token holds the lock",
    complexity: c"O(log N) for N holders; O(N) when ended leases go or the earliest or latest lease end moves inward",
    since: SINCE,
    reply: "`1` when `token` holds the lock by a live lease, which now ends the given \
            time from now (with `ADD`, that much after its current end); `0` when it \
            holds nothing, or with `ADD` when its hold has no lease.",
    events: Some(Events {
        fires: "`rwlock.extend`, or `rwlock.reclaim` by a token that holds nothing when \
                ended leases went; `expire`",
        replica: Some("`rwlock.apply`, `expire`"),
    }),
    args: &[
        KEY,
        TOKEN,
        ArgSpec::one_of(c"lease", LEASE),
        ADD,
    ],
};

const APPLY: CommandSpec = CommandSpec {
    entry: entry!(c"rwlock.apply", apply, WRITE_KEY),
    flags: c"write",
    acl_categories: c"write",
    arity: -2,
    summary: c"Internal: applies a primary's readers-writer lock decision (holders dropped and held, absolute leases) on replicas and AOF load",
    complexity: c"O(C*log(N)) for C changes and N holders; O(N) when holders go or the earliest or latest lease end moves inward",
    since: SINCE,
    reply: "Simple string reply `OK`: the primary's decision (holders dropped and \
            granted) was applied. Internal: only the replication stream and an AOF load \
            send it.",
    events: None,
    args: &[KEY, DROP, HOLD_READ, HOLD_WRITE],
};
