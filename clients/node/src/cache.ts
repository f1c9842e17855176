/** CACHE: the book's `JsonCache`, on `CACHE.SETJSON` (checked by the server) and `CACHE.GETJSON`. */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { ms, text } from './reply';

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
