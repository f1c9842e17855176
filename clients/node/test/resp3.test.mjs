// The classes that read maps (RATE.LIMIT, the INFO commands, POOL.HOLDERS) answer the same when node-redis speaks
// RESP3, where the server answers them as maps and doubles.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  RateLimiter, IdPool, ResourcePool, ReadWriteLock, AutoComplete, CountDownLatch, connectionOf,
} from '../dist/index.js';
import { flavors, startServer, CLIENTS, closeClient, raw } from './harness.mjs';

for (const flavor of flavors()) {
  describe(`RESP3 replies on ${flavor.name} with node-redis`, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer(flavor.path);
      client = await CLIENTS['node-redis'](server, { RESP: 3 });
    });
    after(async () => {
      await connectionOf(client).close();
      await closeClient(client);
      await server.stop();
    });

    it('reads decisions, infos and holders as under RESP2', async () => {
      assert.equal(Object.getPrototypeOf(await raw(client, 'POOL.INFO', 'none')) === Array.prototype, false,
        'the server answers a map');
      const limiter = new RateLimiter(client, 'r3', 60_000, 5);
      assert.deepEqual(await limiter.limit('u'), {
        limited: false, allowed: true, limit: 5, remaining: 4, retryAfterMs: -1, resetAfterMs: 12_000,
      });
      const ids = new IdPool(client, 'ids');
      assert.equal(await ids.create(3, { ttl: 60_000 }), true);
      assert.equal(await ids.acquire(), 1);
      assert.deepEqual(await ids.info(), { max: 3, leased: 1, next: 2, defaultTtl: 60_000 });
      const pool = new ResourcePool(client, 'pool', { owner: 'o' });
      assert.equal(await pool.associate('a', 'b'), true);
      assert.equal(await pool.acquire(), 'a');
      assert.deepEqual(await pool.info(), { size: 2, free: 1, held: 1, waiting: 0 });
      assert.deepEqual([...(await pool.holders())], [['a', { owner: 'o', until: null }]]);
      const rw = new ReadWriteLock(client, 'rw');
      assert.equal(await rw.readLock({ token: 't' }).acquire(), true);
      assert.deepEqual(await rw.info(), { mode: 'read', holders: new Map([['t', null]]), waiting: 0 });
      const ac = new AutoComplete(client, 's');
      await ac.feed('ab', 2.5);
      assert.equal(await ac.weight('ab'), 2.5);
      assert.deepEqual(await ac.hint('a'), ['ab']);
      assert.equal(await new CountDownLatch(client, 'l').wait({ timeout: 100 }), true);
    });
  });
}
