// Real servers for the tests: each test file starts the servers it needs on free loopback ports (with the module,
// or without it for the fallbacks) and stops them when it ends. No mock of Redis.
//
// The matrix comes from the environment, as for the other suites of the repository: REDIS_SERVER (Redis 7.0),
// REDIS8_SERVER, VALKEY_SERVER, and RECIPES_MODULE (the built module). A server whose variable is unset is skipped,
// unless RECIPES_REQUIRE_SERVERS=1, where it fails.
import { execFileSync } from 'node:child_process';
import { after } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from './servers.mjs';
import { KINDS, familyOf } from './clients.mjs';

const FLAVORS = [
  ['redis', 'Redis 7.0', 'REDIS_SERVER'],
  ['redis8', 'Redis 8.6', 'REDIS8_SERVER'],
  ['valkey', 'Valkey 9', 'VALKEY_SERVER'],
];
// RECIPES_FLAVORS=valkey (a comma-separated list of the first column) runs the tests on those servers only, as in
// the Python suite (`make check`).
const ONLY = process.env.RECIPES_FLAVORS ? process.env.RECIPES_FLAVORS.split(',') : undefined;

export const MODULE = process.env.RECIPES_MODULE;

/** The servers of the matrix: [{ name, path }]. */
export function flavors() {
  const found = [];
  for (const [key, name, variable] of FLAVORS) {
    if (ONLY && !ONLY.includes(key)) continue;
    const path = process.env[variable];
    if (path) found.push({ name, path });
    else if (process.env.RECIPES_REQUIRE_SERVERS === '1') throw new Error(`${variable} is not set`);
  }
  if (!MODULE && process.env.RECIPES_REQUIRE_SERVERS === '1') throw new Error('RECIPES_MODULE is not set');
  return found;
}

const running = new Set();
after(async () => {
  for (const server of [...running]) await server.stop();
});

/**
 * Starts `path` on a free port, with the module unless `module: false`, and `args` added to its command line
 * (servers.mjs's `launch`), stopped when the test file ends if not before. Returns { port, host, url, stop() }.
 */
export async function startServer(path, { module = true, args = [] } = {}) {
  const launched = await launch(path, { module: module ? MODULE : false, args });
  const server = {
    ...launched,
    async stop() {
      running.delete(server);
      await launched.stop();
    },
  };
  running.add(server);
  return server;
}


function redisCli() {
  for (const name of ['redis-cli', 'valkey-cli']) {
    try {
      execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
      return name;
    } catch {
      // Try the next.
    }
  }
  throw new Error('no redis-cli on the PATH');
}

/** A 3-primary cluster of `path` with the module: { nodes: [server…], stop() }. */
export async function startCluster(path) {
  const nodes = [];
  for (let i = 0; i < 3; i++) {
    nodes.push(await startServer(path, { args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'] }));
  }
  execFileSync(redisCli(), ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`),
    '--cluster-replicas', '0', '--cluster-yes'], { stdio: 'ignore' });
  for (const node of nodes) {
    for (let i = 0; ; i++) {
      const info = execFileSync(redisCli(), ['-p', String(node.port), 'CLUSTER', 'INFO']).toString();
      if (info.includes('cluster_state:ok') && info.includes('cluster_known_nodes:3')) break;
      if (i > 1000) throw new Error('the cluster did not come up');
      await sleep(10);
    }
  }
  return {
    nodes,
    async stop() {
      for (const node of nodes) await node.stop();
    },
  };
}

export { GENERATIONS, GENERATION, KINDS, familyOf, speaksResp3 } from './clients.mjs';

/** The client packages of the run: { kind: the package as `import()` gives it }. */
export async function clientPackages() {
  const packages = {};
  for (const [kind, [name]] of Object.entries(KINDS)) packages[kind] = await import(name);
  return packages;
}

/** The class a server error is an instance of, for each kind of the run's clients. */
export async function replyErrorClasses() {
  const classes = {};
  for (const [kind, pkg] of Object.entries(await clientPackages())) {
    classes[kind] = familyOf(kind) === 'ioredis' ? pkg.default.ReplyError : pkg.ErrorReply;
  }
  return classes;
}

/** A factory of connected clients of `kind` to a server: (server, options) => client. */
function clientOf(kind) {
  const [name, defaults] = KINDS[kind];
  if (familyOf(kind) === 'ioredis') {
    return async (server, options = {}) => {
      const { default: Redis } = await import(name);
      const client = new Redis({ port: server.port, host: server.host, lazyConnect: true, ...defaults, ...options });
      await client.connect();
      return client;
    };
  }
  return async (server, options = {}) => {
    const { createClient } = await import(name);
    const client = createClient({ url: server.url, ...defaults, ...options });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
}

/** A factory of connected cluster clients of `kind` to a cluster of startCluster: (cluster) => client. */
function clusterClientOf(kind) {
  const [name, defaults] = KINDS[kind];
  if (familyOf(kind) === 'ioredis') {
    return async (cluster) => {
      const { Cluster } = await import(name);
      const client = new Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })), { redisOptions: defaults });
      await new Promise((resolve, reject) => {
        client.once('ready', resolve);
        client.once('error', reject);
      });
      return client;
    };
  }
  return async (cluster) => {
    const { createCluster } = await import(name);
    const client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })), defaults, ...defaults });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  };
}

/** The run's kinds of client, each a factory of a connected client (`CLIENTS.ioredis(server, options)`). */
export const CLIENTS = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, clientOf(kind)]));

/** The run's kinds of client as cluster clients (ioredis `Cluster`, node-redis `createCluster`). */
export const CLUSTER_CLIENTS = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, clusterClientOf(kind)]));

/** Closes a client of either kind. */
export async function closeClient(client) {
  if (typeof client.disconnect === 'function' && typeof client.callBuffer === 'function') {
    client.disconnect();
  } else if (typeof client.close === 'function') {
    await client.close();
  } else {
    await client.quit();
  }
}

/** Sends a raw command through either kind of client. */
export function raw(client, ...args) {
  if (typeof client.callBuffer === 'function') return client.call(...args);
  return client.sendCommand(args.map(String));
}
