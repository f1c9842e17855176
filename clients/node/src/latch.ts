/** LATCH: a count-down latch that can expire (Redisson's `RCountDownLatch`). */
import { Arg, Connection, FOREVER, connectionOf } from './adapter';
import { send, sendWaiting } from './held';
import { ms, waitMs } from './reply';

/** Options of `CountDownLatch.wait`. */
export interface LatchWaitOptions {
  /** The most ms to wait (default: until the latch opens). */
  timeout?: number;
  /** Ends the wait early: the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * A latch at `key` that opens when its count reaches 0. `trySetCount(n)` arms it (only when it is not armed);
 * `countDown()` lowers the count; `wait()` resolves once the count is 0, waiting in the server (no polling) on a
 * connection of its own. The key is a plain string holding the count; a latch that reaches 0 is deleted, so a
 * missing latch is open and can be armed again. With a `ttl` the latch opens by itself when it ends.
 */
export class CountDownLatch {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** Arms the latch with `count` (at least 1), ending after `ttl` ms if given. False when armed already. */
  async trySetCount(count: number, options: { ttl?: number } = {}): Promise<boolean> {
    const words: Arg[] = ['LATCH.SET', this.key, count];
    if (options.ttl !== undefined) words.push('PX', ms(options.ttl, 'a ttl'));
    return Number(await send(this.connection, words)) === 1;
  }

  /** Lowers the count by `n` (at least 1), never below 0, and returns the count after it (0: open). */
  async countDown(n = 1): Promise<number> {
    return Number(await send(this.connection, ['LATCH.COUNTDOWN', this.key, n]));
  }

  /** The count (0 when the latch is open). */
  async count(): Promise<number> {
    return Number(await send(this.connection, ['LATCH.COUNT', this.key]));
  }

  /** True once the latch is open (at once when it is); false when `timeout` ms ran out first. */
  async wait(options: LatchWaitOptions = {}): Promise<boolean> {
    const timeout = options.timeout === undefined ? FOREVER : waitMs(options.timeout);
    const reply = await sendWaiting(this.connection, ['LATCH.WAIT', this.key, timeout], this.key, timeout, {
      signal: options.signal,
    });
    return reply !== null && reply !== undefined;
  }
}
