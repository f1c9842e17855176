// node-redis 4, the oldest node-redis the package claims, as a client and as a cluster: the adapter's paths (a
// command, a wait on a connection of its own, an abort, a server error as its class, a cluster's routing) with the
// classes that use them. The other suites run on node-redis 5 (and ioredis).
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, createCluster } from 'redis4';
import {
  connectionOf, CountDownLatch, IdGenerator, Lock, RateLimiter, ResourcePool, WrongType,
} from '../dist/index.js';
import { flavors, startServer, startCluster, raw } from './harness.mjs';

for (const flavor of flavors()) {
  describe(`node-redis 4 on ${flavor.name}`, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer(flavor.path);
      client = createClient({ url: server.url });
      client.on('error', () => undefined);
      await client.connect();
    });
    after(async () => {
      await connectionOf(client).close();
      await client.quit();
      await server.stop();
    });

    it('sends commands and translates errors', async () => {
      const ids = new IdGenerator(client, 'ids');
      assert.equal(await ids.produce(), 1);
      assert.equal(await ids.produce(), 2);
      await raw(client, 'SADD', 'a-set', 'x');
      await assert.rejects(new IdGenerator(client, 'a-set').produce(), WrongType);
      const limiter = new RateLimiter(client, 'login', 60000, 2);
      assert.deepEqual([await limiter.isPermitted(1), await limiter.isPermitted(1), await limiter.isPermitted(1)],
        [true, true, false]);
    });

    it('waits on a connection of its own, first come first served, and aborts', async () => {
      const holder = new Lock(client, 'l', { token: 'holder' });
      assert.equal(await holder.acquire(), true);
      const waiter = new Lock(client, 'l', { token: 'waiter' });
      const pending = waiter.acquire({ wait: 5000 });
      await sleep(50);
      assert.equal(await raw(client, 'PING'), 'PONG');
      assert.equal(await holder.release(), true);
      assert.equal(await pending, true);
      const controller = new AbortController();
      const aborted = holder.acquire({ wait: 60000, signal: controller.signal });
      await sleep(50);
      controller.abort();
      await assert.rejects(aborted, { name: 'AbortError' });
      assert.equal(await waiter.release(), true);
      await sleep(50);
      assert.equal(await raw(client, 'EXISTS', 'l'), 0, 'the aborted waiter holds nothing');

      const latch = new CountDownLatch(client, 'latch');
      assert.equal(await latch.trySetCount(1), true);
      const opened = latch.wait({ timeout: 5000 });
      await sleep(50);
      await latch.countDown();
      assert.equal(await opened, true);
    });
  });
}

for (const flavor of flavors().slice(0, 1)) {
  describe(`node-redis 4 cluster on ${flavor.name}`, () => {
    let cluster;
    let client;
    before(async () => {
      cluster = await startCluster(flavor.path);
      client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })) });
      client.on('error', () => undefined);
      await client.connect();
    });
    after(async () => {
      await connectionOf(client).close();
      await client.quit();
      await cluster.stop();
    });

    it('routes each key to its node, waits included', async () => {
      for (let i = 0; i < 12; i++) {
        const pool = new ResourcePool(client, `pool:${i}`, { owner: 'a' });
        assert.equal(await pool.associate('r'), true);
        assert.equal(await pool.acquire(), 'r');
        const other = new ResourcePool(client, `pool:${i}`, { owner: 'b' });
        const pending = other.acquire({ wait: 3000 });
        await sleep(20);
        assert.equal(await pool.release('r'), true);
        assert.equal(await pending, 'r');
      }
    });
  });
}
