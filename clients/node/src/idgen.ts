/** IDGEN: auto-increment ID generators (the book's `IdGenerator`), one per key or many in a hash. */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';

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
