// redis-recipes/redis-semaphore beside the stock redis-semaphore 5.8.0: the same options, results and errors; a
// mutex on the library's key, so stock and drop-in exclude each other; with the module a contended mutex or a full
// semaphore handed over in the server's queue, first come first served, without polling; without it (or with a
// client the package does not know) the library's own stored format, shared with the stock library.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { flavors, startServer, CLIENTS, closeClient, raw } from './harness.mjs';
import { blockedClients, until } from './matrix.mjs';

const require = createRequire(import.meta.url);
const Stock = require('redis-semaphore');
const Ours = require('redis-recipes/redis-semaphore');
const { Mutex, Semaphore, MultiSemaphore, RedlockMutex, RedlockSemaphore, RedlockMultiSemaphore } = Ours;
const { TimeoutError, LostLockError, defaultTimeoutOptions } = Ours;
const { connectionOf } = require('redis-recipes');

const HERE = fileURLToPath(new URL('.', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Leases long enough that a process both cores' other work stalls keeps them; a refresh is seen by shortening
// the lease and waiting for it to grow back.
const QUICK = { lockTimeout: 2000, acquireTimeout: 100, refreshInterval: 100, retryInterval: 10 };

async function calls(client, command) {
  const stats = String(await raw(client, 'INFO', 'commandstats'));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/** A client the package does not know, on a real server: only the methods the library calls, passed through. */
function stranger(client) {
  return {
    set: (...args) => client.set(...args),
    eval: (...args) => client.eval(...args),
    evalsha: (...args) => client.evalsha(...args),
    zrem: (...args) => client.zrem(...args),
  };
}


describe('redis-semaphore drop-in: the API without a server', () => {
  it('exports the library\'s names and defaults', () => {
    assert.deepEqual(Object.keys(Stock).filter((name) => name !== '__esModule').sort(),
      Object.keys(Ours).filter((name) => name !== 'Lock' && name !== '__esModule').sort());
    assert.deepEqual(defaultTimeoutOptions, Stock.defaultTimeoutOptions);
    assert.ok(new TimeoutError('x') instanceof Error);
    assert.ok(new LostLockError('x') instanceof Error);
  });

  it('refuses the arguments the library refuses, with its messages', () => {
    const client = {};
    for (const [make, message] of [
      [() => new Mutex(null, 'key'), '"client" is required'],
      [() => new Mutex(client, ''), '"key" is required'],
      [() => new Mutex(client, 1), '"key" must be a string'],
      [() => new Mutex(client, 'key', { identifier: '' }), 'identifier must be not empty random string'],
      [() => new Mutex(client, 'key', { acquiredExternally: true }), 'acquiredExternally=true meanless without custom identifier'],
      [() => new Mutex(client, 'key', { externallyAcquiredIdentifier: '1', identifier: '1' }), 'Invalid usage. Use custom identifier and acquiredExternally: true'],
      [() => new Semaphore(client, 'key', 0), '"limit" is required'],
      [() => new Semaphore(client, 'key', '10'), '"limit" must be a number'],
      [() => new MultiSemaphore(client, 'key', 3, 0), '"permits" is required'],
      [() => new MultiSemaphore(client, 'key', 3, '1'), '"permits" must be a number'],
      [() => new RedlockMutex(null, 'key'), '"clients" array is required'],
      [() => new RedlockSemaphore([client], 'key', 0), '"limit" is required'],
      [() => new RedlockMultiSemaphore([client], 'key', 3, 0), '"permits" is required'],
    ]) {
      assert.throws(make, { message });
    }
    assert.match(new Mutex(client, 'key').identifier, UUID);
    assert.match(new Mutex(client, 'key', { identifierSuffix: 'abc' }).identifier, new RegExp(`${UUID.source.slice(0, -1)}-abc$`));
    assert.equal(new Semaphore(client, 'key', 2, { identifier: 'abc' }).identifier, 'abc');
    assert.equal(new Mutex(client, 'key').isAcquired, false);
  });

  it('does not report a lock lost by a refresh that ends after its release', async () => {
    class Slow extends Ours.Lock {
      _kind = 'test-lock';
      _key = 'key';
      async _refresh() {
        await sleep(200);
        return false;
      }
      async _acquire() {
        return true;
      }
      async _release() {}
    }
    const lock = new Slow({ lockTimeout: 1000, acquireTimeout: 1000, refreshInterval: 50 });
    let lost = 0;
    lock._onLockLost = () => lost++;
    await lock.acquire();
    await sleep(100);
    await lock.release();
    await sleep(250);
    assert.equal(lost, 0);
  });
});

for (const flavor of flavors()) {
  for (const module of [true, false]) {
    describe(`redis-semaphore drop-in on ${flavor.name} ${module ? 'with' : 'without'} the module`, () => {
      let server;
      let client;
      before(async () => {
        server = await startServer(flavor.path, { module });
        client = await CLIENTS.ioredis(server);
      });
      after(async () => {
        await connectionOf(client).close();
        await closeClient(client);
        await server.stop();
      });

      it('mutex: the library\'s key and value; stock and drop-in exclude each other', async () => {
        const mine = new Mutex(client, 'm1', QUICK);
        const theirs = new Stock.Mutex(client, 'm1', QUICK);
        await mine.acquire();
        assert.equal(mine.isAcquired, true);
        assert.equal(await client.get('mutex:m1'), mine.identifier);
        const pttl = await client.pttl('mutex:m1');
        assert.ok(pttl > 1500 && pttl <= 2000, `lease ${pttl}`);
        assert.equal(await theirs.tryAcquire(), false);
        await assert.rejects(new Mutex(client, 'm1', QUICK).acquire(), (error) => {
          assert.ok(error instanceof TimeoutError);
          assert.equal(error.message, 'Acquire mutex mutex:m1 timeout');
          return true;
        });
        // Refreshed every 100 ms.
        await client.pexpire('mutex:m1', 500);
        await until(async () => (await client.pttl('mutex:m1')) > 1000);
        assert.equal(await client.get('mutex:m1'), mine.identifier);
        await mine.release();
        assert.equal(mine.isAcquired, false);
        assert.equal(await client.exists('mutex:m1'), 0);
        await theirs.acquire();
        assert.equal(await new Mutex(client, 'm1', QUICK).tryAcquire(), false);
        // The drop-in releases only its own identifier.
        await new Mutex(client, 'm1', QUICK).release();
        assert.equal(await client.get('mutex:m1'), theirs.identifier);
        await theirs.release();
        // stopRefresh lets the lease end.
        const stopped = new Mutex(client, 'm1', { lockTimeout: 300, refreshInterval: 100 });
        await stopped.acquire();
        stopped.stopRefresh();
        await until(async () => (await client.exists('mutex:m1')) === 0);
        // Reusable.
        for (let round = 0; round < 2; round++) {
          await mine.acquire();
          assert.equal(await client.get('mutex:m1'), mine.identifier);
          await mine.release();
          assert.equal(await client.exists('mutex:m1'), 0);
        }
      });

      it('acquireAttemptsLimit bounds the wait as it bounds the library\'s polling', async () => {
        const holder = new Mutex(client, 'n1', QUICK);
        await holder.acquire();
        // The tries the server saw: the module's LOCK.ACQUIRE (a try, then a wait), the library's SET NX.
        const tries = () => calls(client, module ? 'lock\\.acquire' : 'set');
        for (const [options, sent, least, most] of [
          [{ acquireAttemptsLimit: 1 }, 1, 0, 2000],
          [{ acquireAttemptsLimit: 3, retryInterval: 100 }, module ? 2 : 3, 190, 2000],
          [{ acquireTimeout: 0 }, 0, 0, 2000],
        ]) {
          const before = await tries();
          const began = Date.now();
          assert.equal(await new Mutex(client, 'n1', { ...QUICK, acquireTimeout: 5000, ...options }).tryAcquire(), false);
          const took = Date.now() - began;
          assert.equal(await tries() - before, sent, JSON.stringify(options));
          // Bounded by the attempts (about 200 ms), not by acquireTimeout (5 s).
          assert.ok(took >= least && took <= most, `${JSON.stringify(options)}: ${took} ms`);
        }
        await holder.release();
      });

      it('an aborted acquire rejects with the signal\'s reason and holds nothing', async () => {
        for (const make of [
          () => new Mutex(client, 'a1', { ...QUICK, acquireTimeout: 5000 }),
          () => new Semaphore(client, 'a1', 1, { ...QUICK, acquireTimeout: 5000 }),
          () => new MultiSemaphore(client, 'a2', 3, 2, { ...QUICK, acquireTimeout: 5000 }),
        ]) {
          const holder = make();
          await holder.acquire();
          const other = make();
          await assert.rejects(other.acquire(AbortSignal.timeout(30)), { name: 'TimeoutError', message: 'The operation was aborted due to timeout' });
          assert.equal(other.isAcquired, false);
          await holder.release();
          const next = make();
          assert.equal(await next.tryAcquire(), true, 'the aborted waiter kept nothing');
          await next.release();
        }
      });

      it('refreshes not while a refresh runs; acquiredExternally refreshes instead of acquiring', async () => {
        const mutex = new Mutex(client, 'r1', { ...QUICK, refreshInterval: 20 });
        let count = 0;
        let running = 0;
        let most = 0;
        mutex._refresh = async () => {
          most = Math.max(most, ++running);
          await sleep(100);
          running--;
          return ++count > 0;
        };
        await mutex.acquire();
        await until(async () => count >= 2);
        mutex.stopRefresh();
        assert.equal(most, 1, 'one refresh at a time');
        await client.del('mutex:r1');

        for (const [make, read] of [
          [(options) => new Mutex(client, 'e1', options), async (id) => (await client.get('mutex:e1')) === id],
          [(options) => new Semaphore(client, 'e2', 3, options), async (id) => (module
            ? (await raw(client, 'POOL.HOLDERS', 'semaphore:e2')).some(([, owner]) => owner === id)
            : (await client.zscore('semaphore:e2', id)) !== null)],
        ]) {
          const external = make({ ...QUICK, refreshInterval: 0 });
          await external.acquire();
          const local = make({ ...QUICK, identifier: external.identifier, acquiredExternally: true });
          const old = make({ ...QUICK, externallyAcquiredIdentifier: external.identifier });
          assert.equal(await local.tryAcquire(), true);
          assert.equal(await old.tryAcquire(), true);
          await sleep(250);
          assert.equal(await read(external.identifier), true, 'refreshed by the local instance');
          local.stopRefresh();
          old.stopRefresh();
          await local.release();
          await old.release();
          assert.equal(await read(external.identifier), false);
          // Nothing to refresh: not acquired.
          assert.equal(await make({ ...QUICK, identifier: 'nobody', acquiredExternally: true }).tryAcquire(), false);
        }
      });

      it('a lost lock: onLockLost with this.isAcquired false, else an unhandled LostLockError', async () => {
        for (const [make, lose, kind, key] of [
          [(options) => new Mutex(client, 'l1', options), () => client.set('mutex:l1', 'another'), 'mutex', 'mutex:l1'],
          [(options) => new Semaphore(client, 'l2', 2, options), () => client.del('semaphore:l2'), 'semaphore', 'semaphore:l2'],
          [(options) => new MultiSemaphore(client, 'l3', 3, 2, options), () => client.del('semaphore:l3'), 'multi-semaphore', 'semaphore:l3'],
        ]) {
          const lost = [];
          const lock = make({ ...QUICK, onLockLost(error) { lost.push([this.isAcquired, error]); } });
          await lock.acquire();
          await lose();
          await until(async () => lost.length === 1);
          assert.equal(lock.isAcquired, false);
          assert.equal(lost[0][0], false);
          assert.ok(lost[0][1] instanceof LostLockError);
          assert.equal(lost[0][1].message, `Lost ${kind} for key ${key}`);

          await client.del(key);
        }
        // Without onLockLost, the process ends on the unhandled LostLockError, as with the library.
        const script = `
          const { Semaphore } = require('redis-recipes/redis-semaphore');
          const client = new (require('ioredis'))({ port: ${server.port} });
          const lock = new Semaphore(client, 'l4', 2, ${JSON.stringify(QUICK)});
          lock.acquire().then(() => client.del('semaphore:l4')).then(() => setTimeout(() => process.exit(0), 3000));`;
        const ended = await new Promise((resolve) => {
          execFile(process.execPath, ['-e', script], { cwd: HERE }, (error, stdout, stderr) => resolve([error?.code, stderr]));
        });
        assert.equal(ended[0], 1);
        assert.match(ended[1], /Lost semaphore for key semaphore:l4/);
      });

      it('semaphore: at most limit holders; released permits go to the waiters', async () => {
        const make = () => new Semaphore(client, 's1', 2, { ...QUICK, acquireTimeout: 2000 });
        const [a, b, c] = [make(), make(), make()];
        await a.acquire();
        await b.acquire();
        assert.equal(await new Semaphore(client, 's1', 2, QUICK).tryAcquire(), false);
        await assert.rejects(new Semaphore(client, 's1', 2, QUICK).acquire(),
          { message: 'Acquire semaphore semaphore:s1 timeout' });
        if (module) {
          const holders = await raw(client, 'POOL.HOLDERS', 'semaphore:s1');
          assert.deepEqual(holders.map(([, owner]) => owner).sort(), [a.identifier, b.identifier].sort());
          // The lease on the server's clock: its end about lockTimeout from now.
          const time = await raw(client, 'TIME');
          const now = Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000);
          for (const [, , end] of holders) assert.ok(end > now && end <= now + 2000, `${end - now}`);
        } else {
          assert.deepEqual((await client.zrange('semaphore:s1', 0, -1)).sort(), [a.identifier, b.identifier].sort());
        }
        const waiting = c.acquire();
        await sleep(50);
        await a.release();
        await waiting;
        assert.equal(c.isAcquired, true);
        await b.release();
        await c.release();
        if (!module) assert.equal(await client.exists('semaphore:s1'), 0);
      });

      it('multi-semaphore: permits all or none; a waiter for several gets them as they are freed', async () => {
        const make = (permits, extra = {}) => new MultiSemaphore(client, 'ms', 4, permits, { ...QUICK, acquireTimeout: 2000, ...extra });
        const big = make(3);
        await big.acquire();
        if (!module) {
          assert.deepEqual((await client.zrange('semaphore:ms', 0, -1)).sort(), [0, 1, 2].map((n) => `${big.identifier}_${n}`));
        }
        const one = new Semaphore(client, 'ms', 4, QUICK);
        assert.equal(await one.tryAcquire(), true, 'a single permit is left');
        assert.equal(await make(1, { acquireTimeout: 100 }).tryAcquire(), false);
        const two = make(2);
        const waiting = two.acquire();
        await sleep(50);
        assert.equal(two.isAcquired, false);
        await big.release();
        await waiting;
        assert.equal(two.isAcquired, true);
        assert.equal(await make(2, { acquireTimeout: 50 }).tryAcquire(), false);
        // More permits than the limit: never.
        assert.equal(await make(5, { acquireTimeout: 50 }).tryAcquire(), false);
        await two.release();
        await one.release();
        const all = make(4);
        assert.equal(await all.tryAcquire(), true);
        await all.release();
      });

      it('a client the package does not know runs the library\'s way, shared with the stock library', async () => {
        const other = stranger(client);
        const mine = new Semaphore(other, 'u1', 2, QUICK);
        const theirs = new Stock.Semaphore(client, 'u1', 2, QUICK);
        await mine.acquire();
        await theirs.acquire();
        assert.deepEqual((await client.zrange('semaphore:u1', 0, -1)).sort(), [mine.identifier, theirs.identifier].sort());
        assert.equal(await new Semaphore(other, 'u1', 2, QUICK).tryAcquire(), false);
        assert.equal(await new Stock.Semaphore(client, 'u1', 2, QUICK).tryAcquire(), false);
        await mine.release();
        await theirs.release();
        const mutex = new Mutex(other, 'u2', QUICK);
        await mutex.acquire();
        assert.equal(await client.get('mutex:u2'), mutex.identifier);
        await mutex.release();
        assert.equal(await client.exists('mutex:u2'), 0);
      });

      it('a semaphore a stock process holds is counted with it (its sorted set, the library\'s way)', async () => {
        const theirs = new Stock.Semaphore(client, 'z1', 2, QUICK);
        await theirs.acquire();
        const mine = new Semaphore(client, 'z1', 2, QUICK);
        await mine.acquire();
        assert.equal(await client.type('semaphore:z1'), 'zset');
        assert.equal(await client.zcard('semaphore:z1'), 2);
        assert.equal(await new Semaphore(client, 'z1', 2, QUICK).tryAcquire(), false);
        await sleep(200);
        assert.equal(await client.zcard('semaphore:z1'), 2, 'refreshed in the sorted set');
        await mine.release();
        await theirs.release();
      });

      it(module ? 'waits in the server: handed over first come first served, without polling'
        : 'polls every retryInterval without the module', async () => {
        for (const [make, command] of [
          [() => new Mutex(client, 'f1', { lockTimeout: 10_000, acquireTimeout: 10_000 }), 'lock\\.acquire'],
          [() => new Semaphore(client, 'f2', 1, { lockTimeout: 10_000, acquireTimeout: 10_000 }), 'pool\\.acquire'],
        ]) {
          const holder = make();
          await holder.acquire();
          const before = module ? await calls(client, command) : 0;
          const order = [];
          const pending = [];
          for (const [at, name] of ['a', 'b', 'c'].entries()) {
            const lock = make();
            pending.push(lock.acquire().then(async () => {
              order.push(name);
              await sleep(20);
              await lock.release();
            }));
            if (module) await until(async () => (await blockedClients(client)) === at + 1);
            else await sleep(30);
          }
          await holder.release();
          await Promise.all(pending);
          if (module) {
            assert.deepEqual(order, ['a', 'b', 'c']);
            assert.equal(await calls(client, command) - before, 6, 'one try and one wait each');
          } else {
            assert.equal(new Set(order).size, 3);
          }
        }
      });

      it('a wait after the connections dropped (a server restart) opens a new connection', async () => {
        const holder = new Mutex(client, 'k1', QUICK);
        await holder.acquire();
        const first = new Mutex(client, 'k1', { ...QUICK, acquireTimeout: 5000 });
        const waited = first.acquire();
        await sleep(30);
        await holder.release();
        await waited;
        await first.release();
        // Every connection dropped, the idle one kept for waits included (it does not reconnect).
        const probe = await CLIENTS.ioredis(server);
        try {
          await probe.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
        } finally {
          await closeClient(probe);
        }
        await until(async () => client.status === 'ready' && (await client.ping()) === 'PONG');
        await holder.acquire();
        const second = new Mutex(client, 'k1', { ...QUICK, acquireTimeout: 5000 });
        const again = second.acquire();
        await sleep(30);
        await holder.release();
        await again;
        assert.equal(second.isAcquired, true);
        await second.release();
      });

      it('the Redlock classes: the library\'s way on a quorum of servers', async () => {
        // Three databases of the server stand for three servers; the third is a client that is closed.
        const clients = [];
        for (const db of [1, 2, 3]) clients.push(await CLIENTS.ioredis(server, { db }));
        const down = clients[2];
        down.disconnect();
        try {
          const mutex = new RedlockMutex(clients, 'q1', QUICK);
          await mutex.acquire();
          assert.equal(await clients[0].get('mutex:q1'), mutex.identifier);
          assert.equal(await clients[1].get('mutex:q1'), mutex.identifier);
          assert.equal(await new RedlockMutex(clients, 'q1', QUICK).tryAcquire(), false);
          await clients[1].pexpire('mutex:q1', 500);
          await until(async () => (await clients[1].pttl('mutex:q1')) > 1000);
          assert.equal(await clients[1].get('mutex:q1'), mutex.identifier, 'refreshed');
          await mutex.release();
          assert.equal(await clients[0].exists('mutex:q1'), 0);

          const semaphore = new RedlockSemaphore(clients, 'q2', 1, QUICK);
          await semaphore.acquire();
          assert.deepEqual(await clients[0].zrange('semaphore:q2', 0, -1), [semaphore.identifier]);
          await assert.rejects(new RedlockSemaphore(clients, 'q2', 1, QUICK).acquire(),
            { message: 'Acquire redlock-semaphore semaphore:q2 timeout' });
          await semaphore.release();
          const multi = new RedlockMultiSemaphore(clients, 'q3', 3, 2, QUICK);
          await multi.acquire();
          assert.deepEqual((await clients[1].zrange('semaphore:q3', 0, -1)).sort(), [`${multi.identifier}_0`, `${multi.identifier}_1`]);
          assert.equal(await new RedlockMultiSemaphore(clients, 'q3', 3, 2, QUICK).tryAcquire(), false);
          await multi.release();
          assert.equal(await clients[1].exists('semaphore:q3'), 0);
          // Two of three down: no quorum.
          clients[1].disconnect();
          assert.equal(await new RedlockMutex(clients, 'q4', QUICK).tryAcquire(), false);
        } finally {
          for (const other of clients) other.disconnect();
        }
      });
    });
  }
}
