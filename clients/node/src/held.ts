/**
 * What a lock and a pool lease share: taking it for the length of a function (`using`) or of an `await using`
 * block (`hold`), the renewal that keeps its lease meanwhile, and learning that it was lost.
 */
import { Arg, Connection } from './adapter';
import { translate } from './errors';

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
