/**
 * Circular queues (the book's chapter 30): `CircularQueue` on a plain list, as the book's, and
 * `UniqueCircularQueue` on the module's `UQUEUE.*` commands (one atomic command per call).
 */
import { Arg, Connection, connectionOf } from './adapter';
import { send, sendWaiting } from './held';
import { QueueWaitOptions, waitSeconds } from './queue';
import { text } from './reply';

/**
 * The book's circular queue at `key`, a plain list: `insert` pushes to the tail, `rotate` moves the head to the
 * tail and answers it (`LMOVE key key`; `BLMOVE` with a `timeout`). Items may repeat.
 */
export class CircularQueue {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** Pushes `items` to the tail (`RPUSH`); the queue's length. */
  async insert(...items: Arg[]): Promise<number> {
    return Number(await send(this.connection, ['RPUSH', this.key, ...items]));
  }

  /**
   * Removes `item` (`LREM`: every one with `count` 0, the first `count` from the head, or the last `-count` from
   * the tail); how many went.
   */
  async remove(item: Arg, count = 0): Promise<number> {
    return Number(await send(this.connection, ['LREM', this.key, count, item]));
  }

  /**
   * Moves the head to the tail and answers it; null when the queue is empty. With `timeout` (ms; 0: forever),
   * waits up to that long for an item (`BLMOVE`), null if none came.
   */
  async rotate(options: QueueWaitOptions = {}): Promise<string | null> {
    if (options.timeout === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return text(await send(this.connection, ['LMOVE', this.key, this.key, 'LEFT', 'RIGHT']));
    }
    const { bound, seconds } = waitSeconds(options.timeout);
    const words = ['BLMOVE', this.key, this.key, 'LEFT', 'RIGHT', seconds];
    return text(await sendWaiting(this.connection, words, this.key, bound, { signal: options.signal }));
  }

  /** The head, null when the queue is empty. */
  async front(): Promise<string | null> {
    return text(await send(this.connection, ['LINDEX', this.key, 0]));
  }

  /** The tail, null when the queue is empty. */
  async rear(): Promise<string | null> {
    return text(await send(this.connection, ['LINDEX', this.key, -1]));
  }

  /** How many items the queue holds. */
  async length(): Promise<number> {
    return Number(await send(this.connection, ['LLEN', this.key]));
  }
}

/**
 * The book's unique circular queue at `key`, on `UQUEUE.*` (data type `rr-uqueue`): no item twice; inserting a
 * queued item moves it to the tail. Each method is one command, O(1) but `items`. A queue left without items is
 * deleted; a missing key is an empty queue. A rotation that waits waits first come first served, on a connection
 * of its own.
 */
export class UniqueCircularQueue {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /**
   * Puts `items` at the tail in order, a queued one moved there; the queue's length. A `TypeError` (nothing sent)
   * when an item is given twice, as the book's refuses them.
   */
  async insert(...items: Arg[]): Promise<number> {
    if (new Set(items.map((item) => (Buffer.isBuffer(item) ? item.toString('latin1') : String(item)))).size
      !== items.length) {
      throw new TypeError('Input items must be unique!');
    }
    return Number(await send(this.connection, ['UQUEUE.INSERT', this.key, ...items]));
  }

  /** Removes `item`: 1, or 0 when it was not queued. */
  async remove(item: Arg): Promise<number> {
    return Number(await send(this.connection, ['UQUEUE.REMOVE', this.key, item]));
  }

  /**
   * Moves the head to the tail and answers it; null when the queue is empty. With `timeout` (ms; 0: forever),
   * waits up to that long for an item, null if none came.
   */
  async rotate(options: QueueWaitOptions = {}): Promise<string | null> {
    if (options.timeout === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      return text(await send(this.connection, ['UQUEUE.ROTATE', this.key]));
    }
    const { bound } = waitSeconds(options.timeout);
    const words = ['UQUEUE.ROTATE', this.key, 'WAIT', bound];
    return text(await sendWaiting(this.connection, words, this.key, bound, { signal: options.signal }));
  }

  /** The head, null when the queue is empty. */
  async front(): Promise<string | null> {
    return text(await send(this.connection, ['UQUEUE.FRONT', this.key]));
  }

  /** The tail, null when the queue is empty. */
  async rear(): Promise<string | null> {
    return text(await send(this.connection, ['UQUEUE.REAR', this.key]));
  }

  /** How many items the queue holds. */
  async length(): Promise<number> {
    return Number(await send(this.connection, ['UQUEUE.LEN', this.key]));
  }

  /** Every item, head first (O(N); not the book's). */
  async items(): Promise<string[]> {
    const reply = await send(this.connection, ['UQUEUE.ITEMS', this.key]);
    return ((reply as unknown[] | null) ?? []).map((item) => text(item) as string);
  }
}
