import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ResourcePool, LeaseLost, NoResourceFree, WrongType } from '../dist/index.js';
import { onEachServer, onEachCluster, answersAtOnce, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

const dispose = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

onEachServer('ResourcePool', (t) => {
  it('the book\'s methods: associate, acquire, release, counts, status', async () => {
    const w1 = new ResourcePool(t.client, 'ResourcePool:browsers', { owner: 'worker-1' });
    const w2 = new ResourcePool(t.client, 'ResourcePool:browsers', { owner: 'worker-2', ttl: 30_000 });
    assert.equal(await w1.associate('b1', 'b2', 'b3'), true);
    assert.equal(await w1.associate('b3'), false);
    assert.equal(await w1.associate('b3', 'b4'), false, 'not every one was new');
    assert.equal(await w1.disassociate('b4'), true);
    assert.equal(await w1.acquire(), 'b1');
    assert.equal(await w2.acquire(), 'b2');
    assert.equal(await w2.release('b1'), false, 'only the holder releases');
    assert.deepEqual(await w1.info(), { size: 3, free: 1, held: 2, waiting: 0 });
    assert.deepEqual([await w1.size(), await w1.totalCount(), await w1.availableCount(), await w1.occupiedCount()],
      [3, 3, 1, 2]);
    assert.deepEqual([await w1.status('b1'), await w1.status('b3'), await w1.status('b9')], ['held', 'free', null]);
    assert.deepEqual([await w1.isAvailable('b3'), await w1.isOccupied('b3'), await w1.has('b3'), await w1.has('b9')],
      [true, false, true, false]);
    const holders = await w1.holders();
    assert.deepEqual([...holders.keys()], ['b1', 'b2']);
    assert.deepEqual(holders.get('b1'), { owner: 'worker-1', until: null });
    assert.equal(holders.get('b2').owner, 'worker-2');
    assert.ok(holders.get('b2').until > Date.now() + 29_000);
    assert.equal(await w2.renew('b2', 60_000), true);
    assert.equal(await w1.renew('b2', 60_000), false);
    await assert.rejects(w1.renew('b1'), TypeError);
    assert.equal(await w1.release('b1'), true);
    assert.equal(await w1.release('b1'), false);
    assert.equal(await w1.disassociate('b1', 'b2', 'b3'), true);
    assert.equal(await raw(t.client, 'EXISTS', 'ResourcePool:browsers'), 0, 'an emptied pool is deleted');
    assert.equal(await w1.acquire(), null);
    const nobody = new ResourcePool(t.client, 'p', { owner: '' });
    await assert.rejects(nobody.acquire(), { message: 'ERR owner must not be empty' });
    await raw(t.client, 'SET', 'str', 'x');
    await assert.rejects(new ResourcePool(t.client, 'str').acquire(), WrongType);
  });

  it('waits on its own connection, first come first served, and a lease that ends frees it', async () => {
    // The crashed holder's lease outlives the two waiters' arrival (2 s: 200 ms ran out first once, with both cores
    // busy, and the first waiter never waited).
    const crashed = new ResourcePool(t.client, 'pool:wait', { owner: 'crashed', ttl: 2000 });
    assert.equal(await crashed.associate('r'), true);
    assert.equal(await crashed.acquire(), 'r');
    const a = new ResourcePool(t.client, 'pool:wait', { owner: 'a' });
    const b = new ResourcePool(t.other, 'pool:wait', { owner: 'b' });
    const order = [];
    const first = a.acquire({ wait: 5000 }).then((r) => order.push(['a', r]));
    await until(async () => (await blockedClients(t.client)) === 1);
    const second = b.acquire({ wait: 5000 }).then((r) => order.push(['b', r]));
    await until(async () => (await blockedClients(t.client)) === 2);
    await answersAtOnce(t.client);
    assert.equal((await a.info()).waiting, 2);
    await first;
    assert.deepEqual(order, [['a', 'r']], 'the crashed holder\'s lease ended: the first waiter got it');
    assert.equal(await a.release('r'), true);
    await second;
    assert.deepEqual(order, [['a', 'r'], ['b', 'r']]);
    assert.equal((await a.holders()).get('r').owner, 'b');
    assert.equal(await a.acquire({ wait: 50 }), null);
  });

  it('an abort leaves nothing held and nothing queued', async () => {
    const pool = new ResourcePool(t.client, 'pool:abort', { owner: 'o' });
    assert.equal(await pool.associate('x'), true);
    assert.equal(await pool.acquire(), 'x');
    const waiter = new ResourcePool(t.client, 'pool:abort', { owner: 'w' });
    const controller = new AbortController();
    const pending = waiter.acquire({ wait: 60_000, signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    assert.equal(await blockedClients(t.client), 0);
    assert.equal((await pool.info()).waiting, 0);
    assert.equal(await pool.release('x'), true);
    assert.equal(await pool.status('x'), 'free');
    await assert.rejects(waiter.using(() => 1, { signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(await pool.status('x'), 'free');
  });

  it('an abort racing a grant gives back what was granted', async () => {
    const pool = new ResourcePool(t.client, 'pool:race', { owner: 'o' });
    const waiter = new ResourcePool(t.client, 'pool:race', { owner: 'w' });
    assert.equal(await pool.associate('x'), true);
    for (let i = 0; i < 10; i++) {
      assert.equal(await pool.acquire(), 'x');
      const controller = new AbortController();
      const pending = assert.rejects(waiter.acquire({ signal: controller.signal, wait: 60_000 }),
        { name: 'AbortError' });
      await until(async () => (await blockedClients(t.client)) === 1);
      // The release reaches the server first and hands x to the waiter; the abort comes after the grant.
      const released = pool.release('x');
      controller.abort();
      assert.equal(await released, true);
      await pending;
      await until(async () => (await pool.status('x')) === 'free');
      assert.equal((await pool.holders()).size, 0, 'the waiter holds nothing');
    }
  });

  it('using() and hold() hold, renew and give back a resource; a loss calls onLost or throws LeaseLost', async () => {
    const pool = new ResourcePool(t.client, 'pool:held', { ttl: 300 });
    assert.equal(await pool.associate('c1', 'c2'), true);
    const got = await pool.using(async (resource) => {
      await sleep(550);
      assert.equal((await pool.holders()).get(resource)?.owner, pool.owner, 'renewed past its 300 ms lease');
      return resource;
    }, { renew: true });
    assert.equal(got, 'c1');
    assert.equal(await pool.status('c1'), 'free');
    const lost = [];
    await pool.using(async (resource) => {
      await pool.disassociate(resource);
      await sleep(200);
    }, { renew: true, onLost: (resource) => lost.push(resource) });
    assert.deepEqual(lost, ['c2']);
    await assert.rejects(pool.using((resource) => pool.release(resource), { ttl: 10_000 }), LeaseLost);
    const lease = await pool.hold({ ttl: 10_000 });
    assert.equal(lease.resource, 'c1');
    assert.equal(await pool.status('c1'), 'held');
    await assert.rejects(new ResourcePool(t.other, 'pool:held').using(() => 1, { wait: 50 }), NoResourceFree);
    await lease[dispose]();
    assert.equal(await pool.status('c1'), 'free');
    await assert.rejects(pool.using(() => {
      throw new Error('boom');
    }), { message: 'boom' });
    assert.equal(await pool.occupiedCount(), 0, 'a throwing function still gives its resource back');
    await assert.rejects(new ResourcePool(t.other, 'pool:none').hold({ wait: 20 }), NoResourceFree);
  });
});

onEachCluster('ResourcePool', (t) => {
  it('routes every pool to its node, waits and using() included', async () => {
    for (let i = 0; i < 12; i++) {
      const holder = new ResourcePool(t.client, `cpool:${i}`, { owner: 'h' });
      assert.equal(await holder.associate(`r${i}`), true);
      assert.equal(await holder.acquire(), `r${i}`);
      const waiter = new ResourcePool(t.client, `cpool:${i}`, { owner: 'w', ttl: 5000 });
      const pending = waiter.using(async (resource) => {
        assert.equal(await waiter.status(resource), 'held');
        return resource;
      }, { wait: 3000, renew: true });
      await until(async () => (await holder.info()).waiting === 1);
      assert.equal(await holder.release(`r${i}`), true);
      assert.equal(await pending, `r${i}`);
      assert.equal(await holder.status(`r${i}`), 'free');
    }
  });
});
