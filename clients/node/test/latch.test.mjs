import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CountDownLatch, WrongType } from '../dist/index.js';
import { onEachServer, answersAtOnce, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('CountDownLatch', (t) => {
  it('arms once, counts down to open (deleted), and can be armed again', async () => {
    const latch = new CountDownLatch(t.client, 'jobs:done');
    assert.equal(await latch.count(), 0);
    assert.equal(await latch.wait({ timeout: 10 }), true, 'a missing latch is open');
    assert.equal(await latch.trySetCount(3, { ttl: 3_600_000 }), true);
    assert.equal(await latch.trySetCount(5), false);
    assert.ok(Number(await raw(t.client, 'PTTL', 'jobs:done')) > 3_590_000);
    assert.equal(await latch.countDown(), 2);
    assert.equal(await latch.count(), 2);
    assert.equal(await latch.wait({ timeout: 50 }), false);
    assert.equal(await latch.countDown(5), 0);
    assert.equal(await raw(t.client, 'EXISTS', 'jobs:done'), 0);
    assert.equal(await latch.countDown(), 0);
    assert.equal(await latch.wait({ timeout: 50 }), true);
    assert.equal(await latch.trySetCount(1), true);
    await assert.rejects(latch.trySetCount(0), { message: 'ERR count must be a positive integer' });
    await assert.rejects(latch.countDown(0), { message: 'ERR decrement must be a positive integer' });
    assert.equal(await latch.count(), 1);
    await raw(t.client, 'HSET', 'h', 'f', '1');
    await assert.rejects(new CountDownLatch(t.client, 'h').count(), WrongType);
  });

  it('waits on its own connection until counted down; the application\'s client keeps answering', async () => {
    const latch = new CountDownLatch(t.client, 'batch:1');
    assert.equal(await latch.trySetCount(2), true);
    const started = Date.now();
    const waits = [latch.wait(), latch.wait({ timeout: 5000 })];
    await until(async () => (await blockedClients(t.client)) === 2);
    assert.equal(await blockedClients(t.client), 2);
    await answersAtOnce(t.client);
    assert.equal(await new CountDownLatch(t.other, 'batch:1').countDown(), 1);
    await sleep(50);
    assert.equal(await latch.countDown(), 0);
    assert.deepEqual(await Promise.all(waits), [true, true]);
    assert.ok(Date.now() - started < 1000);
    const expiring = new CountDownLatch(t.client, 'batch:2');
    assert.equal(await expiring.trySetCount(2, { ttl: 200 }), true);
    assert.equal(await expiring.wait({ timeout: 5000 }), true, 'it opens as it expires');
  });

  it('an abort ends a wait and leaves nothing blocked', async () => {
    const latch = new CountDownLatch(t.client, 'batch:3');
    assert.equal(await latch.trySetCount(1), true);
    const controller = new AbortController();
    const pending = latch.wait({ signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    controller.abort(new Error('stop'));
    await assert.rejects(pending, { message: 'stop' });
    assert.equal(await blockedClients(t.client), 0);
    assert.equal(await latch.count(), 1);
    await assert.rejects(latch.wait({ timeout: 100, signal: AbortSignal.abort() }), { name: 'AbortError' });
    assert.equal(await latch.wait({ timeout: 20 }), false, 'the dedicated connection still works');
  });

  it('an abort in the same tick as the call, before the wait is sent, ends it', { timeout: 10_000 }, async () => {
    const latch = new CountDownLatch(t.client, 'batch:4');
    assert.equal(await latch.trySetCount(1), true);
    const soon = [(f) => f(), queueMicrotask, process.nextTick, setImmediate, (f) => setTimeout(f, 0),
      (f) => setTimeout(f, 1)];
    for (const [at, later] of soon.entries()) {
      for (const client of [t.client, t.other]) {
        const controller = new AbortController();
        const started = Date.now();
        const pending = assert.rejects(new CountDownLatch(client, 'batch:4').wait({ signal: controller.signal }),
          { name: 'AbortError' });
        later(() => controller.abort());
        await pending;
        assert.ok(Date.now() - started < 1000, `abort #${at} took ${Date.now() - started} ms`);
      }
    }
    assert.equal(await blockedClients(t.client), 0);
  });
});
