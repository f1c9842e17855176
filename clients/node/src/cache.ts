/**
 * CACHE: the book's `Cache` (the built-in `SET`/`GET`), `JsonCache` (on `CACHE.SETJSON`, checked by the server, and
 * `CACHE.GETJSON`) and `HashCache` (a hash written with its TTL by `CACHE.HSET`).
 */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { asFields, ms, text } from './reply';

/** Text under a key, byte-exact (the built-in `SET`/`GET`). */
export class Cache {
  private readonly connection: Connection;

  constructor(client: unknown) {
    this.connection = connectionOf(client);
  }

  /** Stores `value`; `ttl` in ms (default: no TTL). */
  async set(key: string, value: Arg, options: { ttl?: number } = {}): Promise<void> {
    const words: Arg[] = ['SET', key, value];
    if (options.ttl !== undefined) words.push('PX', ms(options.ttl, 'a ttl'));
    await send(this.connection, words);
  }

  /** The value, or null. */
  async get(key: string): Promise<string | null> {
    return text(await send(this.connection, ['GET', key]));
  }

  /** Replaces the value and answers the old one (null if there was none). */
  async update(key: string, newValue: Arg): Promise<string | null> {
    return text(await send(this.connection, ['SET', key, newValue, 'GET']));
  }
}

/**
 * JavaScript values as JSON documents, checked and stored minified by the server (an invalid document throws
 * `InvalidJson`); `get` with fields answers only those top-level fields.
 */
export class JsonCache {
  private readonly connection: Connection;

  constructor(client: unknown) {
    this.connection = connectionOf(client);
  }

  /** Stores `value` as JSON (`JSON.stringify`); `ttl` in ms (default: no TTL). */
  async set(key: string, value: unknown, options: { ttl?: number } = {}): Promise<void> {
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError(`${typeof value} has no JSON form`);
    const words: Arg[] = ['CACHE.SETJSON', key, json];
    if (options.ttl !== undefined) words.push('PX', ms(options.ttl, 'a ttl'));
    await send(this.connection, words);
  }

  /** The value, or null when the key is missing; with `fields`, an object of only those top-level fields. */
  async get(key: string, ...fields: string[]): Promise<unknown> {
    const words: Arg[] = ['CACHE.GETJSON', key];
    if (fields.length) words.push('FIELD', ...fields);
    const document = text(await send(this.connection, words));
    return document === null ? null : JSON.parse(document);
  }
}

/** A hash, written together with its TTL (`CACHE.HSET`) when it has one. */
export class HashCache {
  private readonly connection: Connection;

  constructor(client: unknown) {
    this.connection = connectionOf(client);
  }

  /** Sets the fields (an object or a `Map`) and, with `ttl` (ms), the key's TTL in the same step. */
  async set(key: string, mapping: Record<string, Arg> | Map<string, Arg>, options: { ttl?: number } = {}):
    Promise<void> {
    const words: Arg[] = options.ttl === undefined ? ['HSET', key] : ['CACHE.HSET', key, 'PX', ms(options.ttl, 'a ttl')];
    const entries = mapping instanceof Map ? [...mapping] : Object.entries(mapping);
    for (const [field, value] of entries) words.push(field, value);
    await send(this.connection, words);
  }

  /** The fields as text, or null when the hash is gone (expired). */
  async get(key: string): Promise<Record<string, string> | null> {
    const fields: Record<string, string> = {};
    for (const [name, value] of asFields(await send(this.connection, ['HGETALL', key]))) {
      fields[name] = text(value) as string;
    }
    return Object.keys(fields).length ? fields : null;
  }
}
