/**
 * node-redis 3 (the callback client `redis@3`, `createClient()`), for the redlock drop-in only: redlock 4 accepts
 * it, so `redis-recipes/redlock` does too. The shared adapter covers ioredis and node-redis 4 and later; this file
 * gives node-redis 3 the same `Connection` shape: commands sent through `send_command`, and waits on dedicated
 * connections (made by `duplicate()`, never reconnecting, ended early by `CLIENT UNBLOCK`) as the adapter does.
 */
import { FOREVER, MARGIN } from './adapter';
import type { Arg, Connection, Reply, WaitOptions } from './adapter';

/* eslint-disable @typescript-eslint/no-explicit-any */
type AnyClient = any;

/** True for a node-redis 3 (or 2) client: callbacks, `send_command(name, args, callback)`. */
export function isCallbackClient(client: AnyClient): boolean {
  return typeof client?.send_command === 'function' && typeof client?.internal_send_command === 'function';
}

function sendOn(client: AnyClient, args: Arg[]): Promise<Reply> {
  return new Promise((resolve, reject) => {
    client.send_command(String(args[0]), args.slice(1), (error: unknown, reply: Reply) => {
      if (error) reject(error);
      else resolve(reply);
    });
  });
}

function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const error = new Error('This operation was aborted');
  error.name = 'AbortError';
  return error;
}

interface Dedicated {
  client: AnyClient;
  id: number;
}

class CallbackConnection implements Connection {
  readonly cluster = false;
  private readonly idle: Dedicated[] = [];
  private readonly busy = new Set<Dedicated>();
  private closed = false;

  constructor(private readonly client: AnyClient) {}

  send(args: Arg[]): Promise<Reply> {
    return sendOn(this.client, args);
  }

  private async open(): Promise<Dedicated> {
    // The application's options (host, port, password, db, TLS), but no offline re-sending and no reconnection:
    // a wait sent again would queue again, at the back.
    const client = this.client.duplicate({ retry_strategy: () => undefined, enable_offline_queue: true });
    client.on('error', () => undefined);
    try {
      const id = Number(await sendOn(client, ['CLIENT', 'ID']));
      return { client, id };
    } catch (error) {
      client.end(false);
      throw error;
    }
  }

  async wait(args: Arg[], _key: Arg, waitMs: number, options: WaitOptions = {}): Promise<Reply> {
    const { signal, undo } = options;
    if (signal?.aborted) throw abortReason(signal);
    if (this.closed) throw new Error('redis-recipes: the connection was closed');
    const dedicated = this.idle.pop() ?? (await this.open());
    this.busy.add(dedicated);
    let aborted = false;
    const onAbort = (): void => {
      aborted = true;
      sendOn(this.client, ['CLIENT', 'UNBLOCK', dedicated.id]).catch(() => dedicated.client.end(false));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    let healthy = true;
    try {
      const late = new Promise<never>((_, reject) => {
        if (waitMs >= FOREVER) return;
        timer = setTimeout(() => {
          healthy = false;
          dedicated.client.end(false);
          const error = new Error(`redis-recipes: no reply ${MARGIN} ms after a wait of ${waitMs} ms`);
          error.name = 'TimeoutError';
          reject(error);
        }, waitMs + MARGIN);
        timer.unref?.();
      });
      let reply: Reply;
      try {
        reply = await Promise.race([sendOn(dedicated.client, args), late]);
      } catch (error) {
        if (!(error as Error)?.name?.includes('ReplyError')) healthy = false;
        throw error;
      }
      if (aborted && signal) {
        if (reply !== null && reply !== undefined && undo) await undo(reply);
        throw abortReason(signal);
      }
      return reply;
    } finally {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      this.busy.delete(dedicated);
      if (healthy && !this.closed) this.idle.push(dedicated);
      else dedicated.client.end(false);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const dedicated of this.busy) dedicated.client.end(false);
    this.busy.clear();
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((d) => sendOn(d.client, ['QUIT']).catch(() => d.client.end(false))));
  }
}

const CONNECTIONS = new WeakMap<object, Connection>();

/** The connection for a node-redis 3 client (one per client). */
export function callbackConnectionOf(client: AnyClient): Connection {
  let connection = CONNECTIONS.get(client);
  if (!connection) {
    connection = new CallbackConnection(client);
    CONNECTIONS.set(client, connection);
  }
  return connection;
}
