/**
 * Reading replies and writing times the same way whatever the client (ioredis, node-redis) and protocol (RESP2
 * flat arrays, RESP3 maps).
 */

/** The fields of a reply that is a flat array of name, value (RESP2), a `Map` or an object (RESP3). */
export function asFields(reply: unknown): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  if (reply instanceof Map) {
    for (const [name, value] of reply) fields.set(String(name), value);
  } else if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), reply[i + 1]);
  } else if (reply && typeof reply === 'object') {
    for (const [name, value] of Object.entries(reply)) fields.set(name, value);
  }
  return fields;
}

/**
 * A record whose RESP2 form is positional (`[v1, v2, …]`) and whose RESP3 form is a map of `names`: a `Map`, an
 * object, or the flat `[name, value, …]` array ioredis 6 hands over. Told apart by shape: a flat map's first element
 * is the first name, a positional record's first element is a value (a number).
 */
export function record(reply: unknown, names: readonly string[]): Map<string, unknown> {
  if (!Array.isArray(reply)) return asFields(reply);
  if (reply.length >= 2 && text(reply[0]) === names[0]) return asFields(reply);
  const fields = new Map<string, unknown>();
  names.forEach((name, at) => fields.set(name, reply[at]));
  return fields;
}

/** A reply as text (a `Buffer` decoded as UTF-8), or null for a nil reply. */
export function text(reply: unknown): string | null {
  if (reply === null || reply === undefined) return null;
  return Buffer.isBuffer(reply) ? reply.toString('utf8') : String(reply);
}

/** An integer reply as a number, or null for a nil reply. */
export function integer(reply: unknown): number | null {
  return reply === null || reply === undefined ? null : Number(reply);
}

/**
 * Milliseconds as the server reads them: a whole number (rounded up, so a lease or a wait is never shorter than
 * asked). `NaN` and the infinities are refused here, a value the server refuses (0, negative) is sent as it is.
 */
export function ms(value: number, what = 'a time'): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${what} is a finite number of milliseconds, not ${String(value)}`);
  }
  return Math.ceil(value);
}

/** A wait's milliseconds: at least 1 (`WAIT 0` is an error), rounded up. */
export function waitMs(value: number): number {
  return Math.max(1, ms(value, 'a wait'));
}
