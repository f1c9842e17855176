/** ARTICLE: records created only if absent, with unique slugs and page views (the book's `Article`). */
import { Arg, Connection, connectionOf } from './adapter';
import { send } from './held';
import { asFields, text } from './reply';

const NUMBERS = ['created_at', 'updated_at', 'views'];

/** The fields of a hash reply as text (an empty object for a missing key). */
function textFields(reply: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of asFields(reply)) fields[name] = text(value) as string;
  return fields;
}

/** What `Article.update` changes (at least one). */
export interface ArticleChanges {
  title?: string;
  content?: string;
  author?: string;
}

/**
 * One article in one hash (`article::<id>`, as the book names it). With `slugIndex`, slugs are claimed in that
 * index; in Redis Cluster give the article and its index one hash tag (`{blog}article::1`, `{blog}slugs`).
 * `create`, `get`, `update` and `isExists` are the book's and answer what the book's do; `id` is the ID as text,
 * as the book keeps it. `record`, `setSlug`, `view` and `delete` are beyond it.
 */
export class Article {
  private readonly connection: Connection;
  /** The ID as text (the book's). */
  readonly id: string;
  readonly key: string;
  readonly slugIndex: string | undefined;

  constructor(client: unknown, articleId: unknown, options: { key?: string; slugIndex?: string } = {}) {
    this.connection = connectionOf(client);
    this.id = String(articleId);
    this.key = options.key ?? `article::${this.id}`;
    this.slugIndex = options.slugIndex;
  }

  private index(): string {
    if (this.slugIndex === undefined) throw new TypeError('this Article has no slugIndex');
    return this.slugIndex;
  }

  /**
   * True when created, false when the article already exists (nothing changes). A slug taken by another article
   * throws `SlugTaken`.
   */
  async create(title: string, content: string, author: string, slug?: string): Promise<boolean> {
    const words: Arg[] = ['ARTICLE.CREATE', this.key, title, content, author];
    if (slug !== undefined) words.push('SLUG', this.index(), slug);
    return Number(await send(this.connection, words)) === 1;
  }

  /**
   * The book's: `{ id: '10086', title, content, author, create_at: '1551199163.429' }`, the ID as text and
   * `create_at` the creation time in Unix seconds, as text like the book's `time()`. Without an article, only
   * `{ id }` (see `isExists()`). `record()` has every field the module keeps.
   */
  async get(): Promise<Record<string, string>> {
    const fields = textFields(await send(this.connection, ['HGETALL', this.key]));
    const article: Record<string, string> = { id: this.id };
    for (const name of ['title', 'content', 'author']) {
      if (name in fields) article[name] = fields[name];
    }
    if ('create_at' in fields) article.create_at = fields.create_at; // a hash the book's own code wrote
    else if ('created_at' in fields) article.create_at = seconds(fields.created_at);
    return article;
  }

  /** The book's: true when the article exists. */
  async isExists(): Promise<boolean> {
    return Number(await send(this.connection, ['HEXISTS', this.key, 'title'])) === 1;
  }

  /**
   * Beyond the book: every field the module keeps (`title`, `content`, `author`, `created_at`, and when set
   * `updated_at`, `slug`, `views`), times (Unix ms) and views as numbers, `id` added; null without an article.
   */
  async record(): Promise<Record<string, string | number> | null> {
    const reply = await send(this.connection, ['ARTICLE.GET', this.key]);
    if (reply === null || reply === undefined) return null;
    const record: Record<string, string | number> = textFields(reply);
    for (const name of NUMBERS) {
      if (name in record) record[name] = Number(record[name]);
    }
    record.id = this.id;
    return record;
  }

  /** True when updated, false when there is no such article (none is created). */
  async update(changes: ArticleChanges): Promise<boolean> {
    const words: Arg[] = ['ARTICLE.UPDATE', this.key];
    for (const [token, value] of [['TITLE', changes.title], ['CONTENT', changes.content],
      ['AUTHOR', changes.author]] as const) {
      if (value !== undefined) words.push(token, value);
    }
    if (words.length === 2) throw new TypeError('update needs at least one of title, content, author');
    return Number(await send(this.connection, words)) === 1;
  }

  /** Moves the article to `slug` (claims it, releases the old one). */
  async setSlug(slug: string): Promise<boolean> {
    return Number(await send(this.connection, ['ARTICLE.SETSLUG', this.key, this.index(), slug])) === 1;
  }

  /** Counts one page view: the new count, or null without an article. */
  async view(): Promise<number | null> {
    const views = await send(this.connection, ['ARTICLE.VIEW', this.key]);
    return views === null || views === undefined ? null : Number(views);
  }

  /** True when the article existed and is deleted (its slug released). */
  async delete(): Promise<boolean> {
    const words: Arg[] = ['ARTICLE.DELETE', this.key];
    if (this.slugIndex !== undefined) words.push('SLUG', this.slugIndex);
    return Number(await send(this.connection, words)) === 1;
  }
}

/** Unix ms as stored (`'1551199163429'`) → seconds as the book stores `time()` (`'1551199163.429'`). */
function seconds(ms: string): string {
  const value = Number(ms);
  if (!Number.isInteger(value)) return ms;
  const whole = String(value / 1000);
  return whole.includes('.') ? whole : `${whole}.0`;
}

/** Looks articles up by slug. */
export class SlugIndex {
  private readonly connection: Connection;

  constructor(client: unknown, readonly key: string) {
    this.connection = connectionOf(client);
  }

  /** The key of the article holding `slug`, or null. */
  async lookup(slug: string): Promise<string | null> {
    return text(await send(this.connection, ['ARTICLE.BYSLUG', this.key, slug]));
  }
}
