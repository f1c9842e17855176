/** AUTOCOMPLETE: search-box suggestions (the book's chapter 16) on one key per subject. */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { ms, text } from './reply';

/** The largest `COUNT` of `AUTOCOMPLETE.HINT`: every entry. */
const ALL = 2147483647;

export type Content = string | Buffer;

/** A weight as the server parses it back exactly (JavaScript's shortest round-trip form). */
function weightOf(weight: number): string {
  return String(weight);
}

/**
 * Suggestions for a search box on `subject`: `feed(content)` counts what users typed, `hint(segment)` gives the
 * heaviest entries starting with `segment` (characters, so Chinese works), weight descending. Every entry is kept
 * once in one key, `AutoComplete:<subject>` (or `key`), so a feed is one command on one key; `feedex` gives the
 * entry a lifetime: it fades `ttl` ms after it was last fed with one. `feed`, `set` and `feedex` return nothing,
 * as the book's.
 */
export class AutoComplete {
  private readonly connection: Connection;
  readonly key: string;

  constructor(client: unknown, readonly subject: string, options: { key?: string } = {}) {
    this.connection = connectionOf(client);
    this.key = options.key ?? `AutoComplete:${subject}`;
  }

  /** Adds `weight` (default 1) to `content`'s weight, creating it. */
  async feed(content: Content, weight = 1): Promise<void> {
    await send(this.connection, ['AUTOCOMPLETE.FEED', this.key, content, weightOf(weight)]);
  }

  /**
   * The `num` (default 10) heaviest entries starting with `segment`, heaviest first (equal weights: content
   * descending), as the book's `ZRANGE … 0 num-1 REV` gives them: `num` 0 or below counts from the end (0: all of
   * them), and an empty segment has no table (none).
   */
  async hint(segment: Content, num = 10): Promise<string[]> {
    if (segment.length === 0) return [];
    const count = num > 0 ? num : ALL;
    const reply = await send(this.connection, ['AUTOCOMPLETE.HINT', this.key, segment, 'COUNT', count]);
    const found = (Array.isArray(reply) ? reply : []).map((entry) => text(entry) ?? '');
    // ZRANGE 0 num-1: the last -num entries left out.
    return num > 0 ? found : found.slice(0, Math.max(found.length + num, 0));
  }

  /** Gives `content` exactly `weight`. */
  async set(content: Content, weight: number): Promise<void> {
    await send(this.connection, ['AUTOCOMPLETE.SET', this.key, content, weightOf(weight)]);
  }

  /** `feed`, and the entry fades `ttl` ms (default 300,000: 5 minutes) from now unless fed again with one. */
  async feedex(content: Content, weight = 1, ttl = 300_000): Promise<void> {
    const words: Arg[] = ['AUTOCOMPLETE.FEED', this.key, content, weightOf(weight), 'PX', ms(ttl, 'a ttl')];
    await send(this.connection, words);
  }

  // Beyond the book.

  /** `content`'s weight, or null when it has none (or faded). */
  async weight(content: Content): Promise<number | null> {
    const reply = await send(this.connection, ['AUTOCOMPLETE.WEIGHT', this.key, content]);
    return reply === null || reply === undefined ? null : Number(text(reply));
  }

  /** Removes the entries; returns how many there were. */
  async remove(...contents: Content[]): Promise<number> {
    if (!contents.length) return 0;
    return Number(await send(this.connection, ['AUTOCOMPLETE.REMOVE', this.key, ...contents]));
  }

  /** The number of entries (faded ones not counted). */
  async count(): Promise<number> {
    return Number(await send(this.connection, ['AUTOCOMPLETE.CARD', this.key]));
  }
}
