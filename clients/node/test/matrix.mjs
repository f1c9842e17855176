// The matrix of the class tests: `onEachServer(title, body)` (and `onEachCluster` for the cluster clients) declares `body(t)` once per server of the matrix and
// client (ioredis, node-redis), `t` holding, while its tests run, the server and two connected clients of that kind
// (`client`, `other`). Shared checks of waits are here too.
import { describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connectionOf } from '../dist/index.js';
import { flavors, startServer, startCluster, CLIENTS, CLUSTER_CLIENTS, closeClient, raw } from './harness.mjs';

export function onEachServer(title, body) {
  for (const flavor of flavors()) {
    for (const [kind, make] of Object.entries(CLIENTS)) {
      describe(`${title} on ${flavor.name} with ${kind}`, () => {
        const t = { kind, flavor };
        before(async () => {
          t.server = await startServer(flavor.path);
          t.client = await make(t.server);
          t.other = await make(t.server);
        });
        after(async () => {
          for (const client of [t.client, t.other]) {
            await connectionOf(client).close();
            await closeClient(client);
          }
          await t.server.stop();
        });
        body(t);
      });
    }
  }
}

/**
 * `body(t)` once per cluster client (ioredis `Cluster`, node-redis `createCluster`), on a three-node cluster of the
 * matrix's first server; `t` holds, while its tests run, the cluster and a connected cluster client (`client`).
 * `options` are `describe`'s.
 */
export function onEachCluster(title, body, options = {}) {
  for (const flavor of flavors().slice(0, 1)) {
    for (const [kind, make] of Object.entries(CLUSTER_CLIENTS)) {
      describe(`${title} on a ${flavor.name} cluster with ${kind}`, options, () => {
        const t = { kind, flavor };
        before(async () => {
          t.cluster = await startCluster(flavor.path);
          t.client = await make(t.cluster);
        });
        after(async () => {
          await connectionOf(t.client).close();
          await closeClient(t.client);
          await t.cluster.stop();
        });
        body(t);
      });
    }
  }
}

/** Asserts that `client` answers at once (while a wait runs on a dedicated connection). */
export async function answersAtOnce(client) {
  const started = Date.now();
  assert.equal(await raw(client, 'PING'), 'PONG');
  assert.ok(Date.now() - started < 300, `PING took ${Date.now() - started} ms`);
}

/** How many clients are blocked on the server (INFO clients). */
export async function blockedClients(client) {
  const info = String(await raw(client, 'INFO', 'clients'));
  return Number(/blocked_clients:(\d+)/.exec(info)[1]);
}

/**
 * Resolves once `check()` resolves true (polled every 5 ms; fails after `ms`). It returns as soon as the state comes,
 * so the bound only says when to give up: 10 s, far above what a call takes with both cores busy (3 s ran out once).
 */
export async function until(check, ms = 10_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not true within ${ms} ms: ${check}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
