/** LOCK: the book's `AutoReleaseLock` and `IdentityLock`, on `LOCK.ACQUIRE` and `LOCK.RELEASEIF`. */
import { randomUUID } from 'node:crypto';
import { Arg, Connection, connectionOf } from './adapter';
import { send, sendWaiting } from './held';
import { ms, waitMs } from './reply';

/**
 * The book's lock that releases itself `timeout` seconds (or ms, with `unit` `'ms'`) after it was taken; only its
 * taker (this object's token) can release it early.
 */
export class AutoReleaseLock {
  private readonly connection: Connection;
  readonly token: string;

  constructor(client: unknown, readonly key: string, options: { token?: string } = {}) {
    this.connection = connectionOf(client);
    this.token = options.token ?? randomUUID();
  }

  /** True when taken, for `timeout` seconds (`unit` `'sec'`, the book's default) or ms; false while another holds it. */
  async acquire(timeout: number, unit: 'sec' | 'ms' = 'sec'): Promise<boolean> {
    if (unit !== 'sec' && unit !== 'ms') throw new TypeError('unit is "sec" or "ms"');
    const lease = unit === 'sec' ? ms(timeout * 1000, 'a timeout') : Math.max(1, Math.trunc(ms(timeout, 'a timeout')));
    const reply = await send(this.connection, ['LOCK.ACQUIRE', this.key, this.token, 'PX', lease, 'NX']);
    return reply !== null && reply !== undefined;
  }

  /** True when this token held the lock and released it. */
  async release(): Promise<boolean> {
    return Number(await send(this.connection, ['LOCK.RELEASEIF', this.key, this.token])) === 1;
  }
}

/** The book's lock whose value is its owner's password: only the same password releases it. */
export class IdentityLock {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /**
   * True when `password` now holds the lock. `wait`: the most ms to wait in the server's first-come-first-served
   * queue, on a connection of its own (default: one try); `signal` ends the wait early.
   */
  async acquire(password: string, options: { wait?: number; signal?: AbortSignal } = {}): Promise<boolean> {
    const words: Arg[] = ['LOCK.ACQUIRE', this.key, password, 'NX'];
    if (options.wait === undefined) {
      if (options.signal?.aborted) throw options.signal.reason;
      const reply = await send(this.connection, words);
      return reply !== null && reply !== undefined;
    }
    const wait = waitMs(options.wait);
    const reply = await sendWaiting(this.connection, [...words, 'WAIT', wait], this.key, wait, {
      signal: options.signal,
      undo: () => send(this.connection, ['LOCK.RELEASEIF', this.key, password]),
    });
    return reply !== null && reply !== undefined;
  }

  /** True when `password` held the lock and released it. */
  async release(password: string): Promise<boolean> {
    return Number(await send(this.connection, ['LOCK.RELEASEIF', this.key, password])) === 1;
  }
}
