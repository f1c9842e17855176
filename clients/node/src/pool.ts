/** POOL: the book's resource pool (chapter 10) with owners, leases and a first-come-first-served wait. */
import { randomUUID } from 'node:crypto';
import { Arg, Connection, connectionOf } from './adapter';
import { LeaseLost, NoResourceFree } from './errors';
import { HoldOptions, Lease, send, sendWaiting } from './held';
import { asFields, ms, text, waitMs } from './reply';

export interface ResourcePoolOptions {
  /** This object's owner name (default: a random UUID). */
  owner?: string;
  /** The lease in ms of each acquisition (default: held until released). */
  ttl?: number;
}

/** Options of `ResourcePool.acquire`. */
export interface PoolAcquireOptions {
  /** Ms to wait for a resource in the server's first-come-first-served queue (default: one try). */
  wait?: number;
  /** The lease in ms (default: the pool object's `ttl`). */
  ttl?: number;
  /** Ends the wait early: the call rejects with the signal's reason and nothing is held. */
  signal?: AbortSignal;
}

/** Options of `ResourcePool.using` and `ResourcePool.hold`. */
export interface PoolLeaseOptions extends HoldOptions {
  /** The lease in ms (default: the pool object's `ttl`). */
  ttl?: number;
  /** With a `ttl`: extend the lease to `ttl` every `ttl / 3` ms while held. */
  renew?: boolean;
  /** Called once with the resource when its lease is found lost while held (else `LeaseLost` is thrown). */
  onLost?: (resource: string) => unknown;
}

/** What `ResourcePool.info()` answers. */
export interface PoolInfo {
  size: number;
  free: number;
  held: number;
  waiting: number;
}

/** A held resource in `ResourcePool.holders()`. */
export interface PoolHolder {
  owner: string;
  /** The lease end (Unix ms), or null: no lease. */
  until: number | null;
}

/**
 * Named resources (connections, API keys, seats), each free or held by one owner. `associate`/`disassociate` add
 * and remove resources; `acquire()` takes the one free the longest for this object's `owner` (null when none is
 * free; with `wait` it waits in the server's first-come-first-served queue on a connection of its own);
 * `release` and `renew` only work for the owner that holds it; a `ttl` makes a holding end by itself. The book's
 * methods return what the book's do. `using(fn)` and `hold()` hold one resource for a function or an
 * `await using` block (`NoResourceFree` when none came in time), renewed with `renew`.
 */
export class ResourcePool {
  readonly connection: Connection;
  readonly owner: string;
  ttl: number | undefined;

  constructor(client: unknown, readonly key: string, options: ResourcePoolOptions = {}) {
    this.connection = connectionOf(client);
    this.owner = options.owner ?? randomUUID();
    this.ttl = options.ttl;
  }

  /** The book's: adds resources to the pool, free. True when every one was new to the pool. */
  async associate(resource: string, ...more: string[]): Promise<boolean> {
    return Number(await send(this.connection, ['POOL.ADD', this.key, resource, ...more])) === more.length + 1;
  }

  /** The book's: removes resources from the pool (free or held). True when every one was there. */
  async disassociate(resource: string, ...more: string[]): Promise<boolean> {
    return Number(await send(this.connection, ['POOL.REMOVE', this.key, resource, ...more])) === more.length + 1;
  }

  /** The resource now held by this owner, or null (none free, or none freed within `wait`). */
  async acquire(options: PoolAcquireOptions = {}): Promise<string | null> {
    const words: Arg[] = ['POOL.ACQUIRE', this.key, this.owner];
    const lease = options.ttl ?? this.ttl;
    if (lease !== undefined) words.push('PX', ms(lease, 'a ttl'));
    if (options.wait === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return text(await send(this.connection, words));
    }
    words.push('WAIT', waitMs(options.wait));
    const reply = await sendWaiting(this.connection, words, this.key, options.wait, {
      signal: options.signal,
      undo: (resource) => this.release(text(resource) ?? ''),
    });
    return text(reply);
  }

  /** True when this owner held `resource` and freed it. */
  async release(resource: string): Promise<boolean> {
    return Number(await send(this.connection, ['POOL.RELEASE', this.key, resource, this.owner])) === 1;
  }

  /** Makes this owner's lease on `resource` end `ttl` ms (default: the pool object's) from now; false if not held. */
  async renew(resource: string, ttl?: number): Promise<boolean> {
    const lease = ttl ?? this.ttl;
    if (lease === undefined) throw new TypeError('renew needs a ttl');
    return Number(await send(this.connection, renewal(this, resource, ms(lease, 'a ttl')))) === 1;
  }

  /** `size`, `free`, `held` and `waiting`. */
  async info(): Promise<PoolInfo> {
    const fields = asFields(await send(this.connection, ['POOL.INFO', this.key]));
    const of = (name: string): number => Number(fields.get(name) ?? 0);
    return { size: of('size'), free: of('free'), held: of('held'), waiting: of('waiting') };
  }

  /** How many resources the pool has, free or held. */
  async size(): Promise<number> {
    return (await this.info()).size;
  }

  /** The book's name for `size()`. */
  totalCount(): Promise<number> {
    return this.size();
  }

  /** How many resources are free. */
  async availableCount(): Promise<number> {
    return (await this.info()).free;
  }

  /** How many resources are held. */
  async occupiedCount(): Promise<number> {
    return (await this.info()).held;
  }

  /** `'free'`, `'held'` (by a live lease), or null when the pool lacks `resource`. */
  async status(resource: string): Promise<'free' | 'held' | null> {
    return text(await send(this.connection, ['POOL.STATUS', this.key, resource])) as 'free' | 'held' | null;
  }

  /** The book's: true when `resource` is in the pool and free. */
  async isAvailable(resource: string): Promise<boolean> {
    return (await this.status(resource)) === 'free';
  }

  /** The book's: true when `resource` is in the pool and held. */
  async isOccupied(resource: string): Promise<boolean> {
    return (await this.status(resource)) === 'held';
  }

  /** The book's: true when `resource` is in the pool, free or held. */
  async has(resource: string): Promise<boolean> {
    return (await this.status(resource)) !== null;
  }

  /** Each held resource's owner and lease end. */
  async holders(): Promise<Map<string, PoolHolder>> {
    const rows = await send(this.connection, ['POOL.HOLDERS', this.key]);
    const held = new Map<string, PoolHolder>();
    for (const row of Array.isArray(rows) ? rows : []) {
      const until = Number(row[2]);
      held.set(text(row[0]) ?? '', { owner: text(row[1]) ?? '', until: until < 0 ? null : until });
    }
    return held;
  }

  /** Runs `fn` with a resource held (waiting `wait` ms, default forever), then releases it (see the class). */
  using<T>(fn: (resource: string) => T | Promise<T>, options: PoolLeaseOptions = {}): Promise<T> {
    return new PoolLease(this, options).using(fn, options);
  }

  /** Holds a resource for an `await using` block, which releases it: `lease.resource`. */
  hold(options: PoolLeaseOptions = {}): Promise<PoolLease> {
    return new PoolLease(this, options).hold(options);
  }
}

function renewal(pool: ResourcePool, resource: string, lease: number): Arg[] {
  return ['POOL.RENEW', pool.key, resource, pool.owner, 'PX', lease];
}

/** One resource of a `ResourcePool` held by `using` or `hold`. */
export class PoolLease extends Lease<string> {
  constructor(readonly pool: ResourcePool, options: PoolLeaseOptions) {
    super(pool.connection, options.ttl ?? pool.ttl, options.renew ?? false, options.onLost);
  }

  /** The resource held. */
  get resource(): string | undefined {
    return this.value;
  }

  protected take(wait: number, signal: AbortSignal | undefined): Promise<string | null> {
    return this.pool.acquire({ ttl: this.ttl, wait, signal });
  }

  protected give(resource: string): Promise<boolean> {
    return this.pool.release(resource);
  }

  protected extendWords(resource: string, lease: number): Arg[] {
    return renewal(this.pool, resource, lease);
  }

  protected notFree(): Error {
    return new NoResourceFree(`no resource of pool '${this.pool.key}' came free in time`);
  }

  protected lostError(): Error {
    return new LeaseLost(`resource '${String(this.value)}' of pool '${this.pool.key}' was lost`);
  }
}
