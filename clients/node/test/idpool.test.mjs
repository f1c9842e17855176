import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  IdPool, PoolMissing, CannotShrink, KeyExists, LeaseLost, NoResourceFree, connectionOf, translate,
} from '../dist/index.js';
import { onEachServer, answersAtOnce, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('IdPool', (t) => {
  it('hands out IDs in turn, releases, renews, resizes and reports', async () => {
    const seats = new IdPool(t.client, 'seats');
    assert.equal(await seats.create(100, { ttl: 3_600_000 }), true);
    assert.equal(await seats.create(5), false, 'an existing key: BUSYKEY answered as false');
    assert.equal(await seats.acquire(), 1);
    assert.equal(await seats.acquire({ ttl: 60_000 }), 2);
    assert.equal(await seats.release(1), true);
    assert.equal(await seats.release(1), false);
    assert.equal(await seats.acquire(), 3);
    assert.deepEqual(await seats.info(), { max: 100, leased: 2, next: 4, defaultTtl: 3_600_000 });
    assert.equal(await seats.renew(2, 120_000), true);
    assert.equal(await seats.renew(50, 1000), false);
    await assert.rejects(seats.resize(2), (error) => {
      assert.ok(error instanceof CannotShrink);
      assert.equal(error.message, 'NOSHRINK cannot shrink the pool to 2: ID 3 is leased');
      return true;
    });
    assert.equal((await seats.info()).max, 100, 'a refused resize changes nothing');
    assert.equal(await seats.resize(3), true);
    assert.equal(await seats.acquire(), 1);
    assert.equal(await seats.acquire(), null, 'full');
    await assert.rejects(new IdPool(t.client, 'typo').acquire(), (error) => {
      assert.ok(error instanceof PoolMissing);
      assert.equal(error.message, "NOPOOL no ID pool at key 'typo'");
      return true;
    });
    const open = new IdPool(t.client, 'open');
    assert.equal(await open.create(2), true);
    assert.equal((await open.info()).defaultTtl, null);
    await assert.rejects(open.release(3), { message: 'ERR id must be between 1 and 2' });
  });

  it('a full pool is waited on, on a connection of its own, first come first served', async () => {
    const permits = new IdPool(t.client, 'permits');
    assert.equal(await permits.create(1), true);
    assert.equal(await permits.acquire({ ttl: 30_000 }), 1);
    const order = [];
    const first = permits.acquire({ wait: 5000 }).then((id) => order.push(['first', id]));
    await until(async () => (await blockedClients(t.client)) === 1);
    const second = permits.acquire({ wait: 5000 }).then((id) => order.push(['second', id]));
    await until(async () => (await blockedClients(t.client)) === 2);
    await answersAtOnce(t.client);
    assert.equal(await permits.release(1), true);
    await first;
    assert.deepEqual(order, [['first', 1]]);
    assert.equal(await permits.release(1), true);
    await second;
    assert.deepEqual(order, [['first', 1], ['second', 1]]);
    assert.equal(await permits.acquire({ wait: 50 }), null);
    assert.equal(await permits.release(1), true);
  });

  it('an abort leaves no ID leased and no waiter; a missing pool while waiting is PoolMissing', async () => {
    const pool = new IdPool(t.client, 'aborted');
    assert.equal(await pool.create(1), true);
    assert.equal(await pool.acquire(), 1);
    const controller = new AbortController();
    const pending = pool.acquire({ wait: 60_000, signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    assert.equal(await blockedClients(t.client), 0);
    assert.equal(await pool.release(1), true);
    assert.equal((await pool.info()).leased, 0, 'nothing was granted to the aborted waiter');
    assert.equal(await pool.acquire(), 1);
    const orphan = assert.rejects(pool.acquire({ wait: 5000 }), PoolMissing);
    await until(async () => (await blockedClients(t.client)) === 1);
    await raw(t.other, 'DEL', 'aborted');
    await orphan;
  });

  it('using() and hold() lease an ID, renew it and release it', async () => {
    const pool = new IdPool(t.client, 'workers');
    assert.equal(await pool.create(2), true);
    const seen = await pool.using(async (id) => {
      await sleep(550);
      assert.equal(await pool.renew(id, 1000), true, 'still leased past its 300 ms lease');
      return id;
    }, { ttl: 300, renew: true });
    assert.equal(seen, 1);
    assert.equal((await pool.info()).leased, 0);
    const lease = await pool.hold({ ttl: 10_000 });
    assert.equal(lease.id, 2);
    assert.equal((await pool.info()).leased, 1);
    await lease[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]();
    assert.equal((await pool.info()).leased, 0);
    await assert.rejects(pool.using(async (id) => pool.release(id)), LeaseLost);
    const lost = [];
    await pool.using(async (id) => pool.release(id), { onLost: (id) => lost.push(id) });
    assert.equal(lost.length, 1);
    assert.equal(await pool.acquire(), 1);
    assert.equal(await pool.acquire(), 2);
    await assert.rejects(pool.using(() => 1, { wait: 50 }), NoResourceFree);
    assert.equal(await pool.create(1), false);
    // What create() answers false for: the server's BUSYKEY, as the package translates it.
    const busy = connectionOf(t.client).send(['IDPOOL.CREATE', 'workers', 1]).catch((e) => {
      throw translate(e);
    });
    await assert.rejects(busy, KeyExists);
    assert.equal((await pool.info()).max, 2);
  });
});
