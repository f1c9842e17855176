/**
 * One small adapter over the two clients Node applications use: ioredis 5 (`Redis`, `Cluster`) and node-redis 4
 * and later (`createClient`, `createCluster`). Every class of the package talks to the server through it.
 *
 * A command that waits in the server's first-come-first-served queue (its `WAIT ms` option) never runs on the
 * application's client: a Node client sends every caller's commands down one socket, so a wait there would hold
 * up everything queued behind it. Waits run on dedicated connections, each made from the application's client (so
 * with its host, port, auth, TLS and database; in a cluster, to the node serving the key), reused from one wait to
 * the next, and closed by `close()` or when the application's client closes (quits, disconnects, ends). While idle
 * they never keep the process alive (their sockets are unreferenced; referenced while a wait is in flight, as a
 * library's retry timer is), so a process exits when it would without them. A wait is sent once: its connection
 * never re-sends a command after a reconnection (a command sent again would queue again, at the back). In a
 * cluster, a wait whose key moves to another node (`TRYAGAIN`, then `MOVED` or `ASK`) follows it on a dedicated
 * connection to that node. An `AbortSignal` ends a wait early: the server it waits on is told to unblock that
 * connection (`CLIENT UNBLOCK … ERROR`), so the connection is kept and nothing is left queued in the server.
 */

export type Arg = string | number | Buffer;

/** What a command answers, as the client decodes it (RESP2: strings, numbers, arrays, null). */
export type Reply = unknown;

/** Milliseconds: a wait with no end (about 31 years). */
export const FOREVER = 1e12;
/** Milliseconds a waiting command's reply may take past its wait before the connection is dropped. */
export const MARGIN = 2000;

/** A connection of our own to one server (one node of a cluster), for waits. */
interface Dedicated {
  readonly node: string;
  id: number;
  send(args: Arg[]): Promise<Reply>;
  destroy(): void;
  quit(): Promise<void>;
  /** Lets its socket keep the process alive (while a wait is in flight) or not (while idle). */
  ref(): void;
  unref(): void;
  /** True once the connection has ended for good (its server went away while it was idle): never used again. */
  gone(): boolean;
}

/** The commands a class sends, whatever the client. */
export interface Connection {
  /** True for a cluster client. */
  readonly cluster: boolean;
  /** Sends one command whose first key is `args[keyAt]` (1 when not given; none when `keyAt` is -1). */
  send(args: Arg[], keyAt?: number): Promise<Reply>;
  /**
   * Sends a command carrying `WAIT waitMs` on a dedicated connection to the node serving `key`, and resolves its
   * reply. When `signal` aborts first, the server unblocks the command; the call then rejects with the signal's
   * reason, after `undo(reply)` has given back what the server granted meanwhile (a reply other than null).
   */
  wait(args: Arg[], key: Arg, waitMs: number, options?: WaitOptions): Promise<Reply>;
  /** Closes the dedicated connections (the application's client stays open: it is the application's). */
  close(): Promise<void>;
}

export interface WaitOptions {
  signal?: AbortSignal;
  undo?: (reply: Reply) => Promise<unknown>;
}

/** The Redis Cluster slot of a key (CRC16/XMODEM of its hash tag, modulo 16384). */
export function keySlot(key: Arg): number {
  const bytes = Buffer.isBuffer(key) ? key : Buffer.from(String(key));
  let start = 0;
  let end = bytes.length;
  const open = bytes.indexOf(0x7b); // '{'
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) {
      start = open + 1;
      end = close;
    }
  }
  let crc = 0;
  for (let i = start; i < end; i++) {
    crc ^= bytes[i] << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc % 16384;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyClient = any;

function isIoredis(client: AnyClient): boolean {
  return typeof client?.call === 'function' && typeof client?.duplicate === 'function' && 'options' in client
    && typeof client?.sendCommand === 'function' && typeof client?.callBuffer === 'function';
}

function isNodeRedis(client: AnyClient): boolean {
  return typeof client?.sendCommand === 'function' && typeof client?.duplicate === 'function' && !isIoredis(client);
}

/** node-redis 3 (and 2): callbacks, `send_command(name, args, callback)`. redlock 4 takes it, so the package does. */
export function isCallbackClient(client: AnyClient): boolean {
  return typeof client?.send_command === 'function' && typeof client?.internal_send_command === 'function';
}

function isNodeRedisCluster(client: AnyClient): boolean {
  return isNodeRedis(client) && typeof client.getSlotMaster === 'function';
}

const ADAPTED = Symbol.for('redis-recipes.connection');

/**
 * The connection for an application's client (made once per client and shared by every class built on it).
 * Accepts an ioredis `Redis` or `Cluster`, a node-redis client or cluster, or a `Connection`.
 */
export function connectionOf(client: AnyClient): Connection {
  if (client && typeof client === 'object' && ADAPTED in client) {
    return client[ADAPTED] as Connection;
  }
  if (client instanceof Base) {
    return client;
  }
  let connection: Connection;
  if (isCallbackClient(client)) {
    connection = new NodeRedis3(client);
  } else if (isIoredis(client)) {
    connection = client.isCluster ? new IoredisCluster(client) : new IoredisSingle(client);
  } else if (isNodeRedisCluster(client)) {
    connection = new NodeRedisCluster(client);
  } else if (isNodeRedis(client)) {
    connection = new NodeRedisSingle(client);
  } else {
    throw new TypeError(
      'redis-recipes: expected an ioredis Redis or Cluster, or a node-redis client or cluster (or node-redis 3)',
    );
  }
  try {
    Object.defineProperty(client, ADAPTED, { value: connection, enumerable: false, configurable: true });
  } catch {
    // A frozen client: a connection per class, which works as well.
  }
  return connection;
}

function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

abstract class Base implements Connection {
  abstract readonly cluster: boolean;
  private readonly idle = new Map<string, Dedicated[]>();
  private readonly busy = new Set<Dedicated>();
  private closed = false;
  /** Counts the times the application's client closed: a connection taken before one is not kept after. */
  private generation = 0;

  abstract send(args: Arg[], keyAt?: number): Promise<Reply>;
  /** Opens a dedicated connection to the node serving `key` (to `address`, "host:port", when given). */
  protected abstract open(key: Arg, address?: string): Promise<Dedicated>;
  /** The node `open(key)` would connect to now. */
  protected abstract nodeOf(key: Arg): string;
  /**
   * Sends `CLIENT UNBLOCK id ERROR` to `node`: the waiter is answered `-UNBLOCKED` and holds nothing, even when
   * it was granted something in the same turn (without `ERROR`, Redis 7.0 sends such a waiter no reply at all).
   */
  protected abstract unblock(node: string, id: number): Promise<unknown>;

  async wait(args: Arg[], key: Arg, waitMs: number, options: WaitOptions = {}): Promise<Reply> {
    const { signal, undo } = options;
    if (signal?.aborted) throw abortReason(signal);
    if (this.closed) throw new Error('redis-recipes: the connection was closed');
    const generation = this.generation;
    // The connection the wait is on now: another after a redirect.
    let current = await this.take(key);
    if (signal?.aborted) {
      // Aborted while the connection was being taken: nothing was sent.
      this.give(current, generation);
      throw abortReason(signal);
    }
    this.busy.add(current);
    let aborted = false;
    let settled = false;
    const onAbort = (): void => {
      aborted = true;
      void (async () => {
        // The command may not have reached the server yet (it goes down another socket), or be between two nodes
        // (redirected): unblock wherever it is until it is unblocked or answered.
        for (let pause = 2; !settled; pause = Math.min(pause * 2, 100)) {
          const at = current;
          if (Number(await this.unblock(at.node, at.id)) === 1 || settled) return;
          await new Promise((resolve) => setTimeout(resolve, pause));
        }
      })().catch(() => current.destroy());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let healthy = true;
    const began = Date.now();
    try {
      let reply: Reply;
      for (let redirects = 0; ; redirects++) {
        // Sent again after a redirect, the command waits only for what is left of its wait.
        const [sent, left] = redirects === 0 ? [args, waitMs] : remainingWait(args, waitMs, Date.now() - began);
        const late = new Promise<never>((_, reject) => {
          if (left >= FOREVER) return;
          timer = setTimeout(() => {
            healthy = false;
            current.destroy();
            const error = new Error(`redis-recipes: no reply ${MARGIN} ms after a wait of ${waitMs} ms`);
            error.name = 'TimeoutError';
            reject(error);
          }, left + MARGIN);
          timer.unref?.();
        });
        try {
          reply = await Promise.race([current.send(sent), late]);
          break;
        } catch (error) {
          // The abort's unblock: the waiter holds nothing.
          if (aborted && signal && isUnblocked(error)) throw abortReason(signal);
          if (!isRedirect(error) || redirects >= MAX_REDIRECTS) {
            if (!(error as Error)?.message || isConnectionError(error)) healthy = false;
            throw error;
          }
          // The key's slot moved: the wait goes on a dedicated connection to the node that serves it now (never
          // on the application's, where it would hold up every command behind it).
          const next = await this.redirect(error as Error, key, current);
          if (next !== current) {
            this.busy.delete(current);
            this.give(current, generation);
            this.busy.add(next);
            current = next;
          }
          if (aborted && signal) throw abortReason(signal);
        } finally {
          if (timer) clearTimeout(timer);
          timer = undefined;
        }
      }
      if (aborted && signal) {
        if (reply !== null && reply !== undefined && undo) await undo(reply);
        throw abortReason(signal);
      }
      return reply;
    } finally {
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      this.busy.delete(current);
      if (healthy) this.give(current, generation);
      else current.destroy();
    }
  }

  /**
   * The connection a wait goes on after a redirect (`MOVED slot host:port`, `ASK slot host:port`): a dedicated
   * one to the node named (told `ASKING` for `ASK`); after a refusal to run it now (`TRYAGAIN`, as the module
   * answers a waiter whose key moved away, or `CLUSTERDOWN`), `from` again after a pause.
   */
  private async redirect(error: Error, key: Arg, from: Dedicated): Promise<Dedicated> {
    const [kind, , address] = error.message.split(' ');
    if ((kind !== 'MOVED' && kind !== 'ASK') || !address) {
      await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE));
      return from;
    }
    const next = await this.take(key, address);
    if (kind === 'ASK') {
      try {
        await next.send(['ASKING']);
      } catch (failed) {
        next.destroy();
        throw failed;
      }
    }
    return next;
  }

  /** A dedicated connection to the node serving `key` (to `address`, "host:port", when given), referenced. */
  private async take(key: Arg, address?: string): Promise<Dedicated> {
    const node = address ?? this.nodeOf(key);
    const list = this.idle.get(node);
    for (let found = list?.pop(); found; found = list?.pop()) {
      if (found.gone()) {
        found.destroy();
        continue;
      }
      found.ref();
      return found;
    }
    const dedicated = await this.open(key, address);
    try {
      dedicated.id = Number(await dedicated.send(['CLIENT', 'ID']));
    } catch (error) {
      dedicated.destroy();
      throw error;
    }
    return dedicated;
  }

  /** Keeps `dedicated` for the next wait, unreferenced, unless the client closed since it was taken. */
  private give(dedicated: Dedicated, generation: number): void {
    if (this.closed || generation !== this.generation) {
      dedicated.destroy();
      return;
    }
    dedicated.unref();
    const list = this.idle.get(dedicated.node) ?? [];
    list.push(dedicated);
    this.idle.set(dedicated.node, list);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.release();
  }

  /**
   * The application's client closed (all of it, or its connection to `node`): the dedicated connections (to that
   * node) close too, a wait in flight on one rejecting as a command of the client would. The connection stays
   * usable: a client connected again makes new ones.
   */
  protected release(node?: string): Promise<void> {
    this.generation++;
    const all: Dedicated[] = [];
    for (const [at, list] of this.idle) {
      if (node !== undefined && at !== node) continue;
      all.push(...list);
      this.idle.delete(at);
    }
    for (const dedicated of this.busy) {
      if (node !== undefined && dedicated.node !== node) continue;
      dedicated.destroy();
      this.busy.delete(dedicated);
    }
    return Promise.all(all.map((d) => d.quit().catch(() => d.destroy()))).then(() => undefined);
  }

  /** Releases the dedicated connections (to `node`) when `emitter` emits `event`. */
  protected follow(emitter: AnyClient, event: string, node?: string, when: () => boolean = () => true): void {
    emitter?.on?.(event, () => {
      if (when()) void this.release(node);
    });
  }
}

/** The most times a wait follows a redirect (as ioredis's `maxRedirections`). */
const MAX_REDIRECTS = 16;
/** Milliseconds before a wait refused with `TRYAGAIN` or `CLUSTERDOWN` is sent again (ioredis's default). */
const RETRY_PAUSE = 100;

/**
 * `args` whose wait (the number after `WAIT`; else, as `LATCH.WAIT key ms` has it, the last argument equal to
 * `waitMs`) is what is left of it after `elapsed` ms, at least 1 (the server then answers as for a wait that ran
 * out), and that time.
 */
function remainingWait(args: Arg[], waitMs: number, elapsed: number): [Arg[], number] {
  if (waitMs >= FOREVER) return [args, waitMs];
  const left = Math.max(1, Math.ceil(waitMs - elapsed));
  let at = -1;
  for (let i = args.length - 1; i >= 2 && at < 0; i--) {
    if (String(args[i - 1]).toUpperCase() === 'WAIT' && Number.isFinite(Number(args[i]))) at = i;
  }
  for (let i = args.length - 1; i >= 2 && at < 0; i--) {
    if (Math.abs(Number(args[i]) - waitMs) <= 1) at = i;
  }
  if (at < 0) return [args, waitMs];
  const again = [...args];
  again[at] = left;
  return [again, left];
}

/** "host:port" (the host may hold colons: IPv6) as [host, port]. */
function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':');
  return [address.slice(0, colon), Number(address.slice(colon + 1))];
}

function isRedirect(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  return /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN) /.test(message);
}

function isUnblocked(error: unknown): boolean {
  return ((error as Error)?.message ?? '').startsWith('UNBLOCKED ');
}

function isConnectionError(error: unknown): boolean {
  const name = (error as Error)?.name ?? '';
  const message = (error as Error)?.message ?? '';
  return /Connection|Socket|Closed|Abort|Timeout/i.test(name) || /connection|closed|socket|ECONN/i.test(message);
}

// ---------------------------------------------------------------------------------------------------- ioredis

/** Options of a dedicated ioredis connection: never re-send, never time out before the wait's own bound. */
const IOREDIS_DEDICATED = {
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
  commandTimeout: undefined,
  enableOfflineQueue: true,
  lazyConnect: false,
  retryStrategy: (): null => null,
  keyPrefix: undefined,
};

function ioredisDedicated(node: string, redis: AnyClient): Dedicated {
  const dedicated: Dedicated = {
    node,
    id: 0,
    send: (args) => redis.call(...args),
    destroy: () => redis.disconnect(false),
    quit: async () => {
      await redis.quit();
    },
    ref: () => redis.stream?.ref?.(),
    unref: () => redis.stream?.unref?.(),
    gone: () => redis.status === 'end',
  };
  // A dropped connection rejects its command; the error event must not go unhandled.
  redis.on('error', () => undefined);
  return dedicated;
}

class IoredisSingle extends Base {
  readonly cluster = false;
  constructor(private readonly client: AnyClient) {
    super();
    // 'end': quit(), disconnect(), or no more reconnection.
    this.follow(client, 'end');
  }
  send(args: Arg[]): Promise<Reply> {
    return this.client.call(...args);
  }
  protected nodeOf(): string {
    return 'single';
  }
  protected async open(): Promise<Dedicated> {
    return ioredisDedicated('single', this.client.duplicate(IOREDIS_DEDICATED));
  }
  protected unblock(_node: string, id: number): Promise<unknown> {
    return this.client.call('CLIENT', 'UNBLOCK', id, 'ERROR');
  }
}

class IoredisCluster extends Base {
  readonly cluster = true;
  constructor(private readonly client: AnyClient) {
    super();
    this.follow(client, 'end');
  }
  send(args: Arg[], keyAt = 1): Promise<Reply> {
    if (keyAt < 0 || args.length <= keyAt) return this.client.call(...args);
    // ioredis routes the commands it knows by their keys; ours it would send to any node and follow the
    // redirect. Routed here by the key's slot, as its own commands are.
    const node = this.masterFor(args[keyAt]);
    if (node) return node.call(...args).catch((error: unknown) => {
      if (isRedirect(error)) return this.client.call(...args);
      throw error;
    });
    return this.client.call(...args);
  }
  private masterFor(key: Arg): AnyClient | undefined {
    const address: string | undefined = this.client.slots?.[keySlot(key)]?.[0];
    if (!address) return undefined;
    return this.client.connectionPool?.getInstanceByKey?.(address)
      ?? this.client.nodes('master').find((n: AnyClient) => `${n.options.host}:${n.options.port}` === address);
  }
  protected nodeOf(key: Arg): string {
    return this.client.slots?.[keySlot(key)]?.[0] ?? 'unknown';
  }
  protected async open(key: Arg, address?: string): Promise<Dedicated> {
    if (address) {
      // A node the slot map may not know yet: made from any node's options, with its host and port.
      const known = this.client.nodes('all').find((n: AnyClient) => `${n.options.host}:${n.options.port}` === address);
      const [host, port] = splitAddress(address);
      const base = known ?? this.client.nodes('all')[0];
      if (!base) throw new Error('redis-recipes: no cluster node to connect from');
      return ioredisDedicated(address, base.duplicate({ ...IOREDIS_DEDICATED, ...(known ? {} : { host, port }) }));
    }
    let node = this.masterFor(key);
    if (!node) {
      await this.client.call('PING');
      node = this.masterFor(key);
    }
    if (!node) throw new Error('redis-recipes: no cluster node serves this key');
    return ioredisDedicated(`${node.options.host}:${node.options.port}`, node.duplicate(IOREDIS_DEDICATED));
  }
  protected unblock(node: string, id: number): Promise<unknown> {
    const redis = this.client.nodes('master').find((n: AnyClient) => `${n.options.host}:${n.options.port}` === node);
    return redis ? redis.call('CLIENT', 'UNBLOCK', id, 'ERROR') : Promise.reject(new Error('node gone'));
  }
}

// ------------------------------------------------------------------------------------------------- node-redis

function nodeRedisOverrides(client: AnyClient, at: { host?: string; port?: number } = {}): Record<string, unknown> {
  const socket = { ...(client.options?.socket ?? {}), ...at, reconnectStrategy: false };
  // No ping timer: it would keep the process alive while the connection is idle.
  return { socket, disableOfflineQueue: false, commandsQueueMaxLength: undefined, pingInterval: undefined };
}

async function nodeRedisDedicated(node: string, client: AnyClient, at?: { host: string; port: number }):
Promise<Dedicated> {
  const dedicated = client.duplicate(nodeRedisOverrides(client, at));
  dedicated.on('error', () => undefined);
  await dedicated.connect();
  return {
    node,
    id: 0,
    send: (args) => dedicated.sendCommand(args.map(String), exactDoubles(dedicated)),
    destroy: () => {
      try {
        // node-redis 4's disconnect() answers a promise, rejected when the client is closed already.
        const done = (dedicated.destroy ?? dedicated.disconnect).call(dedicated);
        done?.catch?.(() => undefined);
      } catch {
        // Already closed.
      }
    },
    quit: async () => {
      await (dedicated.close ?? dedicated.quit).call(dedicated);
    },
    ref: () => dedicated.ref(),
    unref: () => dedicated.unref(),
    gone: () => !dedicated.isOpen,
  };
}

function asStrings(args: Arg[]): (string | Buffer)[] {
  return args.map((a) => (Buffer.isBuffer(a) ? a : String(a)));
}

/**
 * node-redis 5's RESP3 reader computes a double digit by digit (0.30000000000000004 comes back 0.3000000000000001):
 * doubles are asked as their text (the client's own type mapping kept), which reads back exactly, as under RESP2 and
 * ioredis. node-redis 4 has no type mapping and ignores the option.
 */
function exactDoubles(client: AnyClient): { typeMapping: Record<number, unknown> } {
  return { typeMapping: { ...(client._commandOptions?.typeMapping ?? {}), 44: String } };
}

class NodeRedisSingle extends Base {
  readonly cluster = false;
  constructor(private readonly client: AnyClient) {
    super();
    // 'end': quit(), close(), disconnect(), destroy().
    this.follow(client, 'end');
  }
  send(args: Arg[]): Promise<Reply> {
    return this.client.sendCommand(asStrings(args), exactDoubles(this.client));
  }
  protected nodeOf(): string {
    return 'single';
  }
  protected open(): Promise<Dedicated> {
    return nodeRedisDedicated('single', this.client);
  }
  protected unblock(_node: string, id: number): Promise<unknown> {
    return this.client.sendCommand(['CLIENT', 'UNBLOCK', String(id), 'ERROR']);
  }
}

class NodeRedisCluster extends Base {
  readonly cluster = true;
  /** The node clients whose end is followed. */
  private readonly followed = new WeakSet<object>();
  constructor(private readonly client: AnyClient) {
    super();
    // node-redis 5's close() and destroy(); node-redis 4's quit() and disconnect() end each node's client, below.
    this.follow(client, 'disconnect');
  }
  send(args: Arg[], keyAt = 1): Promise<Reply> {
    const key = keyAt >= 0 && args.length > keyAt ? String(args[keyAt]) : undefined;
    return this.client.sendCommand(key, false, asStrings(args), exactDoubles(this.client));
  }
  private master(key: Arg): AnyClient {
    return this.client.getSlotMaster(keySlot(key));
  }
  protected nodeOf(key: Arg): string {
    const master = this.master(key);
    return master ? `${master.host}:${master.port}` : 'unknown';
  }
  protected async open(key: Arg, address?: string): Promise<Dedicated> {
    const nodes: AnyClient[] = [...(this.client.masters ?? []), ...(this.client.replicas ?? [])];
    const known = address && nodes.find((n: AnyClient) => `${n.host}:${n.port}` === address);
    if (address && !known) {
      // A node the slot map does not know yet: made from any node's client, with its host and port.
      const [host, port] = splitAddress(address);
      return nodeRedisDedicated(address, await this.client.nodeClient(this.client.masters[0]), { host, port });
    }
    const master = known || this.master(key);
    const nodeClient = await this.client.nodeClient(master);
    const node = `${master.host}:${master.port}`;
    if (nodeClient && typeof nodeClient === 'object' && !this.followed.has(nodeClient)) {
      this.followed.add(nodeClient);
      this.follow(nodeClient, 'end', node);
    }
    return nodeRedisDedicated(node, nodeClient);
  }
  protected async unblock(node: string, id: number): Promise<unknown> {
    const master = this.client.masters.find((m: AnyClient) => `${m.host}:${m.port}` === node);
    const nodeClient = await this.client.nodeClient(master);
    return nodeClient.sendCommand(['CLIENT', 'UNBLOCK', String(id), 'ERROR']);
  }
}

// ------------------------------------------------------------------------------------------------ node-redis 3

function sendCallback(client: AnyClient, args: Arg[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    client.send_command(String(args[0]), args.slice(1), (error: unknown, reply: Reply) => {
      if (error) reject(error);
      else resolve(reply);
    });
  });
}

/** A node-redis 3 client: its dedicated connections are `duplicate()`s that never reconnect nor re-send. */
class NodeRedis3 extends Base {
  readonly cluster = false;
  constructor(private readonly client: AnyClient) {
    super();
    // node-redis 3 ends also before reconnecting; `closing` tells quit() and end().
    this.follow(client, 'end', undefined, () => client.closing === true);
  }
  send(args: Arg[]): Promise<Reply> {
    return sendCallback(this.client, args);
  }
  protected nodeOf(): string {
    return 'single';
  }
  protected async open(): Promise<Dedicated> {
    const client = this.client.duplicate({ retry_strategy: () => undefined, enable_offline_queue: true });
    client.on('error', () => undefined);
    let ended = false;
    client.on('end', () => (ended = true));
    return {
      node: 'single',
      id: 0,
      send: (args) => sendCallback(client, args),
      destroy: () => client.end(false),
      quit: async () => {
        await sendCallback(client, ['QUIT']);
      },
      ref: () => client.stream?.ref?.(),
      unref: () => client.stream?.unref?.(),
      gone: () => ended,
    };
  }
  protected unblock(_node: string, id: number): Promise<unknown> {
    return sendCallback(this.client, ['CLIENT', 'UNBLOCK', id, 'ERROR']);
  }
}
