/** LOCK: owner-token locks with leases, a first-come-first-served wait and fencing tokens. */
import { randomUUID } from 'node:crypto';
import { Arg, Connection, connectionOf } from './adapter';
import { LockNotAcquired } from './errors';
import { HoldOptions, TokenLock, send } from './held';

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
export interface AcquireOptions extends HoldOptions {
  /** Ms to wait in the server's first-come-first-served queue (default: one try). */
  wait?: number;
  /** Ends the wait early: the call rejects with the signal's reason and the lock is not held. */
  signal?: AbortSignal;
}

/**
 * A lock held by this object's token. `acquire()` tries once; `acquire({ wait })` waits in the server's queue,
 * on a connection of its own (the application's client is never held up). `using(fn)` and `await using … =
 * await lock.hold()` take it (waiting `wait` ms, default forever; `LockNotAcquired` when it stays taken), renew
 * it with `renew`, and give it back. `acquire`, `release`, `extend`, `hold` are `TokenLock`'s.
 */
export class Lock extends TokenLock<Lock> {
  constructor(client: unknown, key: string, options: LockOptions = {}) {
    super(connectionOf(client), key, options.token ?? randomUUID(), options.ttl, options.wait, options.fence,
      options.renew ?? false, options.onLost);
  }

  /** NX: a lock this token already holds is not taken again (acquire answers false), as the book's SET NX. */
  protected acquireWords(): Arg[] {
    return ['LOCK.ACQUIRE', this.key, this.token, 'NX'];
  }

  protected releaseWords(): Arg[] {
    return ['LOCK.RELEASEIF', this.key, this.token];
  }

  protected extendWords(ms: number): Arg[] {
    return ['LOCK.EXTEND', this.key, this.token, 'PX', ms];
  }

  protected describe(): string {
    return `lock '${this.key}'`;
  }

  protected override notAcquired(): Error {
    return new LockNotAcquired(`lock '${this.key}' is held by another client`);
  }

  /** True when the lock is held (by any token). */
  async locked(): Promise<boolean> {
    return Number(await send(this.connection, ['EXISTS', this.key])) === 1;
  }

  /** True when this object's token holds the lock. */
  async owned(): Promise<boolean> {
    return (await send(this.connection, ['GET', this.key])) === this.token;
  }
}

export type { Connection };
