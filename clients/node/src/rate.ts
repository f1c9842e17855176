/** RATE: rate limiters (the book's `RateLimiter`), GCRA or an exact sliding window, several limits at once. */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { ms, record } from './reply';

/** One decision, as `RATE.LIMIT` answers it (times in ms). */
export interface Decision {
  limited: boolean;
  /** `!limited`. */
  allowed: boolean;
  /** The deciding limit's burst (its max for a sliding window). */
  limit: number;
  /** Actions of cost 1 allowed now. */
  remaining: number;
  /** Ms until the action would be allowed (-1 when allowed). */
  retryAfterMs: number;
  /** Ms until every limit is full again. */
  resetAfterMs: number;
}

/** A limit besides the first: at most `max` actions per `interval` ms (bursts of `burst`, GCRA). */
export interface Limit {
  interval: number;
  max: number;
  burst?: number;
}

export interface RateLimiterOptions {
  /** More limits, checked with the first all at once (all or nothing). */
  also?: Limit[];
  /** How many actions an idle user may take at once (GCRA; default: `maximum`). */
  burst?: number;
  /** Counts an exact sliding window instead of GCRA. */
  sliding?: boolean;
}

const FIELDS = ['limited', 'limit', 'remaining', 'retry_after_ms', 'reset_after_ms'];

function decision(reply: unknown): Decision {
  const fields = record(reply, FIELDS);
  const values = FIELDS.map((name) => Number(fields.get(name)));
  const [limited, limit, remaining, retryAfterMs, resetAfterMs] = values;
  return { limited: limited === 1, allowed: limited !== 1, limit, remaining, retryAfterMs, resetAfterMs };
}

/**
 * At most `maximum` actions per `interval` ms for each user of an `action`, kept at
 * `RateLimiter:<action>:<uid>`. `isPermitted`, `remaining`, `duration` and `revoke` are the book's and return
 * what the book's do; `limit` and `peek` answer a `Decision`.
 */
export class RateLimiter {
  private readonly connection: Connection;
  readonly limits: Limit[];
  readonly sliding: boolean;

  constructor(client: unknown, readonly action: string, interval: number, maximum: number,
    options: RateLimiterOptions = {}) {
    this.connection = connectionOf(client);
    this.limits = [{ interval, max: maximum, burst: options.burst }, ...(options.also ?? [])];
    this.sliding = options.sliding ?? false;
  }

  /** The key of `uid`'s limiter. */
  key(uid: unknown): string {
    return `RateLimiter:${this.action}:${String(uid)}`;
  }

  private words(command: string, uid: unknown, cost: number): Arg[] {
    const words: Arg[] = [command, this.key(uid)];
    this.limits.forEach((limit, at) => {
      if (at) words.push('AND');
      words.push(limit.max, ms(limit.interval, 'an interval'));
      if (limit.burst !== undefined) words.push('BURST', limit.burst);
    });
    if (cost !== 1) words.push('COST', cost);
    if (this.sliding) words.push('SLIDING');
    return words;
  }

  /** Decides an action of weight `cost` and consumes it if allowed. */
  async limit(uid: unknown, cost = 1): Promise<Decision> {
    return decision(await send(this.connection, this.words('RATE.LIMIT', uid, cost)));
  }

  /** Whether an action would be allowed now, consuming nothing. */
  async peek(uid: unknown, cost = 1): Promise<Decision> {
    return decision(await send(this.connection, this.words('RATE.PEEK', uid, cost)));
  }

  /** The book's check: true (and counted) when the user may act now. */
  async isPermitted(uid: unknown): Promise<boolean> {
    return (await this.limit(uid)).allowed;
  }

  /** How many more actions the user may take now. */
  async remaining(uid: unknown): Promise<number> {
    return (await this.peek(uid)).remaining;
  }

  /** The book's: how many seconds (rounded up) until the user may act again, or null when the user may act now. */
  async duration(uid: unknown): Promise<number | null> {
    const peeked = await this.peek(uid);
    return peeked.limited ? Math.max(1, Math.ceil(peeked.retryAfterMs / 1000)) : null;
  }

  /** The book's: forgets the user's limiter (the next action starts from full limits). */
  async revoke(uid: unknown): Promise<void> {
    await send(this.connection, ['RATE.RESET', this.key(uid)]);
  }
}
