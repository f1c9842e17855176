/**
 * `redis-recipes/redis-semaphore`: a drop-in for `redis-semaphore` 5. Switch with one line:
 * `require('redis-semaphore')` → `require('redis-recipes/redis-semaphore')`.
 *
 * The same classes (`Mutex`, `Semaphore`, `MultiSemaphore`, `RedlockMutex`, `RedlockSemaphore`,
 * `RedlockMultiSemaphore`), options (`lockTimeout`, `acquireTimeout`, `acquireAttemptsLimit`, `retryInterval`,
 * `refreshInterval`, `onLockLost`, `identifier`, `acquiredExternally`, and the deprecated
 * `externallyAcquiredIdentifier` and `identifierSuffix`), methods (`acquire`, `tryAcquire`, `release`,
 * `stopRefresh`, `identifier`, `isAcquired`), errors (`TimeoutError`, `LostLockError`) and
 * `defaultTimeoutOptions`.
 *
 * On a server with the module, `Mutex` is a lock (`LOCK.ACQUIRE … NX`, `LOCK.EXTEND`, `LOCK.RELEASEIF`) on the
 * library's own key (`mutex:<key>`, a string holding the identifier, its TTL the lease), so stock and drop-in
 * processes exclude each other; `Semaphore` and `MultiSemaphore` are a pool (`POOL.*`) of `limit` permits
 * named `1`…`limit` at `semaphore:<key>`, each held by its identifier with a lease on the server's clock. A taken
 * mutex or a full semaphore is not polled for: the call waits in the server's first-come-first-served queue on a
 * connection of its own for as long as the library would have polled. A server without the module (an "unknown
 * command" answer, learnt once per client) is used the library's way: its commands, its stored format, its polling.
 * The `Redlock*` classes are the library's way on every server, module or not.
 */
import { createHash, randomUUID } from 'node:crypto';
import { connectionOf, FOREVER } from './adapter';
import type { Arg, Connection, Reply } from './adapter';

/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyClient = any;

/** Rejected by `acquire` when the lock could not be taken in time. */
export class TimeoutError extends Error {}

/** Given to `onLockLost` when a refresh finds the lock no longer held. */
export class LostLockError extends Error {}

export interface LockLostCallback {
  (this: Lock, err: LostLockError): void;
}

export interface TimeoutOptions {
  lockTimeout?: number;
  acquireTimeout?: number;
  acquireAttemptsLimit?: number;
  retryInterval?: number;
  refreshInterval?: number;
}

export interface LockOptions extends TimeoutOptions {
  /** @deprecated as in the library: `identifier` with `acquiredExternally: true`. */
  externallyAcquiredIdentifier?: string;
  /** @deprecated as in the library: a custom `identifier`. */
  identifierSuffix?: string;
  identifier?: string;
  acquiredExternally?: true;
  onLockLost?: LockLostCallback;
}

interface AcquireOptions {
  identifier: string;
  lockTimeout: number;
  acquireTimeout: number;
  acquireAttemptsLimit: number;
  retryInterval: number;
}

export const defaultTimeoutOptions = {
  lockTimeout: 10000,
  acquireTimeout: 10000,
  acquireAttemptsLimit: Number.POSITIVE_INFINITY,
  retryInterval: 10,
};

/** The refresh interval, when not given, as a share of `lockTimeout`. */
const REFRESH_SHARE = 0.8;

function defaultOnLockLost(err: LostLockError): never {
  throw err;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject((signal as AbortSignal).reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// ------------------------------------------------------------------------------------------- the library's way

/** A Lua script run the library's way: `EVALSHA`, then `EVAL` when the server has not cached it. */
class Script {
  private readonly sha: string;
  constructor(private readonly source: string) {
    this.sha = createHash('sha1').update(source, 'utf8').digest('hex');
  }
  async run(client: AnyClient, args: Arg[]): Promise<Reply> {
    try {
      return await client.evalsha(this.sha, 1, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !String(error).includes('NOSCRIPT')) throw error;
      return client.eval(this.source, 1, ...args);
    }
  }
}

// The scripts below keep the library's stored format: a mutex is a string holding the identifier with a TTL; a
// semaphore a sorted set of identifiers (`<identifier>_<n>` for a multi-semaphore's n-th permit) scored by the
// client's clock at their last acquire or refresh, the key's TTL the lease.

/** KEYS[1] mutex, ARGV identifier, lease ms: renews the lease if the identifier holds it (1), else 0. */
const MUTEX_RENEW = new Script(`
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('pexpire', KEYS[1], ARGV[2])
return 1`);

/** KEYS[1] mutex, ARGV identifier: deletes it if the identifier holds it (1), else 0. */
const MUTEX_FREE = new Script(`
if redis.call('get', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('del', KEYS[1])`);

/**
 * KEYS[1] semaphore, ARGV limit, permits, identifier, lease ms, now (client ms), renew (1: only if the first
 * permit is still there): drops entries older than a lease, then adds the permits (all or none) scored now.
 */
const SEMAPHORE_TAKE = new Script(`
local limit, permits, lease, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('zremrangebyscore', KEYS[1], '-inf', now - lease)
local names = {}
if permits == 0 then
  names[1] = ARGV[3]
else
  for n = 0, permits - 1 do names[#names + 1] = ARGV[3] .. '_' .. n end
end
if tostring(ARGV[6]) == '1' then
  if not redis.call('zscore', KEYS[1], names[1]) then return 0 end
elseif redis.call('zcard', KEYS[1]) + #names > limit then
  return 0
end
for _, name in ipairs(names) do redis.call('zadd', KEYS[1], now, name) end
redis.call('pexpire', KEYS[1], lease)
return 1`);

/** KEYS[1] semaphore, ARGV permits, identifier: removes the multi-semaphore's permits. */
const SEMAPHORE_FREE = new Script(`
local names = {}
for n = 0, tonumber(ARGV[1]) - 1 do names[#names + 1] = ARGV[2] .. '_' .. n end
return redis.call('zrem', KEYS[1], unpack(names))`);

/** The library's polling loop: `attempt` until it succeeds, the time or the attempts run out. */
async function poll(options: AcquireOptions, signal: AbortSignal | undefined, attempt: (now: number) => Promise<boolean>) {
  const end = Date.now() + options.acquireTimeout;
  let attempts = 0;
  let now: number;
  while ((now = Date.now()) < end && ++attempts <= options.acquireAttemptsLimit) {
    signal?.throwIfAborted();
    if (await attempt(now)) return true;
    await pause(options.retryInterval, signal);
  }
  return false;
}

/** Quorum of the Redlock classes: a majority of the servers. */
function quorum(servers: number): number {
  return Math.round((servers + 1) / 2);
}

// -------------------------------------------------------------------------------------------------- the module

/** Whether a client's server has the module: learnt from the first answer to a module command, once per client. */
const HAS_MODULE = new WeakMap<object, boolean>();

function isUnknownCommand(error: unknown): boolean {
  return /unknown command/i.test((error as Error)?.message ?? '');
}

function keyPrefix(client: AnyClient): string {
  const prefix = client?.options?.keyPrefix;
  return typeof prefix === 'string' ? prefix : '';
}

/** The pools (`limit:key`) a client has filled with their permits once: later acquires need not add them. */
const ADDED = new WeakMap<object, Set<string>>();

/** The most permits a semaphore keeps in the module's pool; a larger limit runs the library's way. */
const MOST_PERMITS = 1024;

/**
 * How long the library would go on polling, from now: `acquireTimeout`, or fewer ms when `acquireAttemptsLimit`
 * ends the attempts first (one attempt every `retryInterval`).
 */
function budget(options: AcquireOptions): number {
  const attempts = options.acquireAttemptsLimit;
  const byAttempts = Number.isFinite(attempts) ? Math.max(0, attempts - 1) * options.retryInterval : FOREVER;
  return Math.min(options.acquireTimeout, byAttempts, FOREVER);
}

// -------------------------------------------------------------------------------------------------------- Lock

export abstract class Lock {
  protected abstract _kind: string;
  protected abstract _key: string;
  protected _identifier: string;
  protected _acquireOptions: AcquireOptions;
  protected _refreshTimeInterval: number;
  protected _refreshInterval?: ReturnType<typeof setInterval>;
  protected _refreshing = false;
  protected _acquired = false;
  protected _acquiredExternally = false;
  protected _onLockLost: LockLostCallback;

  protected abstract _refresh(): Promise<boolean>;
  protected abstract _acquire(abortSignal?: AbortSignal): Promise<boolean>;
  protected abstract _release(): Promise<void>;

  constructor({
    lockTimeout = defaultTimeoutOptions.lockTimeout,
    acquireTimeout = defaultTimeoutOptions.acquireTimeout,
    acquireAttemptsLimit = defaultTimeoutOptions.acquireAttemptsLimit,
    retryInterval = defaultTimeoutOptions.retryInterval,
    refreshInterval = Math.round(lockTimeout * REFRESH_SHARE),
    onLockLost = defaultOnLockLost,
    externallyAcquiredIdentifier,
    identifierSuffix,
    identifier,
    acquiredExternally,
  }: LockOptions = defaultTimeoutOptions) {
    if (identifier !== undefined && (!identifier || typeof identifier !== 'string')) {
      throw new Error('identifier must be not empty random string');
    }
    if (acquiredExternally && !identifier) {
      throw new Error('acquiredExternally=true meanless without custom identifier');
    }
    if (externallyAcquiredIdentifier && (identifier || acquiredExternally)) {
      throw new Error('Invalid usage. Use custom identifier and acquiredExternally: true');
    }
    this._identifier =
      identifier ||
      externallyAcquiredIdentifier ||
      (identifierSuffix ? `${randomUUID()}-${identifierSuffix}` : randomUUID());
    this._acquiredExternally = !!acquiredExternally || !!externallyAcquiredIdentifier;
    this._acquireOptions = { lockTimeout, acquireTimeout, acquireAttemptsLimit, retryInterval, identifier: this._identifier };
    this._refreshTimeInterval = refreshInterval;
    this._onLockLost = onLockLost;
  }

  get identifier(): string {
    return this._identifier;
  }

  get isAcquired(): boolean {
    return this._acquired;
  }

  stopRefresh(): void {
    if (this._refreshInterval) clearInterval(this._refreshInterval);
  }

  private _processRefresh = async (): Promise<void> => {
    if (this._refreshing) return;
    this._refreshing = true;
    try {
      if (await this._refresh()) return;
      // Released meanwhile: not lost.
      if (!this._acquired) return;
      this._acquired = false;
      this.stopRefresh();
      this._onLockLost(new LostLockError(`Lost ${this._kind} for key ${this._key}`));
    } finally {
      this._refreshing = false;
    }
  };

  async acquire(abortSignal?: AbortSignal): Promise<void> {
    if (!(await this.tryAcquire(abortSignal))) throw new TimeoutError(`Acquire ${this._kind} ${this._key} timeout`);
  }

  async tryAcquire(abortSignal?: AbortSignal): Promise<boolean> {
    const acquired = this._acquiredExternally ? await this._refresh() : await this._acquire(abortSignal);
    if (!acquired) return false;
    this._acquired = true;
    this._acquiredExternally = false;
    if (this._refreshTimeInterval > 0) {
      this._refreshInterval = setInterval(this._processRefresh, this._refreshTimeInterval);
      this._refreshInterval.unref();
    }
    return true;
  }

  async release(): Promise<void> {
    if (this._refreshTimeInterval > 0) this.stopRefresh();
    if (this._acquired || this._acquiredExternally) await this._release();
    this._acquired = false;
    this._acquiredExternally = false;
  }
}

function checkKey(key: unknown): void {
  if (!key) throw new Error('"key" is required');
  if (typeof key !== 'string') throw new Error('"key" must be a string');
}

function checkNumber(value: unknown, name: string): void {
  if (!value) throw new Error(`"${name}" is required`);
  if (typeof value !== 'number') throw new Error(`"${name}" must be a number`);
}

/**
 * Runs `module` (the module's way) on a client whose server has the module or is not known yet, else `library`;
 * an "unknown command" answer marks the client and runs `library`.
 */
async function eitherWay<T>(client: AnyClient, module: () => Promise<T>, library: () => Promise<T>): Promise<T> {
  if (HAS_MODULE.get(client) === undefined) {
    try {
      connectionOf(client);
    } catch {
      // A client the package does not know (a stand-in such as ioredis-mock): the library's way, as the library.
      HAS_MODULE.set(client, false);
    }
  }
  if (HAS_MODULE.get(client) !== false) {
    try {
      const result = await module();
      HAS_MODULE.set(client, true);
      return result;
    } catch (error) {
      if (!isUnknownCommand(error)) throw error;
      HAS_MODULE.set(client, false);
    }
  }
  return library();
}

// ------------------------------------------------------------------------------------------------------- Mutex

export class Mutex extends Lock {
  protected _kind = 'mutex';
  protected _key: string;
  protected _client: AnyClient;

  constructor(client: AnyClient, key: string, options?: LockOptions) {
    super(options);
    if (!client) throw new Error('"client" is required');
    checkKey(key);
    this._client = client;
    this._key = `mutex:${key}`;
  }

  protected async _refresh(): Promise<boolean> {
    const { identifier, lockTimeout } = this._acquireOptions;
    return eitherWay(
      this._client,
      async () => {
        const key = keyPrefix(this._client) + this._key;
        return Number(await connectionOf(this._client).send(['LOCK.EXTEND', key, identifier, 'PX', lockTimeout])) === 1;
      },
      async () => +((await MUTEX_RENEW.run(this._client, [this._key, identifier, lockTimeout])) as number) === 1,
    );
  }

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const options = this._acquireOptions;
    const { identifier, lockTimeout } = options;
    return eitherWay(
      this._client,
      async () => {
        const began = Date.now();
        if (options.acquireTimeout <= 0 || options.acquireAttemptsLimit < 1) return false;
        abortSignal?.throwIfAborted();
        const connection = connectionOf(this._client);
        const key = keyPrefix(this._client) + this._key;
        const take: Arg[] = ['LOCK.ACQUIRE', key, identifier, 'PX', lockTimeout, 'NX'];
        if (Number(await connection.send(take)) === 1) return true;
        const left = budget(options) - (Date.now() - began);
        if (left <= 0) return false;
        HAS_MODULE.set(this._client, true);
        take.splice(5, 0, 'WAIT', Math.ceil(left));
        const reply = await connection.wait(take, key, left, {
          signal: abortSignal,
          undo: () => connection.send(['LOCK.RELEASEIF', key, identifier]),
        });
        return Number(reply) === 1;
      },
      () =>
        poll(options, abortSignal, async () => {
          return (await this._client.set(this._key, identifier, 'PX', lockTimeout, 'NX')) === 'OK';
        }),
    );
  }

  protected async _release(): Promise<void> {
    const identifier = this._identifier;
    await eitherWay(
      this._client,
      () => connectionOf(this._client).send(['LOCK.RELEASEIF', keyPrefix(this._client) + this._key, identifier]),
      () => MUTEX_FREE.run(this._client, [this._key, identifier]),
    );
  }
}

// ----------------------------------------------------------------------------------------------- Semaphore(s)

/** A semaphore's permits in the module's pool: POOL.* at `semaphore:<key>`, permits `1`…`limit`. */
class Permits {
  /** The permits this instance holds (their names in the pool). */
  held: string[] = [];

  constructor(
    private readonly lock: { _client: AnyClient; _key: string; _identifier: string },
    private readonly limit: number,
    private readonly count: number,
  ) {}

  private get key(): string {
    return keyPrefix(this.lock._client) + this.lock._key;
  }

  private get connection(): Connection {
    return connectionOf(this.lock._client);
  }

  /** POOL.ADD of the permits `1`…`limit`: how many were missing. */
  private async add(): Promise<number> {
    const names: Arg[] = [];
    for (let n = 1; n <= this.limit; n++) names.push(String(n));
    const added = Number(await this.connection.send(['POOL.ADD', this.key, ...names]));
    ADDED.set(this.lock._client, (ADDED.get(this.lock._client) ?? new Set()).add(`${this.limit}:${this.key}`));
    return added;
  }

  /** One permit: at once, else waiting up to `left` ms in the pool's queue. */
  private async one(options: AcquireOptions, until: number, signal?: AbortSignal): Promise<string | null> {
    const { identifier, lockTimeout } = options;
    const take: Arg[] = ['POOL.ACQUIRE', this.key, identifier, 'PX', lockTimeout];
    let now: Reply;
    if (ADDED.get(this.lock._client)?.has(`${this.limit}:${this.key}`)) {
      // The pool was made by this client before: taken at once, unless it went (deleted, expired, flushed) or
      // another process made it with fewer permits, found when none is free.
      now = await this.connection.send(take);
      if ((now === null || now === undefined) && (await this.add()) > 0) now = await this.connection.send(take);
    } else {
      // First use by this client: the permits added, then one taken, sent together.
      [, now] = await Promise.all([this.add(), this.connection.send(take)]);
    }
    if (now !== null && now !== undefined) return String(now);
    const left = until - Date.now();
    if (left <= 0) return null;
    HAS_MODULE.set(this.lock._client, true);
    const connection = this.connection;
    const reply = await connection.wait([...take, 'WAIT', Math.ceil(left)], this.key, left, {
      signal,
      undo: (granted) => connection.send(['POOL.RELEASE', this.key, String(granted), identifier]),
    });
    return reply === null || reply === undefined ? null : String(reply);
  }

  async acquire(options: AcquireOptions, signal?: AbortSignal): Promise<boolean> {
    if (options.acquireTimeout <= 0 || options.acquireAttemptsLimit < 1) return false;
    signal?.throwIfAborted();
    const until = Date.now() + budget(options);
    if (this.count > this.limit) {
      // Never granted: the library polls until its time runs out.
      await this.add();
      await pause(Math.max(0, until - Date.now()), signal);
      return false;
    }
    if (this.count === 1) {
      const permit = await this.one(options, until, signal);
      this.held = permit === null ? [] : [permit];
      return permit !== null;
    }
    // Several permits: taken one after the other while holding the key's gate (a lock waited for first come first
    // served), so that two takers never hold part of what each needs.
    const gate = this.key + ':gate';
    const connection = this.connection;
    const lease = Math.ceil(Math.max(1, until - Date.now()) + options.lockTimeout);
    const enter: Arg[] = ['LOCK.ACQUIRE', gate, options.identifier, 'PX', Math.min(lease, FOREVER), 'NX'];
    let entered = Number(await connection.send(enter)) === 1;
    if (!entered) {
      const left = until - Date.now();
      if (left <= 0) return false;
      HAS_MODULE.set(this.lock._client, true);
      const reply = await connection.wait([...enter.slice(0, 5), 'WAIT', Math.ceil(left), 'NX'], gate, left, {
        signal,
        undo: () => connection.send(['LOCK.RELEASEIF', gate, options.identifier]),
      });
      entered = Number(reply) === 1;
      if (!entered) return false;
    }
    const held: string[] = [];
    try {
      while (held.length < this.count) {
        const permit = await this.one(options, until, signal);
        if (permit === null) break;
        held.push(permit);
      }
    } catch (error) {
      await this.free(held).catch(() => undefined);
      throw error;
    } finally {
      await connection.send(['LOCK.RELEASEIF', gate, options.identifier]).catch(() => undefined);
    }
    if (held.length < this.count) {
      await this.free(held);
      return false;
    }
    this.held = held;
    return true;
  }

  /** The permits held by the identifier (for a lock acquired elsewhere): read from POOL.HOLDERS. */
  private async find(): Promise<string[]> {
    const holders = (await this.connection.send(['POOL.HOLDERS', this.key])) as Reply[];
    const mine: string[] = [];
    for (const entry of holders ?? []) {
      const [resource, owner] = entry as Reply[];
      if (String(owner) === this.lock._identifier && mine.length < this.count) mine.push(String(resource));
    }
    return mine;
  }

  async refresh(options: AcquireOptions): Promise<boolean> {
    if (this.held.length === 0) this.held = await this.find();
    if (this.held.length < this.count) return false;
    const replies = await Promise.all(
      this.held.map((permit) =>
        this.connection.send(['POOL.RENEW', this.key, permit, options.identifier, 'PX', options.lockTimeout]),
      ),
    );
    return replies.every((reply) => Number(reply) === 1);
  }

  private free(permits: string[]): Promise<Reply[]> {
    const identifier = this.lock._identifier;
    return Promise.all(permits.map((permit) => this.connection.send(['POOL.RELEASE', this.key, permit, identifier])));
  }

  async release(): Promise<void> {
    const permits = this.held.length > 0 ? this.held : await this.find();
    this.held = [];
    await this.free(permits);
  }
}

/**
 * The module's answer, or the library's way when the key holds the library's sorted set (`WRONGTYPE`: a stock
 * process holds the semaphore now): drop-in and stock processes then count the same permits.
 */
async function orZset<T>(module: Promise<T>, library: () => Promise<T>): Promise<T> {
  try {
    return await module;
  } catch (error) {
    if (!/^WRONGTYPE/.test((error as Error)?.message ?? '')) throw error;
    return library();
  }
}

export class Semaphore extends Mutex {
  protected override _kind = 'semaphore';
  protected _limit: number;
  /** 0: one permit stored as the identifier itself; n: a multi-semaphore's n permits. */
  protected _permitCount = 0;
  private _pool?: Permits;

  constructor(client: AnyClient, key: string, limit: number, options?: LockOptions) {
    super(client, key, options);
    checkNumber(limit, 'limit');
    this._key = `semaphore:${key}`;
    this._limit = limit;
  }

  /** The module's pool, or undefined when the library's way must be used (a limit too large for a pool). */
  private pool(): Permits | undefined {
    const permits = Math.max(1, this._permitCount);
    const limit = Math.ceil(this._limit);
    if (limit < 1 || limit > MOST_PERMITS || !Number.isInteger(permits)) return undefined;
    this._pool ??= new Permits(this as any, limit, permits);
    return this._pool;
  }

  private script(now: number, renew: boolean): Promise<Reply> {
    const { identifier, lockTimeout } = this._acquireOptions;
    const args: Arg[] = [this._key, this._limit, this._permitCount, identifier, lockTimeout, now, renew ? 1 : 0];
    return SEMAPHORE_TAKE.run(this._client, args);
  }

  protected override async _refresh(): Promise<boolean> {
    const pool = this.pool();
    const library = async () => +((await this.script(Date.now(), true)) as number) === 1;
    if (!pool) return library();
    return eitherWay(this._client, () => orZset(pool.refresh(this._acquireOptions), library), library);
  }

  protected override async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const pool = this.pool();
    const library = () => poll(this._acquireOptions, abortSignal, async (now) => +((await this.script(now, false)) as number) === 1);
    if (!pool) return library();
    return eitherWay(this._client, () => orZset(pool.acquire(this._acquireOptions, abortSignal), library), library);
  }

  protected override async _release(): Promise<void> {
    const pool = this.pool();
    const library = async () => {
      if (this._permitCount === 0) await this._client.zrem(this._key, this._identifier);
      else await SEMAPHORE_FREE.run(this._client, [this._key, this._permitCount, this._identifier]);
    };
    if (!pool) return library();
    await eitherWay(this._client, () => orZset(pool.release(), library), library);
  }
}

export class MultiSemaphore extends Semaphore {
  protected override _kind = 'multi-semaphore';

  constructor(client: AnyClient, key: string, limit: number, permits: number, options?: LockOptions) {
    super(client, key, limit, options);
    checkNumber(permits, 'permits');
    this._permitCount = permits;
  }
}

// ----------------------------------------------------------------------------------------------- Redlock classes

/** The Redlock classes: the library's way (polling, a quorum of the servers), with or without the module. */
export class RedlockMutex extends Lock {
  protected _kind = 'redlock-mutex';
  protected _key: string;
  protected _clients: AnyClient[];

  constructor(clients: AnyClient[], key: string, options: LockOptions = defaultTimeoutOptions) {
    super(options);
    if (!clients || !Array.isArray(clients)) throw new Error('"clients" array is required');
    checkKey(key);
    this._clients = clients;
    this._key = `mutex:${key}`;
  }

  /** Sends `step` to every server, an error counting as no; the number of yes. */
  protected async _vote(step: (client: AnyClient) => Promise<boolean>, clients = this._clients): Promise<boolean[]> {
    return Promise.all(clients.map((client) => step(client).catch(() => false)));
  }

  protected _take(client: AnyClient): Promise<boolean> {
    return client
      .set(this._key, this._identifier, 'PX', this._acquireOptions.lockTimeout, 'NX')
      .then((reply: Reply) => reply === 'OK');
  }

  protected async _renew(client: AnyClient): Promise<boolean> {
    return +((await MUTEX_RENEW.run(client, [this._key, this._identifier, this._acquireOptions.lockTimeout])) as number) === 1;
  }

  protected async _free(client: AnyClient): Promise<boolean> {
    await MUTEX_FREE.run(client, [this._key, this._identifier]);
    return true;
  }

  protected async _acquire(abortSignal?: AbortSignal): Promise<boolean> {
    const needed = quorum(this._clients.length);
    return poll(this._acquireOptions, abortSignal, async () => {
      const votes = await this._vote((client) => this._take(client));
      if (votes.filter(Boolean).length >= needed) return true;
      await this._vote((client) => this._undo(client));
      return false;
    });
  }

  /** What a failed attempt gives back on each server. */
  protected _undo(client: AnyClient): Promise<boolean> {
    return this._free(client);
  }

  protected async _refresh(): Promise<boolean> {
    const votes = await this._vote((client) => this._renew(client));
    const yes = votes.filter(Boolean).length;
    if (yes < quorum(this._clients.length)) {
      await this._vote((client) => this._free(client));
      return false;
    }
    // The servers that had lost it are asked to take it again.
    const missing = this._clients.filter((_, at) => !votes[at]);
    if (missing.length > 0) await this._vote((client) => this._take(client), missing);
    return true;
  }

  protected async _release(): Promise<void> {
    await this._vote((client) => this._free(client));
  }
}

export class RedlockSemaphore extends RedlockMutex {
  protected override _kind = 'redlock-semaphore';
  protected _limit: number;
  protected _permitCount = 0;
  /** The client's clock at the current attempt or refresh (the score the library stores). */
  private _now = 0;

  constructor(clients: AnyClient[], key: string, limit: number, options?: LockOptions) {
    super(clients, key, options);
    checkNumber(limit, 'limit');
    this._key = `semaphore:${key}`;
    this._limit = limit;
  }

  private async script(client: AnyClient, renew: boolean): Promise<boolean> {
    const { identifier, lockTimeout } = this._acquireOptions;
    const args: Arg[] = [this._key, this._limit, this._permitCount, identifier, lockTimeout, this._now, renew ? 1 : 0];
    return +((await SEMAPHORE_TAKE.run(client, args)) as number) === 1;
  }

  protected override _take(client: AnyClient): Promise<boolean> {
    return this.script(client, false);
  }

  protected override _renew(client: AnyClient): Promise<boolean> {
    return this.script(client, true);
  }

  protected override async _undo(client: AnyClient): Promise<boolean> {
    // As the library: a failed attempt removes the identifier itself (a multi-semaphore's permits stay to expire).
    await client.zrem(this._key, this._identifier);
    return true;
  }

  protected override async _free(client: AnyClient): Promise<boolean> {
    if (this._permitCount === 0) await client.zrem(this._key, this._identifier);
    else await SEMAPHORE_FREE.run(client, [this._key, this._permitCount, this._identifier]);
    return true;
  }

  protected override _vote(step: (client: AnyClient) => Promise<boolean>, clients?: AnyClient[]): Promise<boolean[]> {
    if (clients === undefined) this._now = Date.now();
    return super._vote(step, clients);
  }
}

export class RedlockMultiSemaphore extends RedlockSemaphore {
  protected override _kind = 'redlock-multi-semaphore';

  constructor(clients: AnyClient[], key: string, limit: number, permits: number, options?: LockOptions) {
    super(clients, key, limit, options);
    checkNumber(permits, 'permits');
    this._permitCount = permits;
  }
}
