/**
 * A store for `@fastify/rate-limit` with the semantics of its `RedisStore`: a plain string counter with a TTL under
 * `nameSpace + key` (per route: `nameSpace + method + url + '-' + key`), counted by one `RATE.FIXED` per request
 * where the server has the module (`MAX max EXTEND` for `continueExceeding`, `MAX max BACKOFF` for
 * `exponentialBackoff`), and by a script of the same semantics where it has not (learned once per connection).
 *
 * The switch: `store: FastifyRateLimitStore.with(redis)` in place of `redis` (with `{ nameSpace }` when one is set).
 */
import { Connection, connectionOf } from './adapter';
import { RecipeError } from './errors';
import { FixedOptions, Script, Send, fixedArgs, fixedPeriod, moduleOr, pair, readCounter } from './fixed';

export interface FastifyStoreOptions {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
  /** An ioredis `Redis`/`Cluster` or a node-redis client/cluster. */
  redis?: unknown;
  /** The keys' prefix (default `fastify-rate-limit-`). */
  nameSpace?: string;
}

export interface FastifyStoreResult {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result: FastifyStoreResult | null) => void;

/**
 * The fallback's counting, as the plugin's script counts: INCR; a first hit (or, with `continueExceeding`, a count
 * over max) sets the TTL to the window; with `exponentialBackoff`, a count over max sets window × 2^(count − max −
 * 1), at most 2^53 − 1. Replies `{count, ttl}`.
 */
const INCREMENT = new Script(`local n = redis.call('INCR', KEYS[1])
local window = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
if n == 1 or (ARGV[3] == 'true' and n > max) then
  redis.call('PEXPIRE', KEYS[1], window)
elseif ARGV[4] == 'true' and n > max then
  window = math.min(window * (2 ^ (n - max - 1)), (2 ^ 53) - 1)
  redis.call('PEXPIRE', KEYS[1], window)
else
  window = redis.call('PTTL', KEYS[1])
end
return {n, window}`);

export class FastifyRateLimitStore {
  readonly continueExceeding: boolean;
  readonly exponentialBackoff: boolean;
  readonly key: string;
  readonly redis: unknown;
  private readonly connection: Connection;
  private readonly send: Send;

  /** A store class bound to `redis` (and `nameSpace`), for the plugin's `store` option. */
  static with(redis: unknown, options: { nameSpace?: string } = {}): new (params: FastifyStoreOptions) => FastifyRateLimitStore {
    return class extends FastifyRateLimitStore {
      constructor(params: FastifyStoreOptions = {}) {
        super({ ...params, redis: params.redis ?? redis, nameSpace: params.nameSpace ?? options.nameSpace });
      }
    };
  }

  constructor(options: FastifyStoreOptions) {
    this.continueExceeding = !!options.continueExceeding;
    this.exponentialBackoff = !!options.exponentialBackoff;
    if (!options.redis) throw new TypeError('redis-recipes: the store needs a client (FastifyRateLimitStore.with(redis))');
    this.redis = options.redis;
    this.key = options.nameSpace ?? 'fastify-rate-limit-';
    this.connection = connectionOf(options.redis);
    this.send = (args, keyAt) => this.connection.send(args, keyAt);
  }

  /** Counts a request of `key` in a window of `timeWindow` ms with `max` requests: `{ current, ttl }`. */
  incr(key: string, cb: Callback, timeWindow: number, max: number): void {
    // An error is the client's own (ioredis's `ReplyError`, node-redis's `ErrorReply`), as the plugin's store gives it.
    this.increment(this.key + key, Number(timeWindow), Number(max)).then((result) => cb(null, result), (error) => cb(clientError(error), null));
  }

  /** The key's count and TTL without counting (`{ current: 0, ttl: 0 }` without a window). */
  read(key: string, cb: Callback): void {
    readCounter(this.send, this.key + key).then(([value, ttl]) => {
      cb(null, value === null ? { current: 0, ttl: 0 } : { current: Number(value), ttl: Math.max(ttl, 0) });
    }, (error) => cb(error, null));
  }

  /** The store of a route with options of its own (its keys under the route's method and URL). */
  child(routeOptions: { continueExceeding?: boolean; exponentialBackoff?: boolean; routeInfo: { method: string; url: string } }): FastifyRateLimitStore {
    const Self = this.constructor as new (options: FastifyStoreOptions) => FastifyRateLimitStore;
    return new Self({
      continueExceeding: routeOptions.continueExceeding,
      exponentialBackoff: routeOptions.exponentialBackoff,
      redis: this.redis,
      nameSpace: `${this.key}${routeOptions.routeInfo.method}${routeOptions.routeInfo.url}-`,
    });
  }

  private async increment(key: string, timeWindow: number, max: number): Promise<FastifyStoreResult> {
    const script = (): Promise<unknown> => INCREMENT.run(this.send, [key], [timeWindow, max, String(this.continueExceeding), String(this.exponentialBackoff)]);
    // The module's counter needs a whole window of at most 100 years and a whole max; anything else goes as the script.
    const plain = fixedPeriod(timeWindow) && Number.isSafeInteger(max) && max >= 0;
    if (!plain) {
      const [current, ttl] = pair(await script());
      return { current, ttl };
    }
    const options: FixedOptions = {};
    if (this.continueExceeding) Object.assign(options, { max, over: 'EXTEND' });
    else if (this.exponentialBackoff) Object.assign(options, { max, over: 'BACKOFF' });
    const [current, ttl] = pair(await moduleOr(this.connection, this.send, fixedArgs(key, timeWindow, options), script));
    return { current, ttl };
  }
}

/** The client's own error where the module's was given a class of this package (`WrongType`…). */
function clientError(error: unknown): Error {
  return (error instanceof RecipeError && error.cause instanceof Error ? error.cause : error) as Error;
}
