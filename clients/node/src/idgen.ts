/**
 * IDGEN: auto-increment ID generators (the book's `IdGenerator`), one per key or many in a hash, and the book's
 * short-URL generator (`UrlShorty`).
 */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { text } from './reply';

/** The largest ID: 2**63 - 1. */
export const MAX_ID = 2n ** 63n - 1n;

/**
 * `count` consecutive IDs from `first` (a block to hand out locally): iterable, without holding every ID.
 * IDs are JavaScript numbers, exact up to `Number.MAX_SAFE_INTEGER` (2**53 - 1), as the clients read integers.
 */
export interface IdBlock extends Iterable<number> {
  readonly first: number;
  readonly last: number;
  readonly count: number;
}

function block(first: number, count: number): IdBlock {
  return {
    first,
    last: exact(first + (count - 1)),
    count,
    *[Symbol.iterator]() {
      for (let i = 0; i < count; i++) yield first + i;
    },
  };
}

/** `n` as an ID floor (0 to 2**63 - 1, a whole number, a bigint or its digits), so the counter stays an integer. */
function floor(n: number | bigint | string): string {
  let value: bigint | undefined;
  try {
    if (typeof n === 'number' ? Number.isSafeInteger(n) : typeof n === 'bigint' || /^[0-9]+$/.test(String(n))) {
      value = BigInt(n);
    }
  } catch {
    value = undefined;
  }
  if (value === undefined || value < 0n || value > MAX_ID) {
    throw new RangeError(`an ID floor is a whole number from 0 to 2**63 - 1, not ${String(n)}`);
  }
  return value.toString();
}

/**
 * An ID reply as a number, or a `RangeError` past `Number.MAX_SAFE_INTEGER`: the clients read integers as
 * JavaScript numbers, and two IDs past 2**53 may read the same (the ID is taken all the same).
 */
function exact(reply: unknown): number {
  const id = Number(reply);
  if (!Number.isSafeInteger(id)) {
    throw new RangeError(`ID ${String(reply)} is past Number.MAX_SAFE_INTEGER (2**53 - 1), where JavaScript numbers ` +
      'are not exact');
  }
  return id;
}

function count(n: number): number {
  if (!Number.isSafeInteger(n)) throw new RangeError(`a count of IDs is a whole number, not ${String(n)}`);
  return n;
}

/** What both generators share: a connection and a key, and `IDGEN.*` with or without `FIELD`. */
abstract class Generator {
  protected readonly connection: Connection;
  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  protected async next(field: Arg[], many?: number): Promise<number> {
    const words: Arg[] = ['IDGEN.NEXT', this.key, ...field];
    if (many !== undefined) words.push('COUNT', count(many));
    return exact(await send(this.connection, words));
  }
}

/**
 * IDs from a counter key, as `INCR` makes them; the key stays a plain integer that other clients may read.
 * `produce` and `reserve` are the book's; `produceMany`, `raiseFloor`, `current` and `assign` are beyond it.
 * IDs are numbers: one past `Number.MAX_SAFE_INTEGER` throws a `RangeError` (the server counts to 2**63 - 1).
 */
export class IdGenerator extends Generator {
  /** The next ID. */
  produce(): Promise<number> {
    return this.next([]);
  }

  /** `count` consecutive IDs at once (a block to hand out locally). */
  async produceMany(count: number): Promise<IdBlock> {
    return block(await this.next([], count), count);
  }

  /**
   * The book's: reserves the IDs up to `n` before the generator is first used. True when reserved, false when the
   * generator already has a value (nothing changes). `raiseFloor` works at any time.
   */
  async reserve(n: number | bigint | string): Promise<boolean> {
    return (await send(this.connection, ['SET', this.key, floor(n), 'NX'])) !== null;
  }

  /** Makes sure the IDs up to `n` are never handed out, at any time: true when raised, false when already there
   * (the server checks `n`). */
  async raiseFloor(n: number | bigint | string): Promise<boolean> {
    return Number(await send(this.connection, ['IDGEN.RESERVE', this.key, String(n)])) === 1;
  }

  /** The last ID handed out or reserved (0 when never used). */
  async current(): Promise<number> {
    return exact(await send(this.connection, ['IDGEN.CURRENT', this.key]));
  }

  /**
   * Get-or-create: the ID the hash `index` holds for `name`, else this generator's next ID, stored for `name` at
   * once (and `reverse`'s field ID set to `name` when given), in one atomic command (`IDGEN.ASSIGN`). The keys
   * must differ, and share a hash tag in a cluster.
   */
  async assign(index: string, name: Arg, options: { reverse?: string } = {}): Promise<number> {
    const words: Arg[] = ['IDGEN.ASSIGN', this.key, index, name];
    if (options.reverse !== undefined) words.push('REVERSE', options.reverse);
    return exact(await send(this.connection, words));
  }
}

/** Many generators in one hash, one field each (as `HINCRBY` makes them). `produce` and `reserve` are the book's. */
export class HashIdGenerator extends Generator {
  /** The next ID of generator `name`. */
  produce(name: string): Promise<number> {
    return this.next(['FIELD', name]);
  }

  /** `count` consecutive IDs of generator `name` at once. */
  async produceMany(name: string, count: number): Promise<IdBlock> {
    return block(await this.next(['FIELD', name], count), count);
  }

  /** The book's: true when the IDs up to `n` are reserved for `name`, false when it already has a value. */
  async reserve(name: string, n: number | bigint | string): Promise<boolean> {
    return Number(await send(this.connection, ['HSETNX', this.key, name, floor(n)])) === 1;
  }

  /** `IdGenerator.raiseFloor` for `name`: at any time, never lowering. */
  async raiseFloor(name: string, n: number | bigint | string): Promise<boolean> {
    return Number(await send(this.connection, ['IDGEN.RESERVE', this.key, String(n), 'FIELD', name])) === 1;
  }

  /** The last ID of generator `name` handed out or reserved (0 when never used). */
  async current(name: string): Promise<number> {
    return exact(await send(this.connection, ['IDGEN.CURRENT', this.key, 'FIELD', name]));
  }
}

/** The digits of a short ID, 0 to 61. */
export const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** `n` (0 or more) in base 62, digits `BASE62`, without leading zeros. */
export function toBase62(n: number | bigint): string {
  if (typeof n === 'number' && !Number.isSafeInteger(n)) throw new RangeError(`not a whole number: ${n}`);
  let value = BigInt(n);
  if (value < 0n) throw new RangeError(`a base-62 number is 0 or more, not ${String(n)}`);
  let digits = '';
  do {
    digits = BASE62[Number(value % 62n)] + digits;
    value /= 62n;
  } while (value > 0n);
  return digits;
}

/**
 * The number `toBase62` wrote as `short`, or null for any other text (empty, another character, a leading zero,
 * past 2**63 - 1).
 */
export function fromBase62(short: string): bigint | null {
  if (!short || (short[0] === '0' && short.length > 1) || short.length > 11) return null;
  let n = 0n;
  for (const char of short) {
    const digit = BASE62.indexOf(char);
    if (digit < 0) return null;
    n = n * 62n + BigInt(digit);
  }
  return n <= MAX_ID ? n : null;
}

/**
 * The book's short-URL generator: `shorten(url)` gives a short ID, `restore(shortId)` the URL back. A URL is
 * given its ID once (one atomic `IDGEN.ASSIGN`), so the same URL always gets the same short ID: an `IdGenerator`
 * counter's ID in base 62. The counter and the URL-to-ID and ID-to-URL hashes are `{key}:counter`, `{key}:ids` and
 * `{key}:urls`: one hash tag, so one slot in a cluster.
 */
export class UrlShorty {
  readonly counter: string;
  readonly ids: string;
  readonly urls: string;
  private readonly connection: Connection;
  private readonly generator: IdGenerator;

  constructor(client: unknown, readonly key = 'UrlShorty') {
    if (!key) throw new TypeError('UrlShorty needs a non-empty key');
    this.counter = `{${key}}:counter`;
    this.ids = `{${key}}:ids`;
    this.urls = `{${key}}:urls`;
    this.connection = connectionOf(client);
    this.generator = new IdGenerator(client, this.counter);
  }

  /** `url`'s short ID (the same every time for the same URL). */
  async shorten(url: string): Promise<string> {
    return toBase62(await this.generator.assign(this.ids, url, { reverse: this.urls }));
  }

  /** The URL `shortId` stands for, or null (an unknown or invalid short ID). */
  async restore(shortId: string): Promise<string | null> {
    const n = fromBase62(shortId);
    if (n === null) return null;
    return text(await send(this.connection, ['HGET', this.urls, n.toString()]));
  }
}
