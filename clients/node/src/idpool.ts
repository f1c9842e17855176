/** IDPOOL: cyclic ID pools with expiring leases. */
import { Arg, Connection, connectionOf } from './adapter';
import { KeyExists, LeaseLost, NoResourceFree } from './errors';
import { HoldOptions, Lease, send, sendWaiting } from './held';
import { asFields, integer, ms, waitMs } from './reply';

/** What `IdPool.info()` answers. */
export interface IdPoolInfo {
  max: number;
  /** Live leases. */
  leased: number;
  /** Where the search for a free ID starts. */
  next: number;
  /** The default lease in ms, or null (leases without an end). */
  defaultTtl: number | null;
}

/** Options of `IdPool.acquire`. */
export interface IdAcquireOptions {
  /** The lease in ms (default: the pool's). */
  ttl?: number;
  /** Ms to wait for an ID in the server's first-come-first-served queue (default: one try). */
  wait?: number;
  /** Ends the wait early: the call rejects with the signal's reason and no ID is held. */
  signal?: AbortSignal;
}

/** Options of `IdPool.using` and `IdPool.hold`. */
export interface IdLeaseOptions extends HoldOptions {
  /** The lease in ms (default: the pool's). */
  ttl?: number;
  /** With a `ttl`: extend the lease to `ttl` every `ttl / 3` ms while held. */
  renew?: boolean;
  /** Called once with the ID when its lease is found lost while held (else `LeaseLost` is thrown). */
  onLost?: (id: number) => unknown;
}

/**
 * IDs `1..max` handed out in turn, each leased until released or its lease ends. A full pool answers null, or,
 * with `wait`, the first ID freed within it (a wait in the server's queue on a connection of its own).
 * `using(fn)` and `hold()` lease one ID for a function or an `await using` block.
 */
export class IdPool {
  readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** IDs `1..max`, each lease `ttl` ms by default (none: no end). True when created, false when the key exists. */
  async create(max: number, options: { ttl?: number } = {}): Promise<boolean> {
    const words: Arg[] = ['IDPOOL.CREATE', this.key, max];
    if (options.ttl !== undefined) words.push('TTL', ms(options.ttl, 'a ttl'));
    try {
      await send(this.connection, words);
    } catch (error) {
      if (error instanceof KeyExists) return false;
      throw error;
    }
    return true;
  }

  /** The next free ID, leased for `ttl` ms (default: the pool's), or null (none free, or none freed in `wait`). */
  async acquire(options: IdAcquireOptions = {}): Promise<number | null> {
    const words: Arg[] = ['IDPOOL.NEXT', this.key];
    if (options.ttl !== undefined) words.push('TTL', ms(options.ttl, 'a ttl'));
    if (options.wait === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return integer(await send(this.connection, words));
    }
    words.push('WAIT', waitMs(options.wait));
    const reply = await sendWaiting(this.connection, words, this.key, options.wait, {
      signal: options.signal,
      undo: (id) => this.release(Number(id)),
    });
    return integer(reply);
  }

  /** True when `id` was leased and is now free. */
  async release(id: number): Promise<boolean> {
    return Number(await send(this.connection, ['IDPOOL.RELEASE', this.key, id])) === 1;
  }

  /** Makes a live lease end `ttl` ms from now; false when `id` is not leased. */
  async renew(id: number, ttl: number): Promise<boolean> {
    return Number(await send(this.connection, ['IDPOOL.RENEW', this.key, id, ms(ttl, 'a ttl')])) === 1;
  }

  /** Makes the pool `1..max`: true. A live lease above `max` throws `CannotShrink`. */
  async resize(max: number): Promise<boolean> {
    await send(this.connection, ['IDPOOL.RESIZE', this.key, max]);
    return true;
  }

  /** `max`, `leased`, `next` and `defaultTtl` (ms or null). */
  async info(): Promise<IdPoolInfo> {
    const fields = asFields(await send(this.connection, ['IDPOOL.INFO', this.key]));
    return {
      max: Number(fields.get('max')),
      leased: Number(fields.get('leased')),
      next: Number(fields.get('next')),
      defaultTtl: integer(fields.get('default_ttl')),
    };
  }

  /** Runs `fn` with an ID leased (waiting `wait` ms, default forever; `NoResourceFree` if none), then releases it. */
  using<T>(fn: (id: number) => T | Promise<T>, options: IdLeaseOptions = {}): Promise<T> {
    return this.lease(options).using(fn, options);
  }

  /** Leases an ID for an `await using` block, which releases it: `lease.id`. */
  hold(options: IdLeaseOptions = {}): Promise<IdLease> {
    return this.lease(options).hold(options);
  }

  private lease(options: IdLeaseOptions): IdLease {
    return new IdLease(this, options);
  }
}

/** One ID of an `IdPool` held by `using` or `hold`. */
export class IdLease extends Lease<number> {
  constructor(readonly pool: IdPool, options: IdLeaseOptions) {
    super(pool.connection, options.ttl, options.renew ?? false, options.onLost);
  }

  /** The ID held. */
  get id(): number | undefined {
    return this.value;
  }

  protected take(wait: number, signal: AbortSignal | undefined): Promise<number | null> {
    return this.pool.acquire({ ttl: this.ttl, wait, signal });
  }

  protected give(id: number): Promise<boolean> {
    return this.pool.release(id);
  }

  protected extendWords(id: number, ms: number): Arg[] {
    return ['IDPOOL.RENEW', this.pool.key, id, ms];
  }

  protected notFree(): Error {
    return new NoResourceFree(`no ID of pool '${this.pool.key}' came free in time`);
  }

  protected lostError(): Error {
    return new LeaseLost(`ID ${String(this.value)} of pool '${this.pool.key}' was lost`);
  }
}
