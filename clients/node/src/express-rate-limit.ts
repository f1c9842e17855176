/**
 * A `Store` for `express-rate-limit` taking `rate-limit-redis`'s options (`sendCommand` or `sendCommandCluster`,
 * `prefix`) with its results: a plain string counter with a TTL under `prefix + key`, counted by one `RATE.FIXED`
 * per request where the server has the module, and by a script of the same semantics where it has not (learned once
 * per store). `resetExpiryOnChange` (rate-limit-redis before 6) is accepted: every hit starts the window again.
 *
 * The switch: `import { RedisStore } from 'redis-recipes/express-rate-limit'` in place of `'rate-limit-redis'`.
 */
import { Arg, Reply } from './adapter';
import { RecipeError, WrongType } from './errors';
import { Script, Send, fixedArgs, fixedPeriod, moduleOr, pair, readCounter } from './fixed';

export interface SendCommandClusterDetails {
  key?: string;
  isReadOnly: boolean;
  command: string[];
}

export interface RedisStoreOptions {
  /** Sends a raw command: `(...args) => client.sendCommand(args)` (node-redis), `(c, ...a) => client.call(c, ...a)` (ioredis). */
  sendCommand?: (...args: string[]) => Promise<Reply> | Reply;
  /** node-redis cluster: `({ key, isReadOnly, command }) => cluster.sendCommand(key, isReadOnly, command)`. */
  sendCommandCluster?: (details: SendCommandClusterDetails) => Promise<Reply> | Reply;
  /** The keys' prefix (default `rl:`). */
  prefix?: string;
  /** Every hit starts the window again (rate-limit-redis 4 and 5's option). */
  resetExpiryOnChange?: boolean;
}

export interface ClientRateLimitInfo {
  totalHits: number;
  resetTime: Date | undefined;
}

/**
 * The fallback's counting, as rate-limit-redis's script counts: a counter without a live TTL starts again at 1 with
 * the window; else INCR (and, with `ARGV[2]` = 1, the window again). Replies `{hits, ttl}`.
 */
const INCREMENT = new Script(`local ttl = redis.call('PTTL', KEYS[1])
local window = tonumber(ARGV[1])
if ttl <= 0 then
  redis.call('SET', KEYS[1], 1, 'PX', window)
  return {1, window}
end
local hits = redis.call('INCR', KEYS[1])
if ARGV[2] == '1' then
  redis.call('PEXPIRE', KEYS[1], window)
  ttl = window
end
return {hits, ttl}`);

function info(hits: number, ttl: number): ClientRateLimitInfo {
  return { totalHits: hits, resetTime: new Date(Date.now() + ttl) };
}

export class RedisStore {
  readonly prefix: string;
  readonly resetExpiryOnChange: boolean;
  /** The window in ms, given by `init`. */
  windowMs = 60_000;
  private readonly send: Send;

  constructor(options: RedisStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('rate-limit-redis: Error: options object is required');
    }
    const hasSend = 'sendCommand' in options;
    const hasCluster = 'sendCommandCluster' in options;
    if (hasSend && !hasCluster) {
      const sendCommand = (options.sendCommand as (...args: string[]) => Reply).bind(this);
      this.send = async (args) => sendCommand(...args.map(String));
    } else if (!hasSend && hasCluster) {
      const sendCluster = (options.sendCommandCluster as (details: SendCommandClusterDetails) => Reply).bind(this);
      this.send = async (args, keyAt = 1) => {
        const command = args.map(String);
        const readOnly = command[0] === 'GET' || command[0] === 'PTTL';
        return sendCluster({ key: keyAt >= 0 ? command[keyAt] : undefined, isReadOnly: readOnly, command });
      };
    } else {
      throw new Error('rate-limit-redis: Error: options must include either sendCommand or sendCommandCluster (but not both)');
    }
    this.prefix = options.prefix ?? 'rl:';
    this.resetExpiryOnChange = !!options.resetExpiryOnChange;
  }

  prefixKey(key: string): string {
    return `${this.prefix}${key}`;
  }

  /** Takes the window from express-rate-limit's options. */
  async init(options: { windowMs: number }): Promise<void> {
    this.windowMs = options.windowMs;
  }

  /** The client's hits and the end of its window. */
  async get(key: string): Promise<ClientRateLimitInfo> {
    const [value, ttl] = await readCounter(this.send, this.prefixKey(key));
    return info(value === null ? 0 : Number.parseInt(value, 10), ttl);
  }

  /** Counts a hit: the hits in the window and its end. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    const rlKey = this.prefixKey(key);
    const windowMs = Number(this.windowMs);
    const script = (): Promise<Reply> => INCREMENT.run(this.send, [rlKey], [windowMs, this.resetExpiryOnChange ? '1' : '0']);
    // The module's counter needs a whole window of at most 100 years; anything else goes as the script.
    // A key of another type goes to the script, as rate-limit-redis's: replaced by a counter when it has no TTL, else
    // the error of its INCR. An error is what `sendCommand` threw (the client's own: ioredis's `ReplyError`,
    // node-redis's `ErrorReply`), as with rate-limit-redis.
    const reply = fixedPeriod(windowMs)
      ? await moduleOr(this, this.send, fixedArgs(rlKey, windowMs, { renew: this.resetExpiryOnChange }), script).catch((error) => {
        if (error instanceof WrongType) return script();
        throw clientError(error);
      })
      : await script();
    const [hits, ttl] = pair(reply);
    return info(hits, ttl);
  }

  /** Takes a hit back (`DECR`). */
  async decrement(key: string): Promise<void> {
    await this.send(['DECR', this.prefixKey(key)] as Arg[]);
  }

  /** Forgets the client (`DEL`). */
  async resetKey(key: string): Promise<void> {
    await this.send(['DEL', this.prefixKey(key)] as Arg[]);
  }
}

/** The client's own error where the module's was given a class of this package (`WrongType`…). */
function clientError(error: unknown): unknown {
  return error instanceof RecipeError && error.cause instanceof Error ? error.cause : error;
}

export default RedisStore;
