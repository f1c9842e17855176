// The book's smaller classes the Node package shares with the Python one: Cache and HashCache (CACHE), the
// fixed-window Limiter (RATE.FIXED), AutoReleaseLock and IdentityLock (LOCK).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cache, HashCache, Limiter, AutoReleaseLock, IdentityLock } from '../dist/index.js';
import { onEachServer, blockedClients, until } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('the book\'s Cache, HashCache, Limiter, AutoReleaseLock and IdentityLock', (t) => {
  it('Cache stores text byte-exact, with a TTL, and swaps it', async () => {
    const cache = new Cache(t.client);
    assert.equal(await cache.get('10086'), null);
    assert.equal(await cache.set('10086', '<html><p>Hello World!</p></html>', { ttl: 60_000 }), undefined);
    assert.equal(await cache.get('10086'), '<html><p>Hello World!</p></html>');
    const pttl = Number(await raw(t.client, 'PTTL', '10086'));
    assert.ok(pttl > 59_000 && pttl <= 60_000, `${pttl}`);
    assert.equal(await cache.update('10086', 'new'), '<html><p>Hello World!</p></html>');
    assert.equal(await cache.get('10086'), 'new');
    assert.equal(await raw(t.client, 'PTTL', '10086'), -1, 'SET without a TTL, as the book\'s');
    assert.equal(await cache.update('none', 'first'), null);
    await cache.set('é', 'ünïcode');
    assert.equal(await cache.get('é'), 'ünïcode');
  });

  it('HashCache writes the fields and their TTL in one step, and reads them back until they expire', async () => {
    const cache = new HashCache(t.client);
    assert.equal(await cache.get('User:10086'), null);
    const data = { id: 10086, name: 'Peter', gender: 'male', age: 56 };
    assert.equal(await cache.set('User:10086', data), undefined);
    assert.deepEqual(await cache.get('User:10086'), { id: '10086', name: 'Peter', gender: 'male', age: '56' });
    assert.equal(await raw(t.client, 'PTTL', 'User:10086'), -1);
    assert.equal(await cache.set('user::h', new Map([['name', 'Peter'], ['age', 56]]), { ttl: 200 }), undefined);
    assert.deepEqual(await cache.get('user::h'), { name: 'Peter', age: '56' });
    const pttl = Number(await raw(t.client, 'PTTL', 'user::h'));
    assert.ok(pttl > 0 && pttl <= 200, `${pttl}`);
    await sleep(300);
    assert.equal(await cache.get('user::h'), null);
    await raw(t.client, 'SET', 'text', 'x');
    await assert.rejects(cache.set('text', { a: 1 }, { ttl: 1000 }), { name: 'WrongType' });
  });

  it('Limiter counts a fixed window as the book does, in one RATE.FIXED a call', async () => {
    await raw(t.client, 'CONFIG', 'RESETSTAT');
    const limiter = new Limiter(t.client, 'Limiter:login', 500, 3);
    assert.equal(await limiter.remainingTime(), null);
    for (const left of [2, 1, 0]) {
      assert.equal(await limiter.isValid(), true);
      assert.equal(await limiter.remainingTime(), left);
    }
    assert.equal(await limiter.isValid(), false);
    assert.equal(await limiter.isValid(), false);
    assert.equal(await limiter.remainingTime(), 0);
    assert.equal(await raw(t.client, 'GET', 'Limiter:login'), '5', 'refused actions are counted, as INCR counts');
    const ttl = Number(await raw(t.client, 'PTTL', 'Limiter:login'));
    assert.ok(ttl > 0 && ttl <= 500, `${ttl}`);
    // The window ends 500 ms after it opened, whatever came since.
    await sleep(700);
    assert.equal(await limiter.remainingTime(), null);
    assert.equal(await limiter.isValid(), true);
    assert.equal(await limiter.remainingTime(), 2);
    await raw(t.client, 'SET', 'Limiter:stuck', '1');
    const stuck = new Limiter(t.client, 'Limiter:stuck', 60_000, 3);
    assert.equal(await stuck.isValid(), true);
    assert.equal(await stuck.remainingTime(), 1);
    const stuckTtl = Number(await raw(t.client, 'PTTL', 'Limiter:stuck'));
    assert.ok(stuckTtl > 59_000 && stuckTtl <= 60_000, `${stuckTtl}`);
    const closed = new Limiter(t.client, 'Limiter:closed', 60_000, 0);
    assert.equal(await closed.remainingTime(), null);
    assert.equal(await closed.isValid(), false);
    assert.equal(await closed.remainingTime(), 0);
    const stats = String(await raw(t.client, 'INFO', 'commandstats'));
    assert.match(stats, /cmdstat_rate\.fixed:calls=8,/);
    assert.doesNotMatch(stats, /cmdstat_eval/);
  });

  it('AutoReleaseLock ends by itself, and only its taker releases it early', async () => {
    const lock = new AutoReleaseLock(t.client, 'Lock:10086');
    assert.equal(await lock.acquire(5), true);
    const pttl = Number(await raw(t.client, 'PTTL', 'Lock:10086'));
    assert.ok(pttl > 4000 && pttl <= 5000, `${pttl}`);
    assert.equal(await new AutoReleaseLock(t.other, 'Lock:10086').acquire(5), false);
    assert.equal(await lock.acquire(5), false, 'held, even by itself');
    assert.equal(await new AutoReleaseLock(t.other, 'Lock:10086').release(), false);
    assert.equal(await lock.release(), true);
    assert.equal(await lock.acquire(150, 'ms'), true);
    await sleep(300);
    assert.equal(await lock.acquire(5), true, 'released by itself');
    assert.equal(await lock.release(), true);
    assert.equal(await lock.release(), false);
    await assert.rejects(lock.acquire(5, 'min'), TypeError);
    const named = new AutoReleaseLock(t.client, 'Lock:named', { token: 'me' });
    assert.equal(await named.acquire(1), true);
    assert.equal(await raw(t.client, 'GET', 'Lock:named'), 'me');
  });

  it('IdentityLock is released by its password only, and waits in the server\'s queue', async () => {
    const lock = new IdentityLock(t.client, 'Lock:identity');
    assert.equal(await lock.acquire('top_secret'), true);
    assert.equal(await lock.acquire('top_secret'), false, 'held, even with the same password');
    assert.equal(await new IdentityLock(t.other, 'Lock:identity').acquire('another'), false);
    assert.equal(await lock.release('wrong_password'), false);
    assert.equal(await lock.release('top_secret'), true);
    assert.equal(await lock.release('top_secret'), false);
    assert.equal(await lock.acquire('first'), true);
    const started = Date.now();
    assert.equal(await lock.acquire('second', { wait: 100 }), false);
    assert.ok(Date.now() - started >= 90, `${Date.now() - started} ms`);
    const waiting = new IdentityLock(t.other, 'Lock:identity').acquire('second', { wait: 5000 });
    await until(async () => (await blockedClients(t.client)) === 1);
    assert.equal(await lock.release('first'), true);
    assert.equal(await waiting, true);
    assert.equal(await raw(t.client, 'GET', 'Lock:identity'), 'second');
    const controller = new AbortController();
    const aborted = lock.acquire('third', { wait: 5000, signal: controller.signal });
    await until(async () => (await blockedClients(t.client)) === 1);
    controller.abort(new Error('stop'));
    await assert.rejects(aborted, { message: 'stop' });
    assert.equal(await blockedClients(t.client), 0);
    assert.equal(await raw(t.client, 'GET', 'Lock:identity'), 'second');
  });
});
