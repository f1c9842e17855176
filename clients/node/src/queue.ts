/**
 * QUEUE: the book's first-in-first-out queues (chapter 27) on plain lists, the bounded ones pushing with the
 * module's `QUEUE.RPUSH` (one command: only what is kept is written, and what falls out is answered).
 */
import { Arg, Connection, FOREVER, connectionOf } from './adapter';
import { send, sendWaiting } from './held';
import { text, waitMs } from './reply';

/** Options of a call that may wait for an item (`dequeue`, `rotate`). */
export interface QueueWaitOptions {
  /**
   * Ms to wait for an item: undefined (the default) does not wait (the book's `NON_BLOCK`), 0 waits until one
   * comes (the book's), N > 0 waits at most N ms (null when none came). The wait runs on a connection of its own.
   */
  timeout?: number;
  /** Ends a wait early: the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** The client-side bound and the server's seconds of a wait of `timeout` ms (0: forever). */
export function waitSeconds(timeout: number): { bound: number; seconds: string } {
  if (timeout === 0) return { bound: FOREVER, seconds: '0' };
  const bound = waitMs(timeout);
  return { bound, seconds: String(bound / 1000) };
}

/**
 * A first-in-first-out queue on the list at `key`: `enqueue` pushes at the tail, `dequeue` pops from the head. The
 * key is a plain list, which `LRANGE`, `LLEN`, `BLPOP` and the book's own code read.
 */
export class FifoQueue {
  protected readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** Pushes one or more items; the queue's length after. */
  async enqueue(...items: Arg[]): Promise<number> {
    return Number(await send(this.connection, ['RPUSH', this.key, ...items]));
  }

  /** The oldest item, popped, or null when the queue is empty (see `QueueWaitOptions` for a wait). */
  async dequeue(options: QueueWaitOptions = {}): Promise<string | null> {
    if (options.timeout === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return text(await send(this.connection, ['LPOP', this.key]));
    }
    const { bound, seconds } = waitSeconds(options.timeout);
    const reply = await sendWaiting(this.connection, ['BLPOP', this.key, seconds], this.key, bound, {
      signal: options.signal,
      // An item popped as the abort came: back at the head, where it was.
      undo: (popped) => send(this.connection, ['LPUSH', this.key, (popped as Arg[])[1]]),
    });
    return Array.isArray(reply) ? text(reply[1]) : null;
  }

  /** How many items the queue holds. */
  async length(): Promise<number> {
    return Number(await send(this.connection, ['LLEN', this.key]));
  }
}

/**
 * A `FifoQueue` of at most `maxLength` items that refuses what does not fit: `enqueue` writes only the first items
 * that fit and answers how many (the rest are thrown away, as the book's are).
 */
export class FixedLengthQueue extends FifoQueue {
  constructor(client: unknown, key: string, readonly maxLength: number) {
    super(client, key);
  }

  /** Pushes the items that fit; how many were kept (0 when the queue is full). */
  override async enqueue(...items: Arg[]): Promise<number> {
    return Number(await send(this.connection, ['QUEUE.RPUSH', this.key, this.maxLength, 'REFUSE', ...items]));
  }
}

/** What `FadedQueue.enqueueEvicting` answers. */
export interface Evicting {
  /** How many of the new items were kept. */
  kept: number;
  /** The items that fell out, oldest first: the queue's own, then any of the new ones beyond `maxLength`. */
  evicted: string[];
}

/**
 * A `FifoQueue` of at most `maxLength` items whose oldest items fall out to make room: `enqueue` answers how many
 * of the new items were kept, `enqueueEvicting` also which items fell out.
 */
export class FadedQueue extends FifoQueue {
  constructor(client: unknown, key: string, readonly maxLength: number) {
    super(client, key);
  }

  /** Pushes the items, the oldest falling out beyond `maxLength`; how many of the new items were kept. */
  override async enqueue(...items: Arg[]): Promise<number> {
    return (await this.enqueueEvicting(...items)).kept;
  }

  /** As `enqueue`, and the items that fell out. */
  async enqueueEvicting(...items: Arg[]): Promise<Evicting> {
    const reply = await send(this.connection, ['QUEUE.RPUSH', this.key, this.maxLength, 'EVICT', ...items]);
    const [kept, evicted] = reply as [unknown, unknown[]];
    return { kept: Number(kept), evicted: (evicted ?? []).map((item) => text(item) as string) };
  }
}
