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
import { RecipeError, isUnknownRecipe, translate } from './errors';
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
  /** Accepted for compatibility, as `useRedisPackage`. */
  useRedis3AndLowerPackage?: boolean;
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
  add(key: string, sec: number): void {
    this.addMs(key, sec * 1000);
  }
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
    if (key) this.keys.delete(key);
    else this.keys.clear();
  }
}

const Compatible: new () => object = PEER?.RateLimiterCompatibleAbstract ?? class {};

type Settle = (value: unknown) => void;

/**
 * The error a call rejects with: the client's own (ioredis's `ReplyError`, node-redis's `ErrorReply`), as the
 * original's calls reject, where the module's error was given a class of this package (`WrongType`…).
 */
function clientError(error: unknown): unknown {
  return error instanceof RecipeError && error.cause instanceof Error ? error.cause : error;
}

/** `_upsert` results whose counting call also set `blockDuration`'s block in the server (no `_block` follows). */
const BLOCKED_IN_SERVER = new WeakSet<object>();

/**
 * rate-limiter-flexible's `RateLimiterRedis`, counted by the module (see the file's comment). Where the
 * peer library is installed, it is one of its `RateLimiterCompatibleAbstract`s (so its wrappers accept it).
 *
 * Its methods call one another as the original's do (`consume` → `_consume` → `_upsert`, then `_afterConsume` →
 * `_block`; `get` → `_get`; `set` → `_set`; `delete` → `_delete`; a store error → `_handleError`), with the same
 * arguments and results, so a subclass (or a test's stub) that replaces one of them keeps working. Where `_upsert`
 * and `_block` are this class's own, the consume that first goes over the points sets the block in its own command.
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
  readonly _inMemoryBlockedKeys = new BlockedKeys();
  /** `rejectIfRedisNotReady`: a call rejects at once while the client is not ready (see `_isRedisReady`). */
  _rejectIfRedisNotReady: boolean;
  /** The `useRedisPackage` option, as the original keeps it (the client's kind is found by itself here). */
  useRedisPackage: boolean;
  useRedis3AndLowerPackage: boolean | undefined;
  private readonly customScript: Script | undefined;
  readonly client: any;
  private adapted: Connection | undefined;
  private readonly send: Send = (args, keyAt) => this.connection.send(args, keyAt);

  constructor(opts: RateLimiterRedisOptions) {
    super();
    const options = (opts ?? {}) as RateLimiterRedisOptions;
    this.points = options.points;
    this.duration = options.duration;
    this.blockDuration = options.blockDuration as number;
    this.execEvenly = options.execEvenly as boolean;
    this.execEvenlyMinDelayMs = options.execEvenlyMinDelayMs;
    this.keyPrefix = options.keyPrefix as string;
    this.insuranceLimiter = options.insuranceLimiter;
    this.blockOnConsumed = options.blockOnConsumed as number;
    this.inMemoryBlockOnConsumed = options.inMemoryBlockOnConsumed as number;
    this.inMemoryBlockDuration = options.inMemoryBlockDuration as number;
    if (options.storeClient === undefined) throw new Error('storeClient is not set');
    this.client = options.storeClient;
    this._rejectIfRedisNotReady = !!options.rejectIfRedisNotReady;
    this.customScript = options.customIncrTtlLuaScript ? new Script(options.customIncrTtlLuaScript) : undefined;
    this.useRedisPackage = !!options.useRedisPackage || this.client.constructor.name === 'Commander';
    this.useRedis3AndLowerPackage = options.useRedis3AndLowerPackage;
  }

  /**
   * The adapter's connection to the client, made at the first command (as the original, the constructor takes any
   * object: a client it does not know rejects the calls that would use it).
   */
  get connection(): Connection {
    if (!this.adapted) this.adapted = connectionOf(this.client);
    return this.adapted;
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
    return this._operation('_consume', [key, pointsToConsume, options]) as Promise<Res>;
  }
  /** Adds `points` (default 1) without refusing. */
  penalty(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return this._operation('_penalty', [key, points, options]) as Promise<Res>;
  }
  /** Takes `points` (default 1) back. */
  reward(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return this._operation('_reward', [key, points, options]) as Promise<Res>;
  }
  /** The key's state, or null without it. */
  get(key: string | number, options: object = {}): Promise<Res | null> {
    const rlKey = this.getKey(key);
    return new Promise((resolve, reject) => {
      this._get(rlKey, options)
        .then((res) => resolve(res === null || res === undefined ? null : this._getRateLimiterRes(rlKey, 0, res)))
        .catch((error) => this._handleError(error, 'get', resolve as Settle, reject, [key, options]));
    });
  }
  /** Sets the key to `points` for `secDuration` seconds (the limiter's duration when negative; 0: forever). */
  set(key: string | number, points: number, secDuration: number, options: object = {}): Promise<Res> {
    const msDuration = (secDuration >= 0 ? secDuration : this.duration) * 1000;
    return this._set(this.getKey(key), points, msDuration, options);
  }
  /** Blocks the key for `secDuration` seconds. */
  block(key: string | number, secDuration: number, options: object = {}): Promise<Res> {
    return this._block(this.getKey(key), this._getBlockedPoints(), secDuration * 1000, options);
  }
  /** Deletes the key: true when it was there. */
  delete(key: string | number, options: object = {}): Promise<boolean> {
    const rlKey = this.getKey(key);
    return new Promise((resolve, reject) => {
      this._delete(rlKey, options)
        .then((deleted) => {
          this._inMemoryBlockedKeys.delete(rlKey);
          resolve(deleted);
        })
        .catch((error) => this._handleError(error, 'delete', resolve as Settle, reject, [key, options]));
    });
  }

  // -------------------------------------------------------------------------- the original's internal methods

  /** Runs the method `name` (`_consume`…); a store error goes to `_handleError` under the public method's name. */
  _operation(name: '_consume' | '_penalty' | '_reward', params: unknown[]): Promise<unknown> {
    const promise = (this[name] as (...args: unknown[]) => Promise<unknown>)(...params);
    return new Promise((resolve, reject) => {
      promise.then(resolve).catch((error) => this._handleError(error, name.slice(1) as keyof Limiter, resolve, reject, params));
    });
  }

  /** Rejects `error` (a `RateLimiterRes` always), or gives the call to the insurance limiter when there is one. */
  _handleError(error: unknown, name: keyof Limiter, resolve: Settle, reject: Settle, params: unknown[]): void {
    if (error instanceof RateLimiterRes || error instanceof Res || !isLimiter(this.insuranceLimiter)) {
      reject(clientError(error));
      return;
    }
    (this.insuranceLimiter[name] as (...args: unknown[]) => Promise<unknown>)(...params).then(resolve).catch(reject);
  }

  _consume(key: string | number, pointsToConsume: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    return new Promise((resolve, reject) => {
      const rlKey = this.getKey(key);
      const inMemory = this.getInMemoryBlockMsBeforeExpire(rlKey);
      if (inMemory > 0) {
        reject(new RateLimiterRes(0, inMemory));
        return;
      }
      const msDuration = this._getKeySecDuration(options) * 1000;
      const block = this.serverBlock();
      const counted = block
        ? this.count(rlKey, pointsToConsume, msDuration, block).then((result) => {
          BLOCKED_IN_SERVER.add(result);
          return result;
        })
        : this._upsert(rlKey, pointsToConsume, msDuration, false, options);
      counted
        .then((result) => this._afterConsume(resolve as Settle, reject, rlKey, pointsToConsume, result, options))
        .catch(reject);
    });
  }

  _penalty(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    const rlKey = this.getKey(key);
    return this._upsert(rlKey, points, this._getKeySecDuration(options) * 1000, false, options)
      .then((result) => this._getRateLimiterRes(rlKey, points, result));
  }

  _reward(key: string | number, points: number = 1, options: ConsumeOptions = {}): Promise<Res> {
    const rlKey = this.getKey(key);
    return this._upsert(rlKey, -points, this._getKeySecDuration(options) * 1000, false, options)
      .then((result) => this._getRateLimiterRes(rlKey, -points, result));
  }

  /** Sets the key to `points` for `msDuration` (none when under a second), as a block. */
  _block(rlKey: string, initPoints: number, msDuration: number, options: object = {}): Promise<Res> {
    return new Promise((resolve, reject) => {
      this._upsert(rlKey, initPoints, msDuration, true, options)
        .then(() => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, initPoints)))
        .catch((error) => this._handleError(error, 'block', resolve as Settle, reject, [this.parseKey(rlKey), msDuration / 1000, options]));
    });
  }

  /** Sets the key to `points` for `msDuration` (none when under a second). */
  _set(rlKey: string, points: number, msDuration: number, options: object = {}): Promise<Res> {
    return new Promise((resolve, reject) => {
      this._upsert(rlKey, points, msDuration, true, options)
        .then(() => resolve(new RateLimiterRes(0, msDuration > 0 ? msDuration : -1, points)))
        .catch((error) => this._handleError(error, 'set', resolve as Settle, reject, [this.parseKey(rlKey), points, msDuration / 1000, options]));
    });
  }

  /**
   * Adds `points` to the key's counter (its TTL set to `msDuration` when it has none), resolving `[counter, ttl ms]`;
   * with `forceExpire`, sets the counter to `points` with that TTL (`SET`), resolving `['OK', ttl ms]` (-1: none).
   */
  async _upsert(rlKey: string, points: number, msDuration: number, forceExpire: boolean = false, _options: object = {}): Promise<unknown[]> {
    if (forceExpire) {
      await this.setCounter(rlKey, points, msDuration);
      const secDuration = Math.floor(msDuration / 1000);
      return ['OK', secDuration > 0 ? secDuration * 1000 : -1];
    }
    return this.count(rlKey, points, msDuration);
  }

  /** The key's `[counter, ttl ms]`, or null without it. */
  async _get(rlKey: string, _options: object = {}): Promise<unknown[] | null> {
    if (!this._isRedisReady(rlKey, true)) throw new Error('Redis connection is not ready');
    const [value, ttl] = await readCounter(this.send, rlKey);
    return value === null ? null : [value, ttl];
  }

  /** Deletes the key: true when it was there. */
  async _delete(rlKey: string, _options: object = {}): Promise<boolean> {
    return Number(await this.send(['DEL', rlKey])) > 0;
  }

  /** A `RateLimiterRes` out of a store result: `[counter, ttl]` (or ioredis's `[[error, counter], [error, ttl]]`). */
  _getRateLimiterRes(_rlKey: string, changedPoints: number, result: unknown): Res {
    let [consumed, ttl] = result as unknown[];
    if (Array.isArray(consumed)) {
      consumed = consumed[1];
      ttl = (ttl as unknown[])[1];
    }
    const res = new RateLimiterRes();
    res.consumedPoints = parseInt(String(consumed), 10);
    res.isFirstInDuration = res.consumedPoints === changedPoints;
    res.remainingPoints = Math.max(this.points - res.consumedPoints, 0);
    res.msBeforeNext = ttl as number;
    return res;
  }

  /** After a consume's count: refuses past the points, blocks (`_block`), spreads calls (`execEvenly`). */
  _afterConsume(resolve: Settle, reject: Settle, rlKey: string, changedPoints: number, storeResult: unknown, options: object = {}): void {
    const res = this._getRateLimiterRes(rlKey, changedPoints, storeResult);
    const consumed = res.consumedPoints;
    if (this.inMemoryBlockOnConsumed > 0 && !(this.inMemoryBlockDuration > 0) && consumed >= this.inMemoryBlockOnConsumed) {
      this._inMemoryBlockedKeys.addMs(rlKey, res.msBeforeNext);
      if (consumed > this.points) reject(res);
      else resolve(res);
    } else if (consumed > this.points) {
      let blocked: Promise<unknown> = Promise.resolve();
      if (this.blockDuration > 0 && this._crossedBlockThreshold(consumed, changedPoints)) {
        res.msBeforeNext = this.msBlockDuration;
        if (!BLOCKED_IN_SERVER.has(storeResult as object)) blocked = this._block(rlKey, consumed, this.msBlockDuration, options);
      }
      if (this.inMemoryBlockOnConsumed > 0 && consumed >= this.inMemoryBlockOnConsumed) {
        this._inMemoryBlockedKeys.add(rlKey, this.inMemoryBlockDuration);
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

  /**
   * Whether the client is ready, as the original tells (when `rejectIfRedisNotReady` is set; always, else): an
   * ioredis client by its `status`, node-redis 3 by `isReady()`, node-redis 4 and later by `isReady`, a node-redis
   * cluster by `isOpen` and the readiness of the node serving the key; any other client is taken as ready.
   */
  _isRedisReady(rlKey: string, isReadonly: boolean): boolean {
    if (!this._rejectIfRedisNotReady) return true;
    const client = this.client;
    if (client.status) return client.status === 'ready';
    if (typeof client.isReady === 'function') return client.isReady();
    if (typeof client.isReady === 'boolean') return client.isReady === true;
    if (client._slots && typeof client._slots.getClient === 'function') {
      if (typeof client.isOpen === 'boolean' && client.isOpen !== true) return false;
      try {
        const slotClient = client._slots.getClient(rlKey, isReadonly);
        return !!slotClient && slotClient.isReady === true;
      } catch {
        return false;
      }
    }
    return true;
  }

  _getKeySecDuration(options: ConsumeOptions | undefined = {}): number {
    return options && (options.customDuration as number) >= 0 ? (options.customDuration as number) : this.duration;
  }
  _isBlockOnConsumedEnabled(): boolean {
    return this.blockOnConsumed > 0 && this.blockOnConsumed > this.points;
  }
  _crossedBlockThreshold(consumed: number, changed: number): boolean {
    if (!this._isBlockOnConsumedEnabled()) return consumed > this.points && consumed <= this.points + changed;
    return consumed >= this.blockOnConsumed && consumed - changed < this.blockOnConsumed;
  }
  _getBlockedPoints(): number {
    return this._isBlockOnConsumedEnabled() ? this.blockOnConsumed : this.points + 1;
  }

  // ------------------------------------------------------------------------------------------------ the module

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
   * same command as the original's second one would: `_upsert` and `_block` are this class's own (a subclass's or
   * a stub's are called as the original calls them), an integer threshold, a block of whole seconds, and no
   * in-memory block that would stand in for it.
   */
  private serverBlock(): { max: number; blockMs: number } | undefined {
    if (!(this.blockDuration > 0)) return undefined;
    if (this._upsert !== RateLimiterRedis.prototype._upsert || this._block !== RateLimiterRedis.prototype._block) return undefined;
    if (this.inMemoryBlockOnConsumed > 0) return undefined;
    const max = this._isBlockOnConsumedEnabled() ? this.blockOnConsumed - 1 : this.points;
    const seconds = Math.floor(this.msBlockDuration / 1000);
    if (!Number.isSafeInteger(max) || max < 0 || seconds < 1) return undefined;
    return { max, blockMs: seconds * 1000 };
  }

  /** Adds `points` to the key's counter: `[counter, ttl ms]`, in one command. */
  async count(rlKey: string, points: number, msDuration: number, block?: { max: number; blockMs: number }): Promise<[number, number]> {
    RateLimiterRedis.checkPoints(points);
    if (!this._isRedisReady(rlKey, false)) throw new Error('Redis connection is not ready');
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

  /** `SET key points [EX seconds]`, as the original stores a set or a block. */
  private async setCounter(rlKey: string, points: number, msDuration: number): Promise<void> {
    RateLimiterRedis.checkPoints(points);
    if (!this._isRedisReady(rlKey, false)) throw new Error('Redis connection is not ready');
    const secDuration = Math.floor(msDuration / 1000);
    const args: Arg[] = ['SET', rlKey, points];
    if (secDuration > 0) args.push('EX', secDuration);
    await this.send(args);
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
  /** Per key, this process's calls waiting (past their first try), which `maxQueueSize` bounds. */
  private readonly waiting = new Map<string, number>();
  /** Per key, the last call deciding whether it is served at once or waits (they decide in call order). */
  private readonly deciding = new Map<string, Promise<void>>();
  /** Per key, without the module: the last waiter's turn. */
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
   * since the epoch, 0: none) ends the wait with a `RateLimiterQueueError`. As the original's: a call is served at
   * once when it fits and no call of this process waits on the key before it; else it waits, and `maxQueueSize`
   * counts only the calls that wait. `tokens` of 0 or fewer (a reward) never wait.
   */
  async removeTokens(tokens: number, key: string = KEY_DEFAULT, expiresUnixAt: number = 0, options: RemoveTokensOptions = {}): Promise<number> {
    const limiter = this.limiter;
    if (tokens > limiter.points) {
      throw new RateLimiterQueueError(`Requested tokens ${tokens} exceeds maximum ${limiter.points} tokens per interval`);
    }
    if (tokens <= 0) return (await limiter.penalty(key, tokens)).remainingPoints as number;
    if (!(limiter instanceof RateLimiterRedis)) return this.waitHere(key, tokens, expiresUnixAt, options.signal);
    RateLimiterRedis.checkPoints(tokens);
    const connection = limiter.connection;
    if (hasModule(connection) === false) return this.waitHere(key, tokens, expiresUnixAt, options.signal);
    const signal = options.signal;
    const rlKey = limiter.getKey(key);
    const periodMs = Math.floor(limiter.duration) * 1000;
    const max = Math.max(0, Math.min(Math.floor(limiter.points), Number.MAX_SAFE_INTEGER));
    const command = fixedArgs(rlKey, periodMs, { cost: tokens, max });
    const undo = (): Promise<unknown> => limiter.count(rlKey, -tokens, periodMs);
    const left = (reply: unknown): number => Math.max(limiter.points - pair(reply)[0], 0);
    // This process's calls on the key decide one at a time, in call order (the original's go down one connection).
    const previous = this.deciding.get(key) ?? Promise.resolve();
    let decided: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => (decided = resolve));
    this.deciding.set(key, mine);
    let waits = false;
    try {
      await previous;
      if (signal?.aborted) throw abortReason(signal);
      if (!this.waiting.has(key)) {
        // The first try: served now, or refused without counting (`WAIT 1`: behind any waiter in the server).
        let reply: unknown;
        try {
          reply = await connection.wait([...command, 'WAIT', 1], rlKey, 1, { signal, undo });
          learnModule(connection, true);
        } catch (error) {
          if (!isUnknownRecipe(error)) throw clientError(translate(error));
          learnModule(connection, false);
          decided();
          return await this.waitHere(key, tokens, expiresUnixAt, signal);
        }
        if (reply !== null && reply !== undefined) return left(reply);
      }
      const queued = this.waiting.get(key) ?? 0;
      if (queued >= this.maxQueueSize) throw new RateLimiterQueueError(`Number of requests reached it's maximum ${this.maxQueueSize}`);
      const waitMs = expiresUnixAt > 0 ? expiresUnixAt * 1000 - Date.now() : FOREVER;
      if (waitMs <= 0) throw expired();
      this.waiting.set(key, queued + 1);
      waits = true;
      decided();
      let reply: unknown;
      try {
        reply = await connection.wait([...command, 'WAIT', Math.ceil(Math.min(waitMs, FOREVER))], rlKey, waitMs, { signal, undo });
      } catch (error) {
        throw clientError(translate(error));
      }
      if (reply === null || reply === undefined) throw expired();
      return left(reply);
    } finally {
      decided();
      if (this.deciding.get(key) === mine) this.deciding.delete(key);
      if (waits) this.unwait(key);
    }
  }

  private unwait(key: string): void {
    const left = (this.waiting.get(key) ?? 1) - 1;
    if (left > 0) this.waiting.set(key, left);
    else this.waiting.delete(key);
  }

  /**
   * Without the module, as the original's queue: a call tries at once when no call of this process waits on the
   * key; refused, it waits (when fewer than `maxQueueSize` do), and the waiters take turns, each retrying when the
   * window ends.
   */
  private async waitHere(key: string, tokens: number, expiresUnixAt: number, signal?: AbortSignal): Promise<number> {
    let until = 0;
    if (!this.waiting.has(key)) {
      if (signal?.aborted) throw abortReason(signal);
      try {
        return (await this.limiter.consume(key, tokens)).remainingPoints as number;
      } catch (rejection) {
        if (rejection instanceof Error) throw rejection;
        until = Date.now() + Math.max(1, (rejection as Res).msBeforeNext);
      }
    }
    const queued = this.waiting.get(key) ?? 0;
    if (queued >= this.maxQueueSize) throw new RateLimiterQueueError(`Number of requests reached it's maximum ${this.maxQueueSize}`);
    this.waiting.set(key, queued + 1);
    const previous = this.local.get(key) ?? Promise.resolve();
    const turn = previous.then(async () => {
      for (;;) {
        let pause = until - Date.now();
        if (expiresUnixAt > 0) pause = Math.min(pause, expiresUnixAt * 1000 - Date.now());
        if (pause > 0) await pauseFor(pause, signal);
        if (signal?.aborted) throw abortReason(signal);
        if (expiresUnixAt > 0 && Math.floor(Date.now() / 1000) >= expiresUnixAt) throw expired();
        try {
          const res = await this.limiter.consume(key, tokens);
          return res.remainingPoints as number;
        } catch (rejection) {
          if (rejection instanceof Error) throw rejection;
          until = Date.now() + Math.max(1, (rejection as Res).msBeforeNext);
        }
      }
    });
    const settled = turn.catch(() => undefined);
    this.local.set(key, settled);
    void settled.then(() => {
      if (this.local.get(key) === settled) this.local.delete(key);
    });
    try {
      return await turn;
    } finally {
      this.unwait(key);
    }
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
