/**
 * What the rate-limit drop-ins share: `RATE.FIXED` (a fixed-window counter, a plain string integer with a TTL, in
 * one module command), whether a server has the module (learned from the first answer, once per connection), and
 * the scripts that stand in for it on a server without the module.
 */
import { createHash } from 'node:crypto';
import { Arg, Reply } from './adapter';
import { isUnknownRecipe, translate } from './errors';

/** Sends one command (its key at `args[keyAt]`, 1 when not given). */
export type Send = (args: Arg[], keyAt?: number) => Promise<Reply>;

/** `RATE.FIXED`'s options beyond the period. */
export interface FixedOptions {
  cost?: number;
  max?: number;
  /** What a counter over `max` does to the TTL. */
  over?: { block: number } | 'EXTEND' | 'BACKOFF';
  renew?: boolean;
}

/** The longest window `RATE.FIXED` takes, in ms (100 years). */
export const MAX_PERIOD_MS = 36_525 * 86_400_000;

/** Whether `RATE.FIXED` takes `ms` as its period. */
export function fixedPeriod(ms: number): boolean {
  return Number.isInteger(ms) && ms > 0 && ms <= MAX_PERIOD_MS;
}

/** `RATE.FIXED key period …`'s words. */
export function fixedArgs(key: Arg, periodMs: number, options: FixedOptions = {}): Arg[] {
  const args: Arg[] = ['RATE.FIXED', key, periodMs];
  if (options.cost !== undefined && options.cost !== 1) args.push('COST', options.cost);
  if (options.max !== undefined) {
    args.push('MAX', options.max);
    const over = options.over;
    if (over === 'EXTEND' || over === 'BACKOFF') args.push(over);
    else if (over) args.push('BLOCK', over.block);
  }
  if (options.renew) args.push('RENEW');
  return args;
}

/** `[counter, ttl ms]` out of a reply of `RATE.FIXED` or of a script (numbers or numeric strings). */
export function pair(reply: Reply): [number, number] {
  if (!Array.isArray(reply) || reply.length < 2) throw new TypeError(`redis-recipes: unexpected reply ${String(reply)}`);
  return [Number(reply[0]), Number(reply[1])];
}

/** A Lua script run by `EVALSHA`, loaded by `EVAL` when the server does not know it yet. */
export class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  async run(send: Send, keys: Arg[], args: Arg[]): Promise<Reply> {
    const tail = [keys.length, ...keys, ...args];
    try {
      return await send(['EVALSHA', this.sha, ...tail], 3);
    } catch (error) {
      if (!/^NOSCRIPT/.test(String((error as Error)?.message))) throw error;
      return send(['EVAL', this.source, ...tail], 3);
    }
  }
}

/** Per connection (or send function): true once a module command was answered, false once it was unknown. */
const HAS_MODULE = new WeakMap<object, boolean>();

/** Whether `owner`'s server has the module, when known. */
export function hasModule(owner: object): boolean | undefined {
  return HAS_MODULE.get(owner);
}

/** Remembers whether `owner`'s server has the module. */
export function learnModule(owner: object, known: boolean): void {
  HAS_MODULE.set(owner, known);
}

/**
 * Sends `args` (a module command) unless `owner`'s server is known to lack the module; on a server without it,
 * runs `fallback` (the replaced library's semantics) instead, and remembers. A module's error comes out as its
 * class (see `errors.ts`).
 */
export async function moduleOr(owner: object, send: Send, args: Arg[], fallback: () => Promise<Reply>): Promise<Reply> {
  if (HAS_MODULE.get(owner) !== false) {
    try {
      const reply = await send(args, 1);
      HAS_MODULE.set(owner, true);
      return reply;
    } catch (error) {
      if (!isUnknownRecipe(error)) throw translate(error);
      HAS_MODULE.set(owner, false);
    }
  }
  return fallback();
}

/**
 * A counter's value and TTL in ms (`[null, -2]` without the key), read by `GET` and `PTTL` sent together: a key
 * that ended between the two reads as absent, as it would a moment later.
 */
export async function readCounter(send: Send, key: Arg): Promise<[string | null, number]> {
  const [value, ttl] = await Promise.all([send(['GET', key]), send(['PTTL', key])]);
  const pttl = Number(ttl);
  if (value === null || value === undefined || pttl === -2) return [null, -2];
  return [Buffer.isBuffer(value) ? value.toString() : String(value), pttl];
}
