/**
 * The module's errors as classes. A server error whose code has a class of its own (the "class" column of the
 * repository's `docs/src/errors.md`; the classes, generated with the Python package's from one list, have the same
 * names there) comes out of a method as that class, the client's own error kept as `cause`; any other server error
 * comes out as the client raised it (ioredis's `ReplyError`, node-redis's `ErrorReply`).
 */

import { CODES, FAMILIES, LOAD_HINT, ModuleNotLoaded, RecipeError } from './catalogue.js';

export * from './catalogue.js';

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

/** True when `error` is a server's "unknown command" for one of the module's commands. */
export function isUnknownRecipe(error: unknown): boolean {
  const lowered = String((error as Error)?.message ?? '').toLowerCase();
  const text = lowered.startsWith('err ') ? lowered.slice(4) : lowered;
  return text.startsWith('unknown command') && FAMILIES.some((family) => text.includes(`'${family}`));
}

/**
 * The most specific error for a server error: the class of its code (its first word; `CODES`, generated from the
 * module's catalogue of errors), `ModuleNotLoaded` for an unknown command of the module's, else the error itself.
 */
export function translate(error: unknown): unknown {
  if (error instanceof RecipeError || !(error instanceof Error)) return error;
  const message = error.message;
  const cls = CODES.get(message.split(' ', 1)[0] ?? '');
  if (cls !== undefined) return new cls(message, { cause: error });
  if (isUnknownRecipe(error)) return new ModuleNotLoaded(`${LOAD_HINT} (${message})`, { cause: error });
  return error;
}
