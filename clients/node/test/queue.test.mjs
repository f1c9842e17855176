import { it } from 'node:test';
import assert from 'node:assert/strict';
import { FifoQueue, FixedLengthQueue, FadedQueue, WrongType } from '../dist/index.js';
import { onEachServer, answersAtOnce, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('FifoQueue, FixedLengthQueue, FadedQueue', (t) => {
  it('FifoQueue answers what the book answers, and waits in BLPOP', async () => {
    const queue = new FifoQueue(t.client, 'fifo');
    assert.equal(await queue.enqueue('a'), 1);
    assert.equal(await queue.enqueue('b', 'c'), 3);
    assert.equal(await queue.length(), 3);
    assert.equal(await queue.dequeue(), 'a');
    assert.equal(await queue.dequeue({ timeout: 1000 }), 'b');
    assert.equal(await queue.dequeue({ timeout: 0 }), 'c');
    assert.equal(await queue.dequeue(), null);
    const started = Date.now();
    assert.equal(await queue.dequeue({ timeout: 300 }), null);
    // BLPOP's timeout is the server's: it cannot answer before it.
    assert.ok(Date.now() - started >= 250, `${Date.now() - started} ms`);
    assert.equal(await queue.length(), 0);
  });

  it('FixedLengthQueue keeps the first items that fit, as the book keeps them', async () => {
    const queue = new FixedLengthQueue(t.client, 'fixed', 5);
    const kept = [];
    for (const items of [['a'], ['b', 'c'], ['d', 'e', 'f'], ['g'], ['h', 'i']]) kept.push(await queue.enqueue(...items));
    assert.deepEqual(kept, [1, 2, 2, 0, 0]);
    assert.deepEqual(await raw(t.client, 'LRANGE', 'fixed', 0, -1), ['a', 'b', 'c', 'd', 'e']);
    assert.equal(await queue.length(), 5);
    assert.equal(await queue.dequeue(), 'a');
    assert.equal(await queue.enqueue('x', 'y'), 1);
    assert.deepEqual(await raw(t.client, 'LRANGE', 'fixed', 0, -1), ['b', 'c', 'd', 'e', 'x']);
  });

  it('FadedQueue keeps the newest items and says what fell out', async () => {
    const queue = new FadedQueue(t.client, 'faded', 3);
    const kept = [];
    for (const items of [['a'], ['b', 'c'], ['d'], ['e', 'f'], ['g', 'h', 'i', 'j']]) kept.push(await queue.enqueue(...items));
    assert.deepEqual(kept, [1, 2, 1, 2, 3]);
    assert.deepEqual(await raw(t.client, 'LRANGE', 'faded', 0, -1), ['h', 'i', 'j']);
    assert.deepEqual(await queue.enqueueEvicting('k'), { kept: 1, evicted: ['h'] });
    assert.deepEqual(await queue.enqueueEvicting('l', 'm', 'n', 'o'), { kept: 3, evicted: ['i', 'j', 'k', 'l'] });
    assert.deepEqual(await new FadedQueue(t.client, 'empty', 3).enqueueEvicting('x'), { kept: 1, evicted: [] });
    assert.equal(await queue.dequeue(), 'm');
  });

  it('a dequeue waits on its own connection for an item a bounded queue pushes; an abort ends it', async () => {
    const consumer = new FifoQueue(t.other, 'jobs');
    const waiting = consumer.dequeue({ timeout: 0 });
    await until(async () => (await blockedClients(t.client)) === 1);
    await answersAtOnce(t.other);
    assert.equal(await new FixedLengthQueue(t.client, 'jobs', 10).enqueue('job-1', 'job-2'), 2);
    assert.equal(await waiting, 'job-1');
    assert.deepEqual(await raw(t.client, 'LRANGE', 'jobs', 0, -1), ['job-2']);
    const controller = new AbortController();
    const aborted = new FifoQueue(t.client, 'none').dequeue({ timeout: 0, signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    controller.abort(new Error('stop'));
    await assert.rejects(aborted, { message: 'stop' });
    assert.equal(await blockedClients(t.client), 0);
  });

  it('refuses bad input and writes nothing', async () => {
    await raw(t.client, 'SET', 'text', 'x');
    await assert.rejects(new FixedLengthQueue(t.client, 'q', 0).enqueue('a'), /maxlen must be a positive integer/);
    await assert.rejects(new FadedQueue(t.client, 'q', -1).enqueue('a'), /maxlen must be a positive integer/);
    await assert.rejects(new FadedQueue(t.client, 'q', 3).enqueue(), /wrong number of arguments/);
    await assert.rejects(new FixedLengthQueue(t.client, 'text', 3).enqueue('a'), WrongType);
    await assert.rejects(new FadedQueue(t.client, 'text', 3).enqueueEvicting('a'), WrongType);
    assert.equal(await raw(t.client, 'EXISTS', 'q'), 0);
  });
});
