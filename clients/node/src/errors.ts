/**
 * The module's errors as classes. A server error whose code or text has a class of its own (the "Python" column of
 * the repository's `docs/src/errors.md`, generated from the module's catalogue: the classes have the same names here)
 * comes out of a method as that class, the client's own error kept as `cause`; any other server error comes out as
 * the client raised it (ioredis's `ReplyError`, node-redis's `ErrorReply`).
 */

/** An error answered by one of the module's commands. `message` is the server's reply, word for word. */
export class RecipeError extends Error {
  override name = 'RecipeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The server has no `recipes` module (or one older than the command): the command is unknown to it. */
export class ModuleNotLoaded extends RecipeError {
  override name = 'ModuleNotLoaded';
}
/** The slug belongs to another article. */
export class SlugTaken extends RecipeError {
  override name = 'SlugTaken';
}
/** A slug must be 1 to 200 Unicode letters, digits, '-' or '_'. */
export class InvalidSlug extends RecipeError {
  override name = 'InvalidSlug';
}
/** The key already exists (`BUSYKEY`). */
export class KeyExists extends RecipeError {
  override name = 'KeyExists';
}
/** There is no ID pool at the key. */
export class PoolMissing extends RecipeError {
  override name = 'PoolMissing';
}
/** An ID pool cannot shrink below a live lease. */
export class CannotShrink extends RecipeError {
  override name = 'CannotShrink';
}
/** Taking more IDs would pass 2**63 - 1. */
export class GeneratorExhausted extends RecipeError {
  override name = 'GeneratorExhausted';
}
/** The value is not one valid JSON document. */
export class InvalidJson extends RecipeError {
  override name = 'InvalidJson';
}
/** The key holds another kind of limiter, or another number of limits. */
export class LimiterMismatch extends RecipeError {
  override name = 'LimiterMismatch';
}
/** An action that can never fit its limit (cost above the burst or max). */
export class CostTooHigh extends RecipeError {
  override name = 'CostTooHigh';
}
/** The key holds a value of another type. */
export class WrongType extends RecipeError {
  override name = 'WrongType';
}
/** A token holding a read lock asked for the write lock: it must release the read lock first. */
export class CannotUpgrade extends RecipeError {
  override name = 'CannotUpgrade';
}

/** A lock (or a lease of a pool) could not be taken in time by `using`/`acquire` with `throwIfNotAcquired`. */
export class LockNotAcquired extends Error {
  override name = 'LockNotAcquired';
}
/** A lock's lease ended, or another client took the lock, while it was held. */
export class LockLost extends Error {
  override name = 'LockLost';
}
/** `pool.using(...)` got no resource of the pool in time. */
export class NoResourceFree extends Error {
  override name = 'NoResourceFree';
}
/** A pool resource's lease ended (or it was removed) while it was held. */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
}

type RecipeErrorClass = new (message: string, options?: { cause?: unknown }) => RecipeError;

/** One kind of error: a message (after an optional "ERR ") starting with `start` and containing `containing`. */
export interface Kind {
  start: string;
  cls: RecipeErrorClass;
  containing?: string;
}

/**
 * The server's errors that have a class of their own, in the order they are tried: by their code where the module
 * gives one, else by the start of their text after `ERR`. The tests check it against `docs/src/errors.md`.
 */
export const KINDS: readonly Kind[] = [
  { start: 'SLUGTAKEN ', cls: SlugTaken },
  { start: 'BUSYKEY ', cls: KeyExists },
  { start: 'WRONGTYPE ', cls: WrongType },
  { start: 'NOPOOL ', cls: PoolMissing },
  { start: 'EXHAUSTED ', cls: GeneratorExhausted },
  { start: 'MISMATCH ', cls: LimiterMismatch },
  { start: 'NOUPGRADE ', cls: CannotUpgrade },
  { start: 'cannot shrink the pool', cls: CannotShrink },
  { start: 'invalid JSON', cls: InvalidJson },
  { start: 'invalid slug', cls: InvalidSlug },
  { start: 'cost ', cls: CostTooHigh, containing: 'such an action can never be allowed' },
];

/** The module's command families: an unknown command of theirs means the module is not loaded. */
export const FAMILIES: readonly string[] = [
  'autocomplete.', 'idgen.', 'lock.', 'rwlock.', 'latch.', 'article.', 'cache.', 'idpool.', 'rate.', 'pool.',
  'queue.', 'uqueue.',
];

const LOAD_HINT =
  "the server has no 'recipes' module, or one older than this command (MODULE LIST shows its version; each " +
  "command's release is in its COMMAND DOCS 'since'): load this release with 'loadmodule /path/to/librecipes.so' " +
  'in redis.conf, or MODULE LOAD /path/to/librecipes.so';

/** True when `error` is a server's "unknown command" for one of the module's commands. */
export function isUnknownRecipe(error: unknown): boolean {
  const lowered = String((error as Error)?.message ?? '').toLowerCase();
  const text = lowered.startsWith('err ') ? lowered.slice(4) : lowered;
  return text.startsWith('unknown command') && FAMILIES.some((family) => text.includes(`'${family}`));
}

/** The most specific error for a server error (see `KINDS`); the error itself when none fits. */
export function translate(error: unknown): unknown {
  if (error instanceof RecipeError || !(error instanceof Error)) return error;
  const message = error.message;
  if (isUnknownRecipe(error)) return new ModuleNotLoaded(`${LOAD_HINT} (${message})`, { cause: error });
  const text = message.startsWith('ERR ') ? message.slice(4) : message;
  for (const kind of KINDS) {
    if (text.startsWith(kind.start) && text.includes(kind.containing ?? '')) {
      return new kind.cls(message, { cause: error });
    }
  }
  return error;
}
