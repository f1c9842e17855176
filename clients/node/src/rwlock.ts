/** RWLOCK: a fair readers-writer lock whose holders each have a lease (Redisson's `RReadWriteLock`). */
import { randomUUID } from 'node:crypto';
import { Arg, Connection, connectionOf } from './adapter';
import { TokenLock, send } from './held';
import { asFields, integer, text } from './reply';

export type RwMode = 'read' | 'write';

export interface ReadWriteLockOptions {
  /** Each holder's lease in ms (default: held until released). */
  ttl?: number;
  /** Ms `using`/`hold` wait for the lock in the server's queue (default: forever). */
  wait?: number;
  /** A counter key (in the lock's slot): a write acquisition sets `fencingToken` to a strictly increasing number,
   * a read acquisition to the last writer's. */
  fence?: string;
  /** With a `ttl`: while held by `using`/`hold`, extend the lease to `ttl` every `ttl / 3` ms. */
  renew?: boolean;
  /** Called once when a handle's hold is found lost while held by `using`/`hold` (else `LockLost` is thrown). */
  onLost?: (handle: RwLockHandle) => unknown;
}

/** What `ReadWriteLock.info()` answers. */
export interface RwLockInfo {
  /** `'read'`, `'write'` or `'none'` (free). */
  mode: RwMode | 'none';
  /** Each holder's token and its lease end (Unix ms; null: no lease). */
  holders: Map<string, number | null>;
  /** How many clients wait for the lock. */
  waiting: number;
}

/**
 * A readers-writer lock at `key`: many readers at once, or one writer. `readLock()` and `writeLock()` give
 * handles (`RwLockHandle`), each with a token of its own, used as `Lock` is: `acquire({ wait, signal })`,
 * `release()`, `extend(ttl)`, `fencingToken`, `lost`, `using(fn)` and `hold()`. Waiters are served in arrival
 * order and a newcomer never passes one, so a waiting writer is served before the readers that came after it.
 */
export class ReadWriteLock {
  readonly connection: Connection;
  ttl: number | undefined;
  wait: number | undefined;
  readonly fence: string | undefined;
  renew: boolean;
  onLost: ((handle: RwLockHandle) => unknown) | undefined;

  constructor(client: unknown, readonly key: string, options: ReadWriteLockOptions = {}) {
    this.connection = connectionOf(client);
    this.ttl = options.ttl;
    this.wait = options.wait;
    this.fence = options.fence;
    this.renew = options.renew ?? false;
    this.onLost = options.onLost;
  }

  /** A handle that takes the lock for reading (shared with other readers); its own token unless `token`. */
  readLock(options: { token?: string } = {}): RwLockHandle {
    return new RwLockHandle(this, 'read', options.token);
  }

  /** A handle that takes the lock for writing (alone); its own token unless `token`. */
  writeLock(options: { token?: string } = {}): RwLockHandle {
    return new RwLockHandle(this, 'write', options.token);
  }

  /** The lock's mode, its holders and how many clients wait. */
  async info(): Promise<RwLockInfo> {
    const fields = asFields(await send(this.connection, ['RWLOCK.INFO', this.key]));
    const holders = new Map<string, number | null>();
    const rows = fields.get('holders');
    for (const row of Array.isArray(rows) ? rows : []) {
      const until = Number(row[1]);
      holders.set(text(row[0]) ?? '', until < 0 ? null : until);
    }
    const mode = (text(fields.get('mode')) ?? 'none') as RwLockInfo['mode'];
    return { mode, holders, waiting: integer(fields.get('waiting')) ?? 0 };
  }
}

/**
 * One holder of a `ReadWriteLock`: its token and mode, used as a `Lock` is; the lock's `ttl`, `wait`, `fence`,
 * `renew` and `onLost` apply. Unlike `Lock.acquire`, `acquire` on a handle that holds the lock answers true (and
 * resets its lease). A token holding the read lock cannot ask for the write lock (`CannotUpgrade`).
 */
export class RwLockHandle extends TokenLock<RwLockHandle> {
  constructor(readonly rwlock: ReadWriteLock, public mode: RwMode, token?: string) {
    if (mode !== 'read' && mode !== 'write') throw new TypeError(`mode is 'read' or 'write', not ${String(mode)}`);
    super(rwlock.connection, rwlock.key, token ?? randomUUID(), rwlock.ttl, rwlock.wait, rwlock.fence,
      rwlock.renew, rwlock.onLost);
  }

  protected acquireWords(mode: RwMode = this.mode): Arg[] {
    return ['RWLOCK.ACQUIRE', this.key, mode.toUpperCase(), this.token];
  }

  protected releaseWords(): Arg[] {
    return ['RWLOCK.RELEASE', this.key, this.token];
  }

  protected extendWords(ms: number): Arg[] {
    return ['RWLOCK.EXTEND', this.key, this.token, 'PX', ms];
  }

  protected describe(): string {
    return `${this.mode} lock '${this.key}'`;
  }

  /**
   * Turns a write hold into a read hold at once (the readers at the head of the queue are admitted with it); the
   * mode becomes `'read'`, the lease the lock's `ttl`. True when this token now holds the read lock (if it no
   * longer held the lock, this is one try to take it for reading). A read handle throws a `TypeError`.
   */
  async downgrade(): Promise<boolean> {
    if (this.mode !== 'write') throw new TypeError('only a write lock can be downgraded');
    const words = [...this.acquireWords('read'), ...this.options(undefined)];
    const granted = this.granted(await send(this.connection, words));
    if (granted) this.mode = 'read';
    return granted;
  }
}
