/**
 * What a lock and a pool lease share: taking it for the length of a function (`using`) or of an `await using`
 * block (`hold`), the renewal that keeps its lease meanwhile, and learning that it was lost.
 */
import { Arg, Connection, FOREVER } from './adapter';
import { LockLost, LockNotAcquired, translate } from './errors';
import { ms, waitMs } from './reply';

/** Milliseconds: after a failed renewal, the shortest wait before the next try (unless the lease ends sooner). */
export const RETRY = 50;

/** `Symbol.asyncDispose`, or the symbol TypeScript and Node use before the runtime has it. */
export const asyncDispose: typeof Symbol.asyncDispose =
  (Symbol as { asyncDispose?: typeof Symbol.asyncDispose }).asyncDispose ??
  (Symbol.for('Symbol.asyncDispose') as typeof Symbol.asyncDispose);

/**
 * A background renewal of a lease of `ttl` ms: `words` (an extend that answers 1 while the lease is held and makes
 * it end `ttl` ms later) is sent every `ttl / 3` ms. It ends, calling `lost()` once, when the server answers that
 * the lease is no longer held, or when renewals failed (a dropped connection, a timeout, an error) until the
 * lease's end as this process knows it: `ttl` ms after the last successful renewal was sent. A failed renewal is
 * tried again after half the time left (at most `ttl / 3`, at least `RETRY`, the last try at the lease's end).
 */
export class Renewer {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private ends: number;
  private readonly period: number;

  constructor(
    private readonly connection: Connection,
    private readonly words: Arg[],
    private readonly ttl: number,
    private readonly lost: () => void,
  ) {
    this.period = ttl / 3;
    this.ends = Date.now() + ttl;
    this.schedule(this.period);
  }

  private schedule(wait: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const sent = Date.now();
    let held: boolean;
    try {
      held = Number(await this.connection.send(this.words)) === 1;
    } catch {
      const left = this.ends - Date.now();
      if (left > 0) {
        this.schedule(Math.min(this.period, Math.max(left / 2, RETRY), left));
        return;
      }
      held = false;
    }
    if (this.stopped) return;
    if (!held) {
      this.stopped = true;
      this.lost();
      return;
    }
    this.ends = sent + this.ttl;
    this.schedule(this.period);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/** Sends `args`, turning a server error into the package's class for it. */
export async function send(connection: Connection, args: Arg[], keyAt?: number): Promise<unknown> {
  try {
    return await connection.send(args, keyAt);
  } catch (error) {
    throw translate(error);
  }
}

/** Sends a waiting command (see `Connection.wait`), turning a server error into the package's class for it. */
export async function sendWaiting(
  connection: Connection,
  args: Arg[],
  key: Arg,
  waitMs: number,
  options?: Parameters<Connection['wait']>[3],
): Promise<unknown> {
  try {
    return await connection.wait(args, key, waitMs, options);
  } catch (error) {
    throw translate(error);
  }
}

/** Options of `using` and `hold`. */
export interface HoldOptions {
  /** Ms to wait for it in the server's queue (default: the object's `wait`, else forever). */
  wait?: number;
  /** Ends the wait early. */
  signal?: AbortSignal;
}

/**
 * A lock or a lease held for a while: `X` is what the holder gets and `onLost` is called with. A subclass says how
 * to take it (`taking`, throwing when it cannot), give it back (`givingBack`: true when it was still held), renew
 * it (`extension`: the command that makes the lease end in so many ms, sent every `ttl / 3` ms when `renew` and a
 * `ttl` are set), and what a loss throws (`lostError`).
 */
export abstract class Held<X> {
  /** True once the lease was found lost (by the renewal, or when it was given back). */
  lost = false;
  private renewer: Renewer | undefined;

  constructor(
    protected readonly connection: Connection,
    public ttl: number | undefined,
    public renew: boolean,
    public onLost: ((subject: X) => unknown) | undefined,
  ) {}

  protected abstract taking(options: HoldOptions): Promise<X>;
  protected abstract givingBack(): Promise<boolean>;
  protected abstract extension(ms: number): Arg[];
  protected abstract subject(): X | undefined;
  protected abstract lostError(): Error;

  /** Takes it and starts the renewal (with `renew` and a `ttl`); `release` or `await using` gives it back. */
  protected async entering(options: HoldOptions): Promise<X> {
    const taken = await this.taking(options);
    this.lost = false;
    if (this.renew && this.ttl !== undefined) {
      this.renewer = new Renewer(this.connection, this.extension(this.ttl), this.ttl, () => this.lose());
    }
    return taken;
  }

  /**
   * Stops the renewal and gives it back. If it was lost, `onLost` has been called once; without `onLost` the loss
   * throws when `throwLost`.
   */
  protected async exiting(throwLost: boolean): Promise<void> {
    this.stopRenewer();
    const released = await this.givingBack();
    if (!released && !this.lost) this.lose();
    if (this.lost && this.onLost === undefined && throwLost) throw this.lostError();
  }

  /** Runs `fn` while holding it, then gives it back (see `entering` and `exiting`). */
  async using<T>(fn: (subject: X) => T | Promise<T>, options: HoldOptions = {}): Promise<T> {
    const subject = await this.entering(options);
    let result: T;
    try {
      result = await fn(subject);
    } catch (error) {
      await this.exiting(false).catch(() => undefined);
      throw error;
    }
    await this.exiting(true);
    return result;
  }

  protected lose(): void {
    this.lost = true;
    const subject = this.subject();
    if (this.onLost !== undefined && subject !== undefined) {
      try {
        void Promise.resolve(this.onLost(subject)).catch(() => undefined);
      } catch {
        // A throwing callback must not stop the renewal's bookkeeping.
      }
    }
  }

  protected stopRenewer(): void {
    const renewer = this.renewer;
    this.renewer = undefined;
    renewer?.stop();
  }
}

/**
 * A lock held by a token, with an optional lease (`ttl`), wait and fencing counter: what `Lock` and
 * `ReadWriteLock`'s handles are. A subclass gives its commands (`acquireWords`: the acquire without its `PX`,
 * `WAIT` and `FENCE` options; `releaseWords`; `extendWords`) and its name in errors (`describe`). `acquire()` tries
 * once, `acquire({ wait })` waits in the server's queue on a connection of its own; `using(fn)` and `hold()` take
 * it (waiting `wait` ms, default forever; `LockNotAcquired` when it stays taken), renew it with `renew`, and give
 * it back.
 */
export abstract class TokenLock<X> extends Held<X> {
  /** The fencing token of the last acquisition (with `fence`). */
  fencingToken: number | undefined;

  constructor(
    connection: Connection,
    readonly key: string,
    readonly token: string,
    ttl: number | undefined,
    public wait: number | undefined,
    readonly fence: string | undefined,
    renew: boolean,
    onLost: ((subject: X) => unknown) | undefined,
  ) {
    super(connection, ttl, renew, onLost);
  }

  protected abstract acquireWords(): Arg[];
  protected abstract releaseWords(): Arg[];
  protected abstract extendWords(ms: number): Arg[];
  protected abstract describe(): string;

  /** The acquire command's options: the lease, the wait, the fence. */
  protected options(wait: number | undefined): Arg[] {
    const words: Arg[] = [];
    if (this.ttl !== undefined) words.push('PX', ms(this.ttl, 'a ttl'));
    if (wait !== undefined) words.push('WAIT', waitMs(wait));
    if (this.fence !== undefined) words.push('FENCE', this.fence);
    return words;
  }

  /** True for a granting reply (anything but nil), which with `fence` is the fencing token. */
  protected granted(reply: unknown): boolean {
    if (reply === null || reply === undefined) return false;
    if (this.fence !== undefined) this.fencingToken = Number(reply);
    this.lost = false;
    return true;
  }

  /**
   * True when this token now holds the lock. `wait`: the most ms to wait in the server's queue (default: one
   * try); `signal` ends the wait early (the call rejects with its reason and the lock is not held).
   */
  async acquire(options: HoldOptions = {}): Promise<boolean> {
    const args = [...this.acquireWords(), ...this.options(options.wait)];
    if (options.wait === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return this.granted(await send(this.connection, args));
    }
    const reply = await sendWaiting(this.connection, args, this.key, options.wait, {
      signal: options.signal,
      undo: () => send(this.connection, this.releaseWords()),
    });
    return this.granted(reply);
  }

  /** True when this token held the lock and released it (the renewal, if any, stops first). */
  async release(): Promise<boolean> {
    this.stopRenewer();
    return Number(await send(this.connection, this.releaseWords())) === 1;
  }

  /** True when this token holds the lock, its lease now ending `ttl` ms from now (default: the lock's `ttl`). */
  async extend(ttl?: number): Promise<boolean> {
    const lease = ttl ?? this.ttl;
    if (lease === undefined) throw new TypeError('extend needs a ttl');
    return Number(await send(this.connection, this.extension(ms(lease, 'a ttl')))) === 1;
  }

  /** Takes the lock for an `await using` block, which gives it back (see `using`). */
  async hold(options: HoldOptions = {}): Promise<this> {
    await this.entering(options);
    return this;
  }

  async [asyncDispose](): Promise<void> {
    await this.exiting(true);
  }

  protected async taking(options: HoldOptions): Promise<X> {
    const wait = options.wait ?? this.wait ?? FOREVER;
    if (!(await this.acquire({ wait, signal: options.signal }))) throw this.notAcquired();
    return this.subject();
  }

  /** What `using`/`hold` throw when the lock stays taken. */
  protected notAcquired(): Error {
    return new LockNotAcquired(`${this.describe()} was not acquired in time`);
  }

  protected givingBack(): Promise<boolean> {
    return this.release();
  }

  protected extension(ms: number): Arg[] {
    return this.extendWords(Math.ceil(ms));
  }

  protected subject(): X {
    return this as unknown as X;
  }

  protected lostError(): Error {
    return new LockLost(`${this.describe()} was lost before the block ended`);
  }
}

/**
 * One thing of a pool (a resource of a `ResourcePool`, an ID of an `IdPool`) held for the length of a function
 * (`using`) or of an `await using` block (`hold`), its lease renewed with `renew`. A subclass says how to take
 * one (`take`: null when none came in time), give it back (`give`), and extend its lease (`extendWords`), and what
 * errors it throws when none came (`notFree`) and when the lease was lost (`lostError`).
 */
export abstract class Lease<V> extends Held<V> {
  /** What is held (undefined before it is taken). */
  value: V | undefined;

  constructor(
    connection: Connection,
    ttl: number | undefined,
    renew: boolean,
    onLost: ((value: V) => unknown) | undefined,
  ) {
    super(connection, ttl, renew, onLost);
  }

  protected abstract take(wait: number, signal: AbortSignal | undefined): Promise<V | null>;
  protected abstract give(value: V): Promise<boolean>;
  protected abstract extendWords(value: V, ms: number): Arg[];
  protected abstract notFree(): Error;

  /** Takes one (waiting `wait` ms, default forever) for an `await using` block, which gives it back. */
  async hold(options: HoldOptions = {}): Promise<this> {
    await this.entering(options);
    return this;
  }

  async [asyncDispose](): Promise<void> {
    await this.exiting(true);
  }

  protected async taking(options: HoldOptions): Promise<V> {
    const value = await this.take(options.wait ?? FOREVER, options.signal);
    if (value === null) throw this.notFree();
    this.value = value;
    return value;
  }

  protected async givingBack(): Promise<boolean> {
    return this.value === undefined ? false : this.give(this.value);
  }

  protected extension(ms: number): Arg[] {
    return this.extendWords(this.value as V, Math.ceil(ms));
  }

  protected subject(): V | undefined {
    return this.value;
  }
}
