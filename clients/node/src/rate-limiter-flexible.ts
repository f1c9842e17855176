/**
 * A drop-in for rate-limiter-flexible's `RateLimiterRedis` (with its `RateLimiterRes`, and a `RateLimiterQueue`
 * and `RateLimiterUnion` of its own): the same options, methods, results and rejections, the same stored counter (a
 * plain string integer with a TTL under `keyPrefix:key`), counted by one `RATE.FIXED` per call where the server has
 * the module, and by a script of the same semantics where it has not (learned once per connection).
 *
 * Beyond the original: the call that first takes a counter over `points` with `blockDuration` sets the block in
 * the same command (the original sends a second one); `RateLimiterQueue`'s waiters queue in the server, first come
 * first served across every process; `RateLimiterUnion` consumes all its limits or none.
 */
import { Arg, Connection, FOREVER, connectionOf } from './adapter';
import { isUnknownRecipe, translate } from './errors';
import { FixedOptions, MAX_PERIOD_MS, Script, Send, fixedArgs, hasModule, learnModule, moduleOr, pair, readCounter } from './fixed';

/* eslint-disable @typescript-eslint/no-explicit-any */
function peer(): any {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('rate-limiter-flexible');
  } catch {
    return undefined;
  }
}
const PEER = peer();

/** A limiter's answer: the fields and serialisation of rate-limiter-flexible's `RateLimiterRes`. */
class Res {
  private _remainingPoints = 0;
  private _msBeforeNext = 0;
  private _consumedPoints = 0;
  private _isFirstInDuration = false;

  constructor(remainingPoints?: number, msBeforeNext?: number, consumedPoints?: number, isFirstInDuration?: boolean) {
    this.remainingPoints = remainingPoints ?? 0;
    this.msBeforeNext = msBeforeNext ?? 0;
    this.consumedPoints = consumedPoints ?? 0;
    this.isFirstInDuration = isFirstInDuration ?? false;
  }

  get msBeforeNext(): number {
    return this._msBeforeNext;
  }
  set msBeforeNext(ms: number) {
    this._msBeforeNext = ms;
  }
  get remainingPoints(): number {
    return this._remainingPoints;
  }
  set remainingPoints(points: number) {
    this._remainingPoints = points;
  }
  get consumedPoints(): number {
    return this._consumedPoints;
  }
  set consumedPoints(points: number) {
    this._consumedPoints = points;
  }
  get isFirstInDuration(): boolean {
    return this._isFirstInDuration;
  }
  set isFirstInDuration(value: boolean) {
    this._isFirstInDuration = Boolean(value);
  }

  private decorated(): Record<string, unknown> {
    return {
      remainingPoints: this.remainingPoints,
      msBeforeNext: this.msBeforeNext,
      consumedPoints: this.consumedPoints,
      isFirstInDuration: this.isFirstInDuration,
    };
  }
  [Symbol.for('nodejs.util.inspect.custom')](): Record<string, unknown> {
    return this.decorated();
  }
  toString(): string {
    return JSON.stringify(this.decorated());
  }
  toJSON(): Record<string, unknown> {
    return this.decorated();
  }
}

/** The answer's class: rate-limiter-flexible's own when it is installed (so `instanceof` works across both). */
export const RateLimiterRes: typeof Res = PEER?.RateLimiterRes ?? Res;
export type RateLimiterRes = Res;

/** rate-limiter-flexible's `RateLimiterQueueError` when installed, else one of the same name and fields. */
class QueueError extends Error {
  extra?: unknown;
  constructor(message: string, extra?: unknown) {
    super(message);
    this.name = 'CustomError';
    if (extra) this.extra = extra;
  }
}
export const RateLimiterQueueError: typeof QueueError = PEER?.RateLimiterQueueError ?? QueueError;

/** What the methods of a limiter given as `insuranceLimiter` are (any rate-limiter-flexible limiter). */
export interface Limiter {
  keyPrefix: string;
  points: number;
  blockDuration: number;
  execEvenly: boolean;
  consume(key: string | number, points?: number, options?: object): Promise<any>;
  penalty(key: string | number, points?: number, options?: object): Promise<any>;
  reward(key: string | number, points?: number, options?: object): Promise<any>;
  get(key: string | number, options?: object): Promise<any>;
  set(key: string | number, points: number, secDuration: number, options?: object): Promise<any>;
  block(key: string | number, secDuration: number, options?: object): Promise<any>;
  delete(key: string | number, options?: object): Promise<any>;
}

export interface RateLimiterRedisOptions {
  /** An ioredis `Redis`/`Cluster` or a node-redis client/cluster. */
  storeClient: unknown;
  keyPrefix?: string;
  points: number;
  /** Seconds (0: a counter that never ends). */
  duration: number;
  blockDuration?: number;
  execEvenly?: boolean;
  execEvenlyMinDelayMs?: number;
  blockOnConsumed?: number;
  inMemoryBlockOnConsumed?: number;
  inMemoryBlockDuration?: number;
  insuranceLimiter?: Limiter;
  rejectIfRedisNotReady?: boolean;
  /** Accepted for compatibility: the client's kind is found by itself. */
  useRedisPackage?: boolean;
  /** The original's increment script replaced by the application's: run as given, with the original's arguments. */
  customIncrTtlLuaScript?: string;
}

export interface ConsumeOptions {
  /** Seconds: this call's duration instead of the limiter's. */
  customDuration?: number;
}

/**
 * The fallback's counting, as the original's script counts: add `ARGV[1]`; a counter with no TTL gets `ARGV[2]` ms
 * (none when 0); with `ARGV[3]` (a max) and `ARGV[4]` (a block in ms), the call that takes the counter from at most
 * max to over it sets the TTL to the block. Replies `{counter, ttl}`.
 */
const COUNT = new Script(`local n = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
local period = tonumber(ARGV[2])
if ttl == -1 and period > 0 then
  redis.call('pexpire', KEYS[1], period)
  ttl = period
end
if ARGV[3] ~= '' then
  local max = tonumber(ARGV[3])
  if n > max and n - tonumber(ARGV[1]) <= max then
    redis.call('pexpire', KEYS[1], ARGV[4])
    ttl = tonumber(ARGV[4])
  end
end
return {n, ttl}`);

class BlockedKeys {
  private readonly keys = new Map<string, number>();
  addMs(key: string, ms: number): void {
    this.keys.set(key, Date.now() + ms);
    if (this.keys.size > 999) {
      const now = Date.now();
      for (const [k, at] of this.keys) if (at <= now) this.keys.delete(k);
    }
  }
  msBeforeExpire(key: string): number {
    const at = this.keys.get(key);
    const now = Date.now();
    return at && at >= now ? at - now : 0;
  }
  delete(key?: string): void {
    if (key === undefined) this.keys.clear();
    else this.keys.delete(key);
  }
}

const Compatible: new () => object = PEER?.RateLimiterCompatibleAbstract ?? class {};

type Settle = (value: unknown) => void;

/**
 * rate-limiter-flexible's `RateLimiterRedis`, counted by the module (see the file's comment). Where the
 * peer library is installed, it is one of its `RateLimiterCompatibleAbstract`s (so its wrappers accept it).
 */
export class RateLimiterRedis extends Compatible implements Limiter {
  private _points = 0;
  private _duration = 0;
  private _blockDuration = 0;
  private _execEvenly = false;
  private _execEvenlyMinDelayMs: number | undefined;
  private _keyPrefix = 'rlflx';
  private _blockOnConsumed = 0;
  private _inMemoryBlockOnConsumed = 0;
  private _inMemoryBlockDuration = 0;
  private _insuranceLimiter: Limiter | undefined;
  private readonly _inMemoryBlockedKeys = new BlockedKeys();
  private readonly rejectIfRedisNotReady: boolean;
  private readonly customScript: Script | undefined;
  readonly client: any;
  /** The adapter's connection to the client. */
  readonly connection: Connection;
  private readonly send: Send;

  constructor(opts: RateLimiterRedisOptions) {
    super();
    const options = (opts ?? {}) as RateLimiterRedisOptions;
    this.points = options.points;
    this.duration = options.duration;
    this.blockDuration = options.blockDuration as number;
    this.execEvenly = options.execEvenly as boolean;
    this.execEvenlyMinDelayMs = options.execEvenlyMinDelayMs;
    this.keyPrefix = options.keyPrefix as string;
    this.blockOnConsumed = options.blockOnConsumed as number;
    this.inMemoryBlockOnConsumed = options.inMemoryBlockOnConsumed as number;
    this.inMemoryBlockDuration = options.inMemoryBlockDuration as number;
    this.insuranceLimiter = options.insuranceLimiter;
    if (options.storeClient === undefined) throw new Error('storeClient is not set');
    this.client = options.storeClient;
    this.connection = connectionOf(this.client);
    this.send = (args, keyAt) => this.connection.send(args, keyAt);
    this.rejectIfRedisNotReady = !!options.rejectIfRedisNotReady;
    this.customScript = options.customIncrTtlLuaScript ? new Script(options.customIncrTtlLuaScript) : undefined;
  }

  // ------------------------------------------------------------------------------------------------ options

  get points(): number {
    return this._points;
  }
  set points(value: number) {
    if (!Number.isFinite(value)) throw new Error('points must be set and must be a finite number');
    this._points = value;
  }
  get duration(): number {
    return this._duration;
  }
  set duration(value: number) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new Error('duration must be set and must be a finite, non-negative number');
    }
    this._duration = value;
  }
  get msDuration(): number {
    return this.duration * 1000;
  }
  get blockDuration(): number {
    return this._blockDuration;
  }
  set blockDuration(value: number) {
    this._blockDuration = value === undefined ? 0 : value;
  }
  get msBlockDuration(): number {
    return this.blockDuration * 1000;
  }
  get execEvenly(): boolean {
    return this._execEvenly;
  }
  set execEvenly(value: boolean) {
    this._execEvenly = value === undefined ? false : Boolean(value);
  }
  get execEvenlyMinDelayMs(): number {
    if (this._execEvenlyMinDelayMs !== undefined) return this._execEvenlyMinDelayMs;
    return this.points > 0 ? Math.ceil(this.msDuration / this.points) : 0;
  }
  set execEvenlyMinDelayMs(value: number | undefined) {
    this._execEvenlyMinDelayMs = value;
  }
  get keyPrefix(): string {
    return this._keyPrefix;
  }
  set keyPrefix(value: string) {
    const prefix = value === undefined ? 'rlflx' : value;
    if (typeof prefix !== 'string') throw new Error('keyPrefix must be string');
    this._keyPrefix = prefix;
  }
  get blockOnConsumed(): number {
    return this._blockOnConsumed;
  }
  set blockOnConsumed(value: number) {
    this._blockOnConsumed = value ? parseInt(String(value), 10) : 0;
    if (this._blockOnConsumed > 0 && this.points > this._blockOnConsumed) {
      throw new Error('blockOnConsumed option must be greater or equal "points" option');
    }
  }
  get inMemoryBlockOnConsumed(): number {
    return this._inMemoryBlockOnConsumed;
  }
  set inMemoryBlockOnConsumed(value: number) {
    this._inMemoryBlockOnConsumed = value ? parseInt(String(value), 10) : 0;
    if (this._inMemoryBlockOnConsumed > 0 && this.points > this._inMemoryBlockOnConsumed) {
      throw new Error('inMemoryBlockOnConsumed option must be greater or equal "points" option');
    }
  }
  get inMemoryBlockDuration(): number {
    return this._inMemoryBlockDuration;
  }
  set inMemoryBlockDuration(value: number) {
    this._inMemoryBlockDuration = value ? parseInt(String(value), 10) : 0;
    if (this._inMemoryBlockDuration > 0 && this._inMemoryBlockOnConsumed === 0) {
      throw new Error('inMemoryBlockOnConsumed option must be set up');
    }
  }
  get msInMemoryBlockDuration(): number {
    return this._inMemoryBlockDuration * 1000;
  }
  get insuranceLimiter(): Limiter | undefined {
    return this._insuranceLimiter;
  }
  set insuranceLimiter(value: Limiter | undefined) {
    if (value !== undefined && !isLimiter(value)) {
      throw new Error('insuranceLimiter must be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
    }
    this._insuranceLimiter = value;
    if (value) {
      value.blockDuration = this.blockDuration;
      value.execEvenly = this.execEvenly;
    }
  }

  getKey(key: string | number): string {
    return this.keyPrefix.length > 0 ? `${this.keyPrefix}:${key}` : String(key);
  }
  parseKey(rlKey: string): string {
    return this.keyPrefix.length > 0 ? rlKey.substring(this.keyPrefix.length + 1) : rlKey;
  }
  getInMemoryBlockMsBeforeExpire(rlKey: string): number {
    return this.inMemoryBlockOnConsumed > 0 ? this._inMemoryBlockedKeys.msBeforeExpire(rlKey) : 0;
  }
  deleteInMemoryBlockedAll(): void {
    this._inMemoryBlockedKeys.delete();
  }

  // ------------------------------------------------------------------------------------------------ methods

  /** Consumes `points` (default 1): resolves a `RateLimiterRes`, rejects one when over `points`. */
  consume(key: string | number, pointsToConsume: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return this.operation('consume', [key, pointsToConsume, options], () => this._consume(key, pointsToConsume, options));
  }
  /** Adds `points` (default 1) without refusing. */
  penalty(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return this.operation('penalty', [key, points, options], () => this.change(key, points, options));
  }
  /** Takes `points` (default 1) back. */
  reward(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return this.operation('reward', [key, points, options], () => this.change(key, -points, options));
  }
  /** The key's state, or null without it. */
  get(key: string | number, options: object = {}): Promise<Res | null> {
    return this.operation('get', [key, options], async () => {
      this.checkReady();
      const [value, ttl] = await readCounter(this.send, this.getKey(key));
      return value === null ? null : this.res(0, Number.parseInt(value, 10), ttl);
    });
  }
  /** Sets the key to `points` for `secDuration` seconds (the limiter's duration when negative; 0: forever). */
  set(key: string | number, points: number, secDuration: number, options: object = {}): Promise<Res> {
    const msDuration = (secDuration >= 0 ? secDuration : this.duration) * 1000;
    return this.operation('set', [key, points, secDuration, options], () => this.store(this.getKey(key), points, msDuration, options, 'set'));
  }
  /** Blocks the key for `secDuration` seconds. */
  block(key: string | number, secDuration: number, options: object = {}): Promise<Res> {
    return this.operation('block', [key, secDuration, options], () => this.store(this.getKey(key), this.blockedPoints(), secDuration * 1000, options, 'block'));
  }
  /** Deletes the key: true when it was there. */
  delete(key: string | number, options: object = {}): Promise<boolean> {
    return this.operation('delete', [key, options], async () => {
      const rlKey = this.getKey(key);
      const deleted = Number(await this.send(['DEL', rlKey])) > 0;
      this._inMemoryBlockedKeys.delete(rlKey);
      return deleted;
    });
  }

  /** Runs `run`; an error that is not a `RateLimiterRes` goes to the insurance limiter's `name` when there is one. */
  private async operation<T>(name: keyof Limiter, params: unknown[], run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      return this.handleError(error, name, params) as T;
    }
  }

  private handleError(error: unknown, name: keyof Limiter, params: unknown[]): Promise<unknown> {
    if (error instanceof RateLimiterRes || error instanceof Res || !this.insuranceLimiter) throw error;
    return (this.insuranceLimiter[name] as (...args: unknown[]) => Promise<unknown>)(...params);
  }

  private blockOnConsumedEnabled(): boolean {
    return this.blockOnConsumed > 0 && this.blockOnConsumed > this.points;
  }
  private blockedPoints(): number {
    return this.blockOnConsumedEnabled() ? this.blockOnConsumed : this.points + 1;
  }
  private crossedBlockThreshold(consumed: number, changed: number): boolean {
    if (!this.blockOnConsumedEnabled()) return consumed > this.points && consumed <= this.points + changed;
    return consumed >= this.blockOnConsumed && consumed - changed < this.blockOnConsumed;
  }

  private secDuration(options: ConsumeOptions | undefined): number {
    return options && (options.customDuration as number) >= 0 ? (options.customDuration as number) : this.duration;
  }

  private checkReady(): void {
    if (!this.rejectIfRedisNotReady) return;
    const client = this.client;
    let ready = true;
    if (typeof client.status === 'string') ready = client.status === 'ready';
    else if (typeof client.isReady === 'boolean') ready = client.isReady;
    else if (typeof client.isOpen === 'boolean') ready = client.isOpen;
    if (!ready) throw new Error('Redis connection is not ready');
  }

  static checkPoints(points: unknown): void {
    if (typeof points === 'string') {
      if (!/^[1-9][0-9]*$/.test(points)) {
        throw new Error('Consuming string different than integer values is not supported by this package');
      }
    } else if (!Number.isInteger(points)) {
      throw new Error('Consuming decimal number of points is not supported by this package');
    }
  }

  /**
   * The threshold over which the call that crosses it blocks the key, when the server can set the block in the
   * same command as the original's second one would (an integer threshold, a block of whole seconds, and no
   * in-memory block that would stand in for it).
   */
  private serverBlock(): { max: number; blockMs: number } | undefined {
    if (!(this.blockDuration > 0)) return undefined;
    if (this.inMemoryBlockOnConsumed > 0) return undefined;
    const max = this.blockOnConsumedEnabled() ? this.blockOnConsumed - 1 : this.points;
    const seconds = Math.floor(this.msBlockDuration / 1000);
    if (!Number.isSafeInteger(max) || max < 0 || seconds < 1) return undefined;
    return { max, blockMs: seconds * 1000 };
  }

  /** Adds `points` to the key's counter: `[counter, ttl ms]`, in one command. */
  async count(rlKey: string, points: number, msDuration: number, block?: { max: number; blockMs: number }): Promise<[number, number]> {
    RateLimiterRedis.checkPoints(points);
    this.checkReady();
    const secDuration = Math.floor(msDuration / 1000);
    const cost = Number(points);
    if (this.customScript) {
      if (secDuration > 0) {
        return pair(await this.customScript.run(this.send, [rlKey], [String(points), String(secDuration), String(this.points), String(this.duration)]));
      }
      return pair(await COUNT.run(this.send, [rlKey], [cost, 0, '', '']));
    }
    const options: FixedOptions = { cost };
    if (block) Object.assign(options, { max: block.max, over: { block: block.blockMs } });
    const script = (): Promise<unknown> =>
      COUNT.run(this.send, [rlKey], [cost, secDuration * 1000, block ? block.max : '', block ? block.blockMs : '']);
    // A window past the module's 100 years goes as the script.
    if (secDuration * 1000 > MAX_PERIOD_MS || (block && block.blockMs > MAX_PERIOD_MS)) return pair(await script());
    const reply = await moduleOr(this.connection, this.send, fixedArgs(rlKey, secDuration * 1000, options), script);
    return pair(reply);
  }

  private res(changed: number, consumed: number, ttl: number): Res {
    const res = new RateLimiterRes();
    res.consumedPoints = consumed;
    res.isFirstInDuration = consumed === changed;
    res.remainingPoints = Math.max(this.points - consumed, 0);
    res.msBeforeNext = ttl;
    return res;
  }

  private async change(key: string | number, points: number, options: ConsumeOptions): Promise<Res> {
    const [consumed, ttl] = await this.count(this.getKey(key), points, this.secDuration(options) * 1000);
    return this.res(points, consumed, ttl);
  }

  private async store(rlKey: string, points: number, msDuration: number, options: object, name: 'set' | 'block'): Promise<Res> {
    try {
      await this.setCounter(rlKey, points, msDuration);
      return new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, points);
    } catch (error) {
      const params = name === 'set'
        ? [this.parseKey(rlKey), points, msDuration / 1000, options]
        : [this.parseKey(rlKey), msDuration / 1000, options];
      return this.handleError(error, name, params) as Promise<Res>;
    }
  }

  /** `SET key points [EX seconds]`, as the original stores a set or a block. */
  private async setCounter(rlKey: string, points: number, msDuration: number): Promise<void> {
    RateLimiterRedis.checkPoints(points);
    this.checkReady();
    const secDuration = Math.floor(msDuration / 1000);
    const args: Arg[] = ['SET', rlKey, points];
    if (secDuration > 0) args.push('EX', secDuration);
    await this.send(args);
  }

  private _consume(key: string | number, pointsToConsume: number, options: ConsumeOptions): Promise<Res> {
    return new Promise((resolve, reject) => {
      const rlKey = this.getKey(key);
      const inMemory = this.getInMemoryBlockMsBeforeExpire(rlKey);
      if (inMemory > 0) {
        reject(new RateLimiterRes(0, inMemory));
        return;
      }
      const block = this.serverBlock();
      this.count(rlKey, pointsToConsume, this.secDuration(options) * 1000, block)
        .then(([consumed, ttl]) => this.afterConsume(resolve as Settle, reject, rlKey, pointsToConsume, this.res(pointsToConsume, consumed, ttl), block !== undefined))
        .catch(reject);
    });
  }

  private afterConsume(resolve: Settle, reject: Settle, rlKey: string, changed: number, res: Res, blockedInServer: boolean): void {
    const consumed = res.consumedPoints;
    if (this.inMemoryBlockOnConsumed > 0 && !(this.inMemoryBlockDuration > 0) && consumed >= this.inMemoryBlockOnConsumed) {
      this._inMemoryBlockedKeys.addMs(rlKey, res.msBeforeNext);
      if (consumed > this.points) reject(res);
      else resolve(res);
    } else if (consumed > this.points) {
      let blocked: Promise<unknown> = Promise.resolve();
      if (this.blockDuration > 0 && this.crossedBlockThreshold(consumed, changed)) {
        res.msBeforeNext = this.msBlockDuration;
        if (!blockedInServer) blocked = this.store(rlKey, consumed, this.msBlockDuration, {}, 'block');
      }
      if (this.inMemoryBlockOnConsumed > 0 && consumed >= this.inMemoryBlockOnConsumed) {
        this._inMemoryBlockedKeys.addMs(rlKey, this.msInMemoryBlockDuration);
        res.msBeforeNext = this.msInMemoryBlockDuration;
      }
      blocked.then(() => reject(res), reject);
    } else if (this.execEvenly && this.points > 0 && res.msBeforeNext > 0 && !res.isFirstInDuration) {
      let delay = Math.ceil(res.msBeforeNext / (res.remainingPoints + 2));
      if (delay < this.execEvenlyMinDelayMs) delay = consumed * this.execEvenlyMinDelayMs;
      res.msBeforeNext = Math.max(res.msBeforeNext - delay, 0);
      setTimeout(resolve, delay, res);
    } else {
      resolve(res);
    }
  }
}

function isLimiter(value: unknown): value is Limiter {
  const limiter = value as Limiter;
  return !!limiter && ['consume', 'penalty', 'reward', 'get', 'set', 'block', 'delete']
    .every((name) => typeof (limiter as unknown as Record<string, unknown>)[name] === 'function');
}

// ---------------------------------------------------------------------------------------------- the queue

const MAX_QUEUE_SIZE = 4294967295;
const KEY_DEFAULT = 'limiter';

export interface QueueOptions {
  /** The most calls of this process that may wait on one key at once (default 4294967295). */
  maxQueueSize?: number;
}

export interface RemoveTokensOptions {
  /** Ends the wait early: the call rejects with the signal's reason, and nothing is taken. */
  signal?: AbortSignal;
}

/**
 * rate-limiter-flexible's `RateLimiterQueue` over a `RateLimiterRedis` of this package: `removeTokens` resolves the
 * points left once `tokens` fit in the limiter's window. Where the server has the module, the waiters queue in the
 * server (`RATE.FIXED … MAX points WAIT ms`, on a connection of their own), first come first served across every
 * process; without it, they queue in this process as the original's do.
 */
export class RateLimiterQueue {
  private readonly waiting = new Map<string, number>();
  private readonly local = new Map<string, Promise<unknown>>();
  private readonly maxQueueSize: number;

  /**
   * `limiter`: a `RateLimiterRedis` of this package (another rate-limiter-flexible limiter queues in this process,
   * as the library's queue does).
   */
  constructor(private readonly limiter: RateLimiterRedis, opts: QueueOptions = {}) {
    this.maxQueueSize = opts.maxQueueSize !== undefined ? opts.maxQueueSize : MAX_QUEUE_SIZE;
  }

  /** The points left in the key's window (all of them without a counter, or when it cannot be read). */
  async getTokensRemaining(key: string = KEY_DEFAULT): Promise<number> {
    try {
      const res = await this.limiter.get(key);
      return res !== null ? res.remainingPoints : this.limiter.points;
    } catch {
      return this.limiter.points;
    }
  }

  /**
   * Takes `tokens` from the key's window, waiting for room first come first served; `expiresUnixAt` (seconds
   * since the epoch, 0: none) ends the wait with a `RateLimiterQueueError`.
   */
  async removeTokens(tokens: number, key: string = KEY_DEFAULT, expiresUnixAt: number = 0, options: RemoveTokensOptions = {}): Promise<number> {
    const limiter = this.limiter;
    if (tokens > limiter.points) {
      throw new RateLimiterQueueError(`Requested tokens ${tokens} exceeds maximum ${limiter.points} tokens per interval`);
    }
    const queued = this.waiting.get(key) ?? 0;
    if (queued >= this.maxQueueSize) {
      throw new RateLimiterQueueError(`Number of requests reached it's maximum ${this.maxQueueSize}`);
    }
    RateLimiterRedis.checkPoints(tokens);
    this.waiting.set(key, queued + 1);
    try {
      const rlKey = limiter.getKey(key);
      const periodMs = Math.floor(limiter.duration) * 1000;
      const max = Math.max(0, Math.min(Math.floor(limiter.points), Number.MAX_SAFE_INTEGER));
      const waitMs = expiresUnixAt > 0 ? expiresUnixAt * 1000 - Date.now() : FOREVER;
      if (waitMs <= 0) throw expired();
      const args = [...fixedArgs(rlKey, periodMs, { cost: tokens, max }), 'WAIT', Math.ceil(Math.min(waitMs, FOREVER))];
      const undo = (): Promise<unknown> => limiter.count(rlKey, -tokens, periodMs);
      const connection = limiter.connection;
      if (!(limiter instanceof RateLimiterRedis) || hasModule(connection) === false) return await this.waitHere(key, tokens, expiresUnixAt, options.signal);
      let reply: unknown;
      try {
        reply = await connection.wait(args, rlKey, waitMs, { signal: options.signal, undo });
        learnModule(connection, true);
      } catch (error) {
        if (!isUnknownRecipe(error)) throw translate(error);
        learnModule(connection, false);
        return await this.waitHere(key, tokens, expiresUnixAt, options.signal);
      }
      if (reply === null || reply === undefined) throw expired();
      const [consumed] = pair(reply);
      return Math.max(limiter.points - consumed, 0);
    } finally {
      const left = (this.waiting.get(key) ?? 1) - 1;
      if (left > 0) this.waiting.set(key, left);
      else this.waiting.delete(key);
    }
  }

  /** Without the module: this process's waiters on a key take turns, each retrying when the window ends. */
  private waitHere(key: string, tokens: number, expiresUnixAt: number, signal?: AbortSignal): Promise<number> {
    const previous = this.local.get(key) ?? Promise.resolve();
    const turn = previous.then(async () => {
      for (;;) {
        if (signal?.aborted) throw abortReason(signal);
        if (expiresUnixAt > 0 && Math.floor(Date.now() / 1000) >= expiresUnixAt) throw expired();
        try {
          const res = await this.limiter.consume(key, tokens);
          return res.remainingPoints as number;
        } catch (rejection) {
          if (rejection instanceof Error) throw rejection;
          let pause = Math.max(1, (rejection as Res).msBeforeNext);
          if (expiresUnixAt > 0) pause = Math.max(1, Math.min(pause, expiresUnixAt * 1000 - Date.now()));
          await pauseFor(pause, signal);
        }
      }
    });
    const settled = turn.catch(() => undefined);
    this.local.set(key, settled);
    void settled.then(() => {
      if (this.local.get(key) === settled) this.local.delete(key);
    });
    return turn;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pauseFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

function expired(): Error {
  return new RateLimiterQueueError('The request to remove tokens expired before it could be fulfilled');
}

// ---------------------------------------------------------------------------------------------- the union

/**
 * rate-limiter-flexible's `RateLimiterUnion`, all or none: `consume(key, points)` counts `points` in every limiter
 * and resolves `{ [keyPrefix]: RateLimiterRes }`; when any limiter is over its points, the points are taken back
 * from every limiter and it rejects `{ [keyPrefix]: RateLimiterRes }` of those over (as counted, before the take
 * back). Each limiter keeps its own counter (what the original stores), so the limits are counted one command each
 * and given back by one command each on a refusal; the limiters' `blockDuration`, `execEvenly` and in-memory
 * blocks do not apply to a union's calls.
 */
export class RateLimiterUnion {
  private readonly limiters: Limiter[];

  constructor(...limiters: Limiter[]) {
    if (limiters.length < 1) throw new Error('RateLimiterUnion: at least one limiter have to be passed');
    for (const limiter of limiters) {
      if (!isLimiter(limiter)) {
        throw new Error('RateLimiterUnion: all limiters have to be instance of RateLimiterAbstract or RateLimiterCompatibleAbstract');
      }
    }
    this.limiters = limiters;
  }

  async consume(key: string | number, points: number = 1): Promise<Record<string, Res>> {
    const results = await Promise.all(this.limiters.map((limiter) => limiter.penalty(key, points)
      .then((res: Res) => ({ res, counted: true }), (error: unknown) => ({ res: error as Res, counted: false }))));
    const over = results.map(({ res, counted }, i) => !counted || !(res instanceof Object) || res.consumedPoints > this.limiters[i].points);
    const refused = over.some(Boolean);
    if (refused) {
      await Promise.all(this.limiters.map((limiter, i) => (results[i].counted ? limiter.reward(key, points).catch(() => undefined) : undefined)));
    }
    const out: Record<string, Res> = {};
    results.forEach(({ res }, i) => {
      if (!refused || over[i]) out[this.limiters[i].keyPrefix] = res;
    });
    if (refused) throw out;
    return out;
  }
}
