import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReadWriteLock, CannotUpgrade, LockLost, LockNotAcquired, WrongType } from '../dist/index.js';
import { onEachServer, answersAtOnce, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('ReadWriteLock', (t) => {
  it('shares reads, excludes a writer, refuses an upgrade, downgrades, fences', async () => {
    const rw = new ReadWriteLock(t.client, 'doc:7:rw', { ttl: 30_000, fence: 'doc:7:fence' });
    const r1 = rw.readLock({ token: 'reader-1' });
    const r2 = rw.readLock({ token: 'reader-2' });
    const w = rw.writeLock({ token: 'writer-1' });
    assert.equal(await r1.acquire(), true);
    assert.equal(r1.fencingToken, 0, 'a reader gets the last writer\'s token: none yet');
    assert.equal(await r2.acquire(), true);
    assert.equal(await w.acquire(), false);
    let info = await rw.info();
    assert.equal(info.mode, 'read');
    assert.deepEqual([...info.holders.keys()], ['reader-1', 'reader-2']);
    assert.ok(info.holders.get('reader-1') > Date.now() + 29_000);
    assert.equal(info.waiting, 0);
    await assert.rejects(new ReadWriteLock(t.other, 'doc:7:rw').writeLock({ token: 'reader-1' }).acquire(), (error) => {
      assert.ok(error instanceof CannotUpgrade);
      assert.match(error.message, /^NOUPGRADE token holds a read lock/);
      return true;
    });
    assert.equal(await r1.release(), true);
    assert.equal(await r1.release(), false);
    assert.equal(await r2.release(), true);
    assert.equal(await raw(t.client, 'EXISTS', 'doc:7:rw'), 0, 'a free lock is no key');
    assert.equal(await w.acquire(), true);
    assert.equal(w.fencingToken, 1);
    assert.equal(await w.acquire(), true, 'a holder asking again gets it (a retry)');
    assert.equal(await r1.acquire(), false);
    assert.equal(await w.extend(60_000), true);
    assert.ok((await rw.info()).holders.get('writer-1') > Date.now() + 59_000);
    assert.equal(await w.downgrade(), true);
    assert.equal(w.mode, 'read');
    assert.equal(await r1.acquire(), true);
    assert.equal(r1.fencingToken, 1);
    info = await rw.info();
    assert.equal(info.mode, 'read');
    assert.equal(info.holders.size, 2);
    await assert.rejects(w.downgrade(), TypeError);
    assert.equal(await w.release(), true);
    assert.equal(await r1.release(), true);
    assert.equal(await r1.extend(1000), false);
    const free = await rw.info();
    assert.deepEqual([free.mode, free.holders.size, free.waiting], ['none', 0, 0]);
    await raw(t.client, 'SET', 'str', 'x');
    await assert.rejects(new ReadWriteLock(t.client, 'str').readLock().acquire(), WrongType);
  });

  it('a waiting writer waits on its own connection, fairly, and is served first', async () => {
    const rw = new ReadWriteLock(t.client, 'fair:rw', { ttl: 10_000 });
    const reader = rw.readLock();
    assert.equal(await reader.acquire(), true);
    const writer = rw.writeLock();
    const pending = writer.acquire({ wait: 5000 });
    await until(async () => (await blockedClients(t.client)) === 1);
    await answersAtOnce(t.client);
    assert.equal((await rw.info()).waiting, 1);
    assert.equal(await rw.readLock().acquire(), false, 'a newcomer reader never passes the waiting writer');
    assert.equal(await reader.release(), true);
    assert.equal(await pending, true);
    assert.equal((await rw.info()).mode, 'write');
    assert.equal(await writer.acquire({ wait: 100 }), true, 'its own mode again, at once');
    assert.equal(await rw.readLock().acquire({ wait: 100 }), false, 'a wait that times out answers false');
    assert.equal(await writer.release(), true);
  });

  it('an abort ends a wait: nothing held, nothing queued', async () => {
    const rw = new ReadWriteLock(t.client, 'abort:rw');
    const holder = rw.writeLock();
    assert.equal(await holder.acquire(), true);
    const controller = new AbortController();
    const pending = rw.readLock().acquire({ wait: 60_000, signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    assert.equal(await blockedClients(t.client), 1);
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    assert.equal(await blockedClients(t.client), 0);
    assert.equal((await rw.info()).waiting, 0);
    assert.equal(await holder.release(), true);
    assert.equal(await raw(t.client, 'EXISTS', 'abort:rw'), 0);
    const aborted = AbortSignal.abort();
    await assert.rejects(rw.readLock().acquire({ wait: 100, signal: aborted }), { name: 'AbortError' });
    await assert.rejects(rw.readLock().acquire({ signal: aborted }), { name: 'AbortError' });
  });

  it('an abort racing a grant leaves the lock to nobody', async () => {
    const rw = new ReadWriteLock(t.client, 'race:rw', { fence: 'race:fence' });
    for (let i = 0; i < 10; i++) {
      const holder = rw.writeLock();
      assert.equal(await holder.acquire(), true);
      const controller = new AbortController();
      const pending = assert.rejects(rw.writeLock().acquire({ wait: 60_000, signal: controller.signal }),
        { name: 'AbortError' });
      await until(async () => (await blockedClients(t.client)) === 1);
      const released = holder.release();
      controller.abort();
      assert.equal(await released, true);
      await pending;
      await until(async () => (await rw.info()).mode === 'none');
    }
    assert.ok(Number(await raw(t.client, 'GET', 'race:fence')) >= 10, 'fences only rise');
  });

  it('using() and hold() take, renew and give back; a loss calls onLost once or throws LockLost', async () => {
    const lost = [];
    const rw = new ReadWriteLock(t.client, 'held:rw', { ttl: 300, renew: true, onLost: (h) => lost.push(h.mode) });
    const result = await rw.writeLock().using(async (handle) => {
      await sleep(650);
      assert.equal((await rw.info()).holders.get(handle.token) > Date.now(), true, 'renewed past 300 ms');
      return 'done';
    });
    assert.equal(result, 'done');
    assert.equal(await raw(t.client, 'EXISTS', 'held:rw'), 0);
    await rw.readLock().using(async () => {
      await raw(t.client, 'DEL', 'held:rw');
      await sleep(250);
    });
    assert.deepEqual(lost, ['read']);

    const plain = new ReadWriteLock(t.client, 'plain:rw', { ttl: 10_000 });
    await assert.rejects(plain.readLock().using(() => raw(t.client, 'DEL', 'plain:rw')), LockLost);
    const held = await plain.writeLock().hold();
    assert.equal((await plain.info()).mode, 'write');
    await assert.rejects(plain.readLock().using(() => 1, { wait: 100 }), LockNotAcquired);
    await held[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]();
    assert.equal(await raw(t.client, 'EXISTS', 'plain:rw'), 0);
  });
});
