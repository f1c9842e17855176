/**
 * `redis-recipes/redlock`: a drop-in for `redlock` 4.2.0. Switch with one line:
 * `require('redlock')` → `require('redis-recipes/redlock')`.
 *
 * The same API (`new Redlock(clients, options)`, `lock`/`acquire`, `lockWithOptions`, `unlock`/`release`,
 * `extend`, `disposer`, `quit`, the `Lock` object, `LockError`, the `clientError` event), the same results and
 * errors, and the same keys: a string key per resource holding the lock's value, its TTL the lease, so the stock
 * redlock and this one agree on the same keys side by side.
 *
 * Where a server has the `recipes` module, each step is one module command instead of a Lua script
 * (`LOCK.MACQUIRE … NX`, `LOCK.MRELEASEIF`, `LOCK.MEXTEND`); a server without it (an "unknown command" answer,
 * learnt once per client) runs scripts with redlock's semantics. With a single server, a lock that is taken is
 * not polled for: the call waits in the server's first-come-first-served queue (`WAIT`) on a connection of its
 * own, for as long as redlock's retries would have taken (`retryCount × (retryDelay + retryJitter)`, without end
 * when `retryCount` is -1). With several servers, redlock's quorum algorithm and its retries are kept.
 *
 * Promises are bluebird's (`.done`, `.nodeify`, and `disposer` for `Promise.using`) when `bluebird` can be
 * required, as redlock's are; else native promises, and `disposer` needs bluebird.
 */
import { EventEmitter } from 'node:events';
import { createHash, randomBytes } from 'node:crypto';
import { connectionOf, FOREVER } from './adapter';
import type { Arg, Connection, Reply } from './adapter';

/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyClient = any;
type Callback<T> = (error: Error | null, value?: T) => void;

// Lua for servers without the module, with redlock 4.2.0's semantics: KEYS are the resources, ARGV[1] the lock's
// value, ARGV[2] the lease in milliseconds.
const LOCK_SCRIPT = `
	-- Nothing is taken when any resource already has a value: the answer is 0.
	for _, resource in ipairs(KEYS) do
		if redis.call("exists", resource) == 1 then
			return 0
		end
	end
	-- Else every resource gets the value, for the lease; the answer is how many.
	for _, resource in ipairs(KEYS) do
		redis.call("set", resource, ARGV[1], "PX", ARGV[2])
	end
	return #KEYS
`;

const UNLOCK_SCRIPT = `
	-- Deletes the resources that still hold this lock's value; the answer is how many.
	local deleted = 0
	for _, resource in ipairs(KEYS) do
		if redis.call("get", resource) == ARGV[1] then
			redis.pcall("del", resource)
			deleted = deleted + 1
		end
	end
	return deleted
`;

const EXTEND_SCRIPT = `
	-- Nothing changes unless every resource holds this lock's value: the answer is then 0.
	for _, resource in ipairs(KEYS) do
		if redis.call("get", resource) ~= ARGV[1] then
			return 0
		end
	end
	-- Else each gets a new lease; the answer is how many.
	for _, resource in ipairs(KEYS) do
		redis.call("set", resource, ARGV[1], "PX", ARGV[2])
	end
	return #KEYS
`;

const DEFAULTS = {
  driftFactor: 0.01,
  retryCount: 10,
  retryDelay: 200,
  retryJitter: 100,
};

function loadBluebird(): any {
  try {
    return require('bluebird');
  } catch {
    return undefined;
  }
}

const Bluebird = loadBluebird();

/** A promise of the kind redlock returns (bluebird's when available), with `callback` called node-style. */
function settle<T>(promise: Promise<T>, callback?: Callback<T>): Promise<T> {
  if (Bluebird) return Bluebird.resolve(promise).nodeify(callback);
  if (typeof callback === 'function') {
    promise.then(
      (value) => callback(null, value),
      (error) => callback(error),
    );
  }
  return promise;
}

/** The error a lock, unlock or extend that did not succeed rejects with. */
class LockError extends Error {
  override name = 'LockError';
  attempts: number | undefined;
  constructor(message?: string, attempts?: number) {
    super(message || 'Failed to lock the resource.');
    this.attempts = attempts;
    Error.captureStackTrace?.(this, LockError);
  }
}

/** A lock taken by `lock`: its resource(s), value and expiration (milliseconds since the epoch). */
class Lock {
  constructor(
    public redlock: Redlock,
    public resource: string | string[],
    public value: string,
    public expiration: number,
    public attempts: number,
    public attemptsRemaining: number,
  ) {}

  unlock(callback?: Callback<void>): Promise<void> {
    return this.redlock.unlock(this, callback);
  }

  extend(ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    return this.redlock.extend(this, ttl, callback);
  }
}

interface RedlockOptions {
  driftFactor?: number;
  retryCount?: number;
  retryDelay?: number;
  retryJitter?: number;
  lockScript?: (script: string) => string;
  unlockScript?: (script: string) => string;
  extendScript?: (script: string) => string;
}

interface LockOptions {
  retryCount?: number;
  retryDelay?: number;
  /** Ends a wait or the retries early: the call then rejects with the signal's reason. */
  signal?: AbortSignal;
}

type ScriptName = 'lockScript' | 'unlockScript' | 'extendScript';
type Step = 'lock' | 'unlock' | 'extend';

/**
 * Whether a client's server has the module's commands: learnt from the first answer to one of them (an "unknown
 * command" error: no), once per client for every Redlock built on it. A server that loses the module later is
 * noticed by the next "unknown command"; one that gains it is not (a new client is).
 */
const HAS_MODULE = new WeakMap<object, boolean>();

/** One server: the application's client and its connection. */
interface Server {
  client: AnyClient;
  connection?: Connection;
  /**
   * The client's key prefix (ioredis's `keyPrefix`, node-redis 3's `prefix`): the clients add it to the keys of
   * the scripts, not to those of commands they do not know, nor on the connections for waits; added here.
   */
  prefix: string;
}

/** What one server answered to one step. */
interface Answer {
  /** The server agreed (its reply was the number of resources). */
  yes: boolean;
  /** The step ran as a module command. */
  module: boolean;
  /** The server answered an error (nothing was changed by a module command then). */
  replyError: boolean;
  /** No answer (connection lost, timeout): whether anything changed is unknown. */
  lost: boolean;
  /** A module `LOCK.MACQUIRE` answered nil: taken elsewhere. */
  refused: boolean;
}

/** The most keys one module command names. */
const MOST_KEYS = 1024;

const SCRIPTS: Record<Step, ScriptName> = { lock: 'lockScript', unlock: 'unlockScript', extend: 'extendScript' };

function isUnknownCommand(error: unknown): boolean {
  return /unknown command/i.test((error as Error)?.message ?? '');
}

function isReplyError(error: unknown): boolean {
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? '';
  return name === 'ReplyError' || name === 'ErrorReply' || /^[A-Z][A-Z_]+ /.test(message);
}

function count(reply: Reply): number | undefined {
  if (typeof reply === 'number') return reply;
  if (typeof reply === 'string' && /^-?\d+$/.test(reply)) return Number(reply);
  if (typeof reply === 'bigint') return Number(reply);
  return undefined;
}

function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

type LockType = Lock;
type LockErrorType = LockError;

class Redlock extends EventEmitter {
  static readonly Lock = Lock;
  static readonly LockError = LockError;
  static default: typeof Redlock;

  driftFactor: number;
  retryCount: number;
  retryDelay: number;
  retryJitter: number;
  lockScript: string;
  unlockScript: string;
  extendScript: string;
  servers: AnyClient[];
  scripts: Record<ScriptName, { value: string; hash: string }>;
  /** The steps whose script the options replaced: those run the script, module or not. */
  private readonly custom: Record<Step, boolean>;
  private readonly known = new WeakMap<object, Server>();

  constructor(clients: AnyClient[], options: RedlockOptions = {}) {
    super();
    options = options || {};
    this.driftFactor = typeof options.driftFactor === 'number' ? options.driftFactor : DEFAULTS.driftFactor;
    this.retryCount = typeof options.retryCount === 'number' ? options.retryCount : DEFAULTS.retryCount;
    this.retryDelay = typeof options.retryDelay === 'number' ? options.retryDelay : DEFAULTS.retryDelay;
    this.retryJitter = typeof options.retryJitter === 'number' ? options.retryJitter : DEFAULTS.retryJitter;
    this.lockScript = typeof options.lockScript === 'function' ? options.lockScript(LOCK_SCRIPT) : LOCK_SCRIPT;
    this.unlockScript =
      typeof options.unlockScript === 'function' ? options.unlockScript(UNLOCK_SCRIPT) : UNLOCK_SCRIPT;
    this.extendScript =
      typeof options.extendScript === 'function' ? options.extendScript(EXTEND_SCRIPT) : EXTEND_SCRIPT;
    this.custom = {
      lock: typeof options.lockScript === 'function',
      unlock: typeof options.unlockScript === 'function',
      extend: typeof options.extendScript === 'function',
    };
    this.servers = clients;
    if (this.servers.length === 0) throw new Error('Redlock must be instantiated with at least one redis server.');
    this.scripts = {
      lockScript: { value: this.lockScript, hash: this._hashScript(this.lockScript) },
      unlockScript: { value: this.unlockScript, hash: this._hashScript(this.unlockScript) },
      extendScript: { value: this.extendScript, hash: this._hashScript(this.extendScript) },
    };
  }

  /** Quits every client (and closes the connections this module opened for waits). */
  quit(callback?: Callback<unknown[]>): Promise<unknown[]> {
    const closing = this.servers.map(async (client) => {
      const server = this.known.get(client);
      if (server?.connection) await server.connection.close().catch(() => undefined);
      return typeof client.quit === 'function' ? client.quit() : client.close();
    });
    return settle(Promise.all(closing), callback);
  }

  lock(resource: string | string[], ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    return this._lock(resource, null, ttl, {}, callback);
  }

  acquire(resource: string | string[], ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    return this._lock(resource, null, ttl, {}, callback);
  }

  lockWithOptions(resource: string | string[], ttl: number, options: LockOptions, callback?: Callback<Lock>) {
    return this._lock(resource, null, ttl, options, callback);
  }

  acquireWithOptions(resource: string | string[], ttl: number, options: LockOptions, callback?: Callback<Lock>) {
    return this._lock(resource, null, ttl, options, callback);
  }

  /** A bluebird disposer for `Promise.using`: the lock, unlocked after the block (errors to `errorHandler`). */
  disposer(resource: string | string[], ttl: number, errorHandler?: (error: Error) => void): unknown {
    if (!Bluebird) throw new Error('redis-recipes/redlock: disposer() needs the bluebird package');
    const handler = errorHandler || ((): void => undefined);
    return (this._lock(resource, null, ttl, {}) as any).disposer((lock: Lock) => lock.unlock().catch(handler));
  }

  unlock(lock: Lock, callback?: Callback<void>): Promise<void> {
    const resources = Array.isArray(lock.resource) ? lock.resource : [lock.resource];
    lock.expiration = 0;
    const run = async (): Promise<void> => {
      const quorum = Math.floor(this.servers.length / 2) + 1;
      const answers = await Promise.all(this.servers.map((client) => this.step(client, 'unlock', resources, lock.value)));
      const votes = answers.filter((answer) => answer.yes).length;
      if (votes >= quorum) return;
      throw new LockError('Unable to fully release the lock on resource "' + lock.resource + '".');
    };
    return settle(run(), callback);
  }

  release(lock: Lock, callback?: Callback<void>): Promise<void> {
    return this.unlock(lock, callback);
  }

  extend(lock: Lock, ttl: number, callback?: Callback<Lock>): Promise<Lock> {
    if (lock.expiration < Date.now()) {
      const error = new LockError(
        'Cannot extend lock on resource "' + lock.resource + '" because the lock has already expired.',
        0,
      );
      return settle(Promise.reject(error), callback);
    }
    const extended = this._lock(lock.resource, lock.value, ttl, {}).then((extension) => {
      lock.value = extension.value;
      lock.expiration = extension.expiration;
      return lock;
    });
    return settle(extended, callback);
  }

  /** redlock's internal entry, kept for callers of its older signature `_lock(resource, value, ttl, callback)`. */
  _lock(
    resource: string | string[],
    value: string | null,
    ttl: number,
    options?: LockOptions | Callback<Lock>,
    callback?: Callback<Lock>,
  ): Promise<Lock> {
    if (typeof options === 'function' && typeof callback === 'undefined') {
      callback = options;
      options = {};
    }
    const opts = (options || {}) as LockOptions;
    const resources = Array.isArray(resource) ? resource : [resource];
    return settle(this.attempt(resources, value, ttl, opts), callback);
  }

  _random(): string {
    return randomBytes(16).toString('hex');
  }

  _hashScript(value: string): string {
    return createHash('sha1').update(value).digest('hex');
  }

  /** Runs one of the scripts on a client (`EVALSHA`, then `EVAL` when the server has not cached it). */
  _executeScript(client: AnyClient, name: ScriptName, args: Arg[], callback: Callback<Reply>): void {
    this.script(this.server(client), name, args).then(
      (reply) => callback(null, reply),
      (error) => callback(error),
    );
  }

  // ------------------------------------------------------------------------------------------------ internals

  private server(client: AnyClient): Server {
    let server = this.known.get(client);
    if (!server) {
      const options = client?.options ?? {};
      const prefix = options.keyPrefix ?? options.redisOptions?.keyPrefix ?? options.prefix ?? '';
      server = { client, prefix: typeof prefix === 'string' ? prefix : String(prefix) };
      this.known.set(client, server);
    }
    if (!server.connection) {
      server.connection = connectionOf(client);
    }
    return server;
  }

  private async script(server: Server, name: ScriptName, args: Arg[]): Promise<Reply> {
    const { value, hash } = this.scripts[name];
    const connection = server.connection as Connection;
    try {
      return await connection.send(['EVALSHA', hash, ...args], 3);
    } catch (error) {
      if (!String((error as Error)?.message ?? '').startsWith('NOSCRIPT')) throw error;
      return connection.send(['EVAL', value, ...args], 3);
    }
  }

  /** The module command of a step. */
  private command(server: Server, step: Step, resources: string[], value: string, ttl?: number): Arg[] {
    const keys: Arg[] = [resources.length, ...resources.map((key) => server.prefix + key), value];
    if (step === 'lock') return ['LOCK.MACQUIRE', ...keys, 'PX', ttl as number, 'NX'];
    if (step === 'extend') return ['LOCK.MEXTEND', ...keys, 'PX', ttl as number];
    return ['LOCK.MRELEASEIF', ...keys];
  }

  /** Runs one step on one server (its module command, or its script), emitting `clientError` on an error. */
  private async step(client: AnyClient, step: Step, resources: string[], value: string, ttl?: number): Promise<Answer> {
    const answer: Answer = { yes: false, module: false, replyError: false, lost: false, refused: false };
    try {
      const server = this.server(client);
      let reply: Reply;
      // No resource, or more than a module command takes: the script, as redlock (no resource: a lock of nothing).
      const fits = resources.length > 0 && resources.length <= MOST_KEYS;
      if (!this.custom[step] && HAS_MODULE.get(client) !== false && fits) {
        try {
          reply = await (server.connection as Connection).send(this.command(server, step, resources, value, ttl), 2);
          HAS_MODULE.set(client, true);
          answer.module = true;
        } catch (error) {
          if (isUnknownCommand(error)) {
            HAS_MODULE.set(client, false);
          } else {
            // Any other answer to a module command proves the module is there.
            if (isReplyError(error)) HAS_MODULE.set(client, true);
            answer.module = true;
            throw error;
          }
        }
      }
      if (!answer.module) {
        const args: Arg[] = [resources.length, ...resources, value];
        if (step !== 'unlock') args.push(ttl as number);
        reply = await this.script(server, SCRIPTS[step], args);
      }
      answer.yes = count(reply) === resources.length;
      answer.refused = answer.module && step === 'lock' && (reply === null || reply === undefined);
    } catch (error) {
      if (isReplyError(error)) answer.replyError = true;
      else answer.lost = true;
      this.emit('clientError', error);
    }
    return answer;
  }

  /**
   * Undoes a failed attempt as redlock does: releases `value` on every server, so that the errors redlock's release
   * meets (a resource holding another type: `WRONGTYPE`) are emitted as `clientError` as redlock emits them.
   * True when a server answered an error.
   */
  private async undo(resources: string[], value: string): Promise<boolean> {
    const answers = await Promise.all(this.servers.map((client) => this.step(client, 'unlock', resources, value)));
    return answers.some((answer) => answer.replyError);
  }

  /** redlock's algorithm: attempts on every server, a quorum, retries; a wait in the server for one server. */
  private async attempt(resources: string[], value: string | null, ttl: number, options: LockOptions): Promise<Lock> {
    const step: Step = value === null ? 'lock' : 'extend';
    const lockValue = value === null ? this._random() : value;
    const retryCount = options.retryCount || this.retryCount;
    const retryDelay = options.retryDelay || this.retryDelay;
    const signal = options.signal;
    const quorum = Math.floor(this.servers.length / 2) + 1;
    const drift = Math.round(this.driftFactor * ttl) + 2;
    // With one server, the time redlock's retries would take at most is spent in the server's queue instead.
    const began = Date.now();
    const budget = retryCount === -1 ? FOREVER : retryCount * (retryDelay + this.retryJitter);
    let attempts = 0;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      attempts++;
      const start = Date.now();
      const answers = await Promise.all(
        this.servers.map((client) => this.step(client, step, resources, lockValue, ttl)),
      );
      const votes = answers.filter((answer) => answer.yes).length;
      const expiration = start + ttl - drift;
      if (votes >= quorum && expiration > Date.now()) {
        return new Lock(this, resources, lockValue, expiration, attempts, retryCount - attempts);
      }
      // A resource of another type (the release answered an error) is retried as redlock retries, each attempt's
      // error emitted, rather than waited for.
      const failing = await this.undo(resources, lockValue);

      const only = answers.length === 1 ? answers[0] : undefined;
      const remaining = budget >= FOREVER ? FOREVER : budget - (Date.now() - began);
      if (only?.refused && !failing && (retryCount === -1 || attempts <= retryCount) && remaining > 0) {
        const roundTrip = Date.now() - start;
        const waited = await this.waitInQueue(resources, lockValue, ttl, remaining, signal);
        if (waited === 'granted') {
          const granted = Date.now();
          let more = Math.max(1, Math.ceil((granted - start) / Math.max(1, retryDelay)));
          if (retryCount !== -1) more = Math.min(more, retryCount + 1 - attempts);
          attempts += more;
          // The lease began when the server granted the wait, at most one round trip before its reply came.
          const end = granted - roundTrip + ttl - drift;
          const lock = new Lock(this, resources, lockValue, end, attempts, retryCount - attempts);
          if (end > Date.now()) return lock;
          await this.undo(resources, lockValue);
        } else if (waited === 'timeout') {
          attempts = Math.max(attempts, retryCount + 1);
        }
      }

      if (retryCount === -1 || attempts <= retryCount) {
        const jitter = Math.floor((Math.random() * 2 - 1) * this.retryJitter);
        await delay(Math.max(0, retryDelay + jitter), signal);
        continue;
      }
      throw new LockError('Exceeded ' + retryCount + ' attempts to lock the resource "' + resources + '".', attempts);
    }
  }

  /**
   * Waits in the single server's queue for every resource (`LOCK.MACQUIRE … WAIT`) on a dedicated connection.
   * 'granted', 'timeout', or 'error' (emitted as `clientError`; what the server may have granted is released).
   */
  private async waitInQueue(
    resources: string[],
    value: string,
    ttl: number,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<'granted' | 'timeout' | 'error'> {
    const server = this.server(this.servers[0]);
    const connection = server.connection as Connection;
    const release = this.command(server, 'unlock', resources, value);
    const args = this.command(server, 'lock', resources, value, ttl);
    args.splice(args.length - 1, 0, 'WAIT', Math.max(1, Math.ceil(Math.min(waitMs, FOREVER))));
    try {
      const reply = await connection.wait(args, server.prefix + resources[0], waitMs, {
        signal,
        undo: () => connection.send(release, 2),
      });
      if (count(reply) === resources.length) return 'granted';
      return 'timeout';
    } catch (error) {
      if (signal?.aborted) throw error;
      this.emit('clientError', error);
      if (!isReplyError(error)) await connection.send(release, 2).catch(() => undefined);
      return 'error';
    }
  }
}

// eslint-disable-next-line @typescript-eslint/no-namespace
namespace Redlock {
  export type Options = RedlockOptions;
  export type LockWithOptions = LockOptions;
  export type Lock = LockType;
  export type LockError = LockErrorType;
}

Redlock.default = Redlock;

export = Redlock;
