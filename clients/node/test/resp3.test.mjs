// The classes that read maps (RATE.LIMIT, the INFO commands, POOL.HOLDERS) answer the same when the client speaks
// RESP3, where the server answers them as maps and doubles: node-redis asked for it (5 and 6), and ioredis 6, which
// speaks it by default and hands a map over as a flat [name, value, …] array (RECIPES_NODE_CLIENTS=next, others).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  RateLimiter, IdPool, ResourcePool, ReadWriteLock, AutoComplete, CountDownLatch, connectionOf,
} from '../dist/index.js';
import { flavors, startServer, CLIENTS, GENERATION, closeClient, raw, speaksResp3 } from './harness.mjs';

// The kinds of the run that speak RESP3 (tests/clients.mjs), and node-redis 5 asked for it in the current set: each
// with the options that ask for it.
const RESP3 = Object.fromEntries(Object.keys(CLIENTS).filter(speaksResp3).map((kind) => [kind, {}]));
if (GENERATION === 'current') RESP3['node-redis'] = { RESP: 3 };

for (const flavor of flavors()) for (const [kind, options] of Object.entries(RESP3)) {
  describe(`RESP3 replies on ${flavor.name} with ${kind} (${GENERATION})`, () => {
    let server;
    let client;
    before(async () => {
      server = await startServer(flavor.path);
      client = await CLIENTS[kind](server, options);
    });
    after(async () => {
      await connectionOf(client).close();
      await closeClient(client);
      await server.stop();
    });

    it('reads decisions, infos and holders as under RESP2', async () => {
      // Redis 7.0 ends the line with resp=; later servers add fields after it.
      assert.match(String(await raw(client, 'CLIENT', 'INFO')), / resp=3(\s|$)/, 'the client speaks RESP3');
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
      await ac.feed('cd', 0.1 + 0.2); // node-redis 5's RESP3 reader would give 0.3000000000000001
      assert.equal(await ac.weight('cd'), 0.1 + 0.2, 'a double read back exactly');
      assert.deepEqual(await ac.hint('a'), ['ab']);
      assert.equal(await new CountDownLatch(client, 'l').wait({ timeout: 100 }), true);
    });
  });
}
