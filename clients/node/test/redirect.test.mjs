// A wait whose key's slot moves to another node while it waits (a real slot migration: CLUSTER SETSLOT …
// IMPORTING/MIGRATING, MIGRATE of the key, SETSLOT … NODE) is told to retry (TRYAGAIN), then redirected (ASK or
// MOVED). It goes on a dedicated connection to the new node, never on the application's shared one: the shared
// connection answers at once while it waits there, an abort unblocks it where it is, and a release there grants it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { Lock, keySlot } from '../dist/index.js';
import { until } from './matrix.mjs';
import { CLUSTER_CLIENTS, closeClient, flavors, startCluster } from './harness.mjs';

/** The cluster clients: the harness's (ioredis, node-redis 5) and node-redis 4's. */
const CLIENTS = {
  ...CLUSTER_CLIENTS,
  async 'node-redis 4'(cluster) {
    const { createCluster } = await import('redis4');
    const client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })) });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  },
};

// The wait lasts far longer than anything the test times: a wait left on the old node, or on the shared
// connection, would answer only when it ends.
const WAIT = 10000;
// A command of the shared connection and an abort take a few ms (measured: under 20 ms; an abort's unblock is
// retried every 100 ms at most until it lands). 2 s is far above that with both cores busy and far below WAIT.
const PROMPT = 2000;
// A wait that runs out: SHORT in all, its key moved LATER into it. Sent again on the new node, it waits only for
// what is left (it ends at SHORT, measured within 50 ms); waiting SHORT again there would end at LATER + SHORT.
// The bound sits 1.5 s from each: far above a slow server timer with both cores busy, and below the wrong end.
const SHORT = 4000;
const LATER = 3000;
const OVER = SHORT + 1500;

/** An admin connection to each node of the cluster, with its id. */
async function admins(cluster) {
  return Promise.all(cluster.nodes.map(async (node) => {
    const redis = new Redis({ host: node.host, port: node.port });
    return { node, redis, id: await redis.call('CLUSTER', 'MYID') };
  }));
}

/** The node serving `slot`, among `nodes`. */
async function owner(nodes, slot) {
  const shards = await nodes[0].redis.call('CLUSTER', 'SLOTS');
  const [, , [, port]] = shards.find(([from, to]) => from <= slot && slot <= to);
  return nodes.find((n) => n.node.port === port);
}

/** Moves `slot` (and its keys) from `source` to `target`, as redis-cli --cluster reshard does. */
async function migrate(nodes, slot, source, target) {
  await target.redis.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', source.id);
  await source.redis.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', target.id);
  const keys = await source.redis.call('CLUSTER', 'GETKEYSINSLOT', slot, 100);
  await source.redis.call('MIGRATE', target.node.host, target.node.port, '', 0, 5000, 'KEYS', ...keys);
  for (const n of [target, source, ...nodes.filter((x) => x !== source && x !== target)]) {
    await n.redis.call('CLUSTER', 'SETSLOT', slot, 'NODE', target.id);
  }
}

async function blocked(n) {
  return Number(/blocked_clients:(\d+)/.exec(await n.redis.call('INFO', 'clients'))[1]);
}

for (const flavor of flavors().slice(0, 1)) {
  for (const [kind, make] of Object.entries(CLIENTS)) {
    describe(`A wait whose slot moves on a ${flavor.name} cluster with ${kind}`, () => {
      const t = {};
      before(async () => {
        t.cluster = await startCluster(flavor.path);
        t.client = await make(t.cluster);
      });
      after(async () => {
        await closeClient(t.client);
        await t.cluster.stop();
      });
      for (const [outcome, then] of [['abort', 'aborted'], ['granted', 'granted'], ['timeout', 'timed out']]) {
        it(`goes on a dedicated connection to the new node (then ${then})`,
          async () => {
            const nodes = await admins(t.cluster);
            const holderClient = await make(t.cluster);
            try {
              const key = `moving:{${outcome}}`;
              const slot = keySlot(key);
              const source = await owner(nodes, slot);
              const target = nodes.find((n) => n !== source);
              const holder = new Lock(holderClient, key);
              assert.equal(await holder.acquire(), true);
              const waiter = new Lock(t.client, key);
              const controller = new AbortController();
              const began = Date.now();
              const wait = outcome === 'timeout' ? SHORT : WAIT;
              const pending = waiter.acquire({ wait, signal: controller.signal }).then((v) => v, (error) => error);
              await until(async () => (await blocked(source)) === 1);
              if (outcome === 'timeout') {
                await new Promise((resolve) => setTimeout(resolve, LATER - (Date.now() - began)));
              }
              await migrate(nodes, slot, source, target);
              // The wait is now blocked on the new node, and no longer on the old.
              await until(async () => (await blocked(target)) === 1 && (await blocked(source)) === 0);
              // The shared connection answers at once, on the new node too (a key of the same slot).
              let started = Date.now();
              assert.equal(await t.client.set(`other:{${outcome}}`, 'v'), 'OK');
              assert.equal(await t.client.get(`other:{${outcome}}`), 'v');
              assert.ok(Date.now() - started < PROMPT, `the shared connection took ${Date.now() - started} ms`);
              started = Date.now();
              if (outcome === 'abort') {
                controller.abort();
                const error = await pending;
                assert.ok(Date.now() - started < PROMPT, `the abort took ${Date.now() - started} ms`);
                assert.equal(error?.name, 'AbortError');
                assert.equal(await holder.owned(), true);
              } else if (outcome === 'timeout') {
                assert.equal(await pending, false);
                assert.ok(Date.now() - began < OVER, `the wait ended ${Date.now() - began} ms after it began`);
                assert.equal(await holder.owned(), true);
              } else {
                assert.equal(await holder.release(), true);
                assert.equal(await pending, true);
                assert.ok(Date.now() - started < PROMPT, `the grant took ${Date.now() - started} ms`);
                assert.equal(await waiter.owned(), true);
                assert.equal(await waiter.release(), true);
              }
              assert.equal(await blocked(target), 0);
            } finally {
              await closeClient(holderClient);
              for (const n of nodes) n.redis.disconnect();
            }
          });
      }
    });
  }
}
