/** LOCK: owner-token locks with leases, a first-come-first-served wait and fencing tokens. */
import { randomUUID } from 'node:crypto';
import { Arg, Connection, FOREVER, connectionOf } from './adapter';
import { LockLost, LockNotAcquired } from './errors';
import { Held, HoldOptions, asyncDispose, send, sendWaiting } from './held';

export interface LockOptions {
  /** The holder's token (default: a random UUID). */
  token?: string;
  /** Lease in ms: the lock ends by itself this long after it is taken (default: held until released). */
  ttl?: number;
  /** Ms `using`/`hold` wait for the lock in the server's queue (default: forever). */
  wait?: number;
  /** A counter key: each acquisition sets `fencingToken` to a strictly increasing number. */
  fence?: string;
  /** With a `ttl`: while held by `using`/`hold`, extend the lease to `ttl` every `ttl / 3` ms. */
  renew?: boolean;
  /** Called once when the lock is found lost while held by `using`/`hold` (else `LockLost` is thrown). */
  onLost?: (lock: Lock) => unknown;
}

/** Options of `acquire`. */
export interface AcquireOptions {
  /** Ms to wait in the server's first-come-first-served queue (default: one try). */
  wait?: number;
  /** Ends the wait early: the call rejects with the signal's reason and the lock is not held. */
  signal?: AbortSignal;
}

/**
 * A lock held by this object's token. `acquire()` tries once; `acquire({ wait })` waits in the server's queue,
 * on a connection of its own (the application's client is never held up). `using(fn)` and `await using … =
 * await lock.hold()` take it (waiting `wait` ms, default forever; `LockNotAcquired` when it stays taken), renew
 * it with `renew`, and give it back.
 */
export class Lock extends Held<Lock> {
  readonly token: string;
  readonly fence: string | undefined;
  wait: number | undefined;
  /** The fencing token of the last acquisition (with `fence`). */
  fencingToken: number | undefined;

  constructor(client: unknown, readonly key: string, options: LockOptions = {}) {
    const connection = connectionOf(client);
    super(connection, options.ttl, options.renew ?? false, options.onLost);
    this.token = options.token ?? randomUUID();
    this.fence = options.fence;
    this.wait = options.wait;
  }

  /** The acquire command's options: the lease, the wait, the fence. */
  protected options(wait: number | undefined): Arg[] {
    const words: Arg[] = [];
    if (this.ttl !== undefined) words.push('PX', Math.ceil(this.ttl));
    if (wait !== undefined) words.push('WAIT', Math.max(1, Math.ceil(wait)));
    if (this.fence !== undefined) words.push('FENCE', this.fence);
    return words;
  }

  protected granted(reply: unknown): boolean {
    if (reply === null || reply === undefined) return false;
    if (this.fence !== undefined) this.fencingToken = Number(reply);
    this.lost = false;
    return true;
  }

  /** True when this token now holds the lock (`NX`: a lock this token already holds answers false). */
  async acquire(options: AcquireOptions = {}): Promise<boolean> {
    // NX: a lock this token already holds is not taken again, as the book's SET NX answers.
    const args: Arg[] = ['LOCK.ACQUIRE', this.key, this.token, 'NX', ...this.options(options.wait)];
    if (options.wait === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return this.granted(await send(this.connection, args));
    }
    const reply = await sendWaiting(this.connection, args, this.key, options.wait, {
      signal: options.signal,
      undo: () => send(this.connection, ['LOCK.RELEASEIF', this.key, this.token]),
    });
    return this.granted(reply);
  }

  /** True when this token held the lock and released it (the renewal, if any, stops first). */
  async release(): Promise<boolean> {
    this.stopRenewer();
    return Number(await send(this.connection, ['LOCK.RELEASEIF', this.key, this.token])) === 1;
  }

  /** True when this token holds the lock, its lease now ending `ttl` ms from now (default: the lock's `ttl`). */
  async extend(ttl?: number): Promise<boolean> {
    const ms = ttl ?? this.ttl;
    if (ms === undefined) throw new TypeError('extend needs a ttl');
    return Number(await send(this.connection, this.extension(ms))) === 1;
  }

  /** True when the lock is held (by any token). */
  async locked(): Promise<boolean> {
    return Number(await send(this.connection, ['EXISTS', this.key])) === 1;
  }

  /** True when this object's token holds the lock. */
  async owned(): Promise<boolean> {
    return (await send(this.connection, ['GET', this.key])) === this.token;
  }

  /** Takes the lock for an `await using` block, which gives it back (see `using`). */
  async hold(options: HoldOptions = {}): Promise<this> {
    await this.entering(options);
    return this;
  }

  async [asyncDispose](): Promise<void> {
    await this.exiting(true);
  }

  protected async taking(options: HoldOptions): Promise<Lock> {
    const wait = options.wait ?? this.wait ?? FOREVER;
    if (!(await this.acquire({ wait, signal: options.signal }))) {
      throw new LockNotAcquired(`lock '${this.key}' is held by another client`);
    }
    return this;
  }

  protected givingBack(): Promise<boolean> {
    return this.release();
  }

  protected extension(ms: number): Arg[] {
    return ['LOCK.EXTEND', this.key, this.token, 'PX', Math.ceil(ms)];
  }

  protected subject(): Lock {
    return this;
  }

  protected lostError(): Error {
    return new LockLost(`lock '${this.key}' was lost before the block ended`);
  }
}

export type { Connection };
