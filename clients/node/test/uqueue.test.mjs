import { it } from 'node:test';
import assert from 'node:assert/strict';
import { CircularQueue, UniqueCircularQueue, WrongType } from '../dist/index.js';
import { onEachServer, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('CircularQueue, UniqueCircularQueue', (t) => {
  it('CircularQueue rotates a plain list, items repeating', async () => {
    const queue = new CircularQueue(t.client, 'circle');
    assert.equal(await queue.rotate(), null);
    assert.equal(await queue.front(), null);
    assert.equal(await queue.rear(), null);
    assert.equal(await queue.length(), 0);
    assert.equal(await queue.remove('x'), 0);
    assert.equal(await queue.insert('a', 'b', 'c', 'a'), 4);
    assert.equal(await queue.rotate(), 'a');
    assert.deepEqual(await raw(t.client, 'LRANGE', 'circle', 0, -1), ['b', 'c', 'a', 'a']);
    assert.equal(await queue.front(), 'b');
    assert.equal(await queue.rear(), 'a');
    assert.equal(await queue.remove('a', -1), 1);
    assert.equal(await queue.insert('a', 'a'), 5);
    assert.equal(await queue.remove('a'), 3);
    assert.equal(await queue.length(), 2);
  });

  it('UniqueCircularQueue keeps each item once, moved to the tail when inserted again', async () => {
    const queue = new UniqueCircularQueue(t.client, 'queue');
    assert.equal(await queue.rotate(), null);
    assert.equal(await queue.front(), null);
    assert.equal(await queue.rear(), null);
    assert.equal(await queue.length(), 0);
    assert.equal(await queue.remove('x'), 0);
    assert.deepEqual(await queue.items(), []);
    assert.equal(await queue.insert('a', 'b'), 2);
    await assert.rejects(queue.insert('c', 'a', 'c'), { name: 'TypeError', message: 'Input items must be unique!' });
    assert.deepEqual(await queue.items(), ['a', 'b'], 'nothing was sent');
    assert.equal(await queue.insert('a'), 2);
    assert.deepEqual(await queue.items(), ['b', 'a']);
    assert.equal(await queue.insert('c'), 3);
    assert.equal(await queue.rotate(), 'b');
    assert.deepEqual(await queue.items(), ['a', 'c', 'b']);
    assert.equal(await queue.front(), 'a');
    assert.equal(await queue.rear(), 'b');
    assert.equal(await queue.remove('c'), 1);
    assert.equal(await queue.length(), 2);
    assert.equal(await queue.remove('a'), 1);
    assert.equal(await queue.remove('b'), 1);
    assert.equal(await raw(t.client, 'EXISTS', 'queue'), 0, 'a queue left without items is deleted');
    await raw(t.client, 'SET', 'a-string', 'x');
    await assert.rejects(new UniqueCircularQueue(t.client, 'a-string').insert('a'), WrongType);
  });

  for (const Queue of [CircularQueue, UniqueCircularQueue]) {
    it(`${Queue.name}: a rotation waits for an item, on its own connection`, async () => {
      const queue = new Queue(t.client, `wait:${Queue.name}`);
      const started = Date.now();
      assert.equal(await queue.rotate({ timeout: 200 }), null);
      // The server times the wait out: not before it; and well within 2 s even with both cores busy.
      assert.ok(Date.now() - started >= 150 && Date.now() - started < 2000, `${Date.now() - started} ms`);
      for (const timeout of [5000, 0]) {
        const waiting = new Queue(t.other, queue.key).rotate({ timeout });
        await until(async () => (await blockedClients(t.client)) === 1);
        await queue.insert(`x${timeout}`);
        assert.equal(await waiting, `x${timeout}`);
        assert.equal(await queue.remove(`x${timeout}`), 1);
      }
      const controller = new AbortController();
      const aborted = queue.rotate({ timeout: 0, signal: controller.signal });
      await until(async () => (await blockedClients(t.client)) === 1);
      controller.abort(new Error('stop'));
      await assert.rejects(aborted, { message: 'stop' });
      assert.equal(await blockedClients(t.client), 0);
      assert.equal(await queue.length(), 0);
    });
  }
});
