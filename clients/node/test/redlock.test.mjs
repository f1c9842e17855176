// redis-recipes/redlock beside the stock redlock 4.2.0 on the same keys: each refuses what the other holds, each
// releases and extends by the right value only, several resources are taken all or nothing, and with one server a
// contended lock is handed over in the server's queue, first come first served, without polling.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { flavors, startServer, CLIENTS, closeClient, raw } from './harness.mjs';
import { blockedClients, until } from './matrix.mjs';

const require = createRequire(import.meta.url);
const Stock = require('redlock');
const Redlock = require('redis-recipes/redlock');
const { LockError } = Redlock;
const { connectionOf } = require('redis-recipes');

const QUICK = { retryCount: 1, retryDelay: 20, retryJitter: 0 };

async function calls(client, command) {
  const stats = String(await raw(client, 'INFO', 'commandstats'));
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

/** How many locks the server has handed to a waiter inside the release that freed them (INFO recipes). */
async function handoffs(client) {
  const info = String(await raw(client, 'INFO', 'recipes'));
  return Number(/recipes_lock_handoffs_release:(\d+)/.exec(info)?.[1] ?? 0);
}

for (const flavor of flavors()) {
  for (const module of [true, false]) {
    for (const kind of Object.keys(CLIENTS)) {
      describe(`redlock drop-in on ${flavor.name} ${module ? 'with' : 'without'} the module, ${kind}`, () => {
        let server;
        let client; // the drop-in's
        let stockClient; // the stock redlock's: ioredis (it needs eval with a callback)
        let ours;
        let stock;
        before(async () => {
          server = await startServer(flavor.path, { module });
          client = await CLIENTS[kind](server);
          stockClient = await CLIENTS.ioredis(server);
          ours = new Redlock([client], QUICK);
          stock = new Stock([stockClient], QUICK);
        });
        after(async () => {
          await ours.quit().catch(() => undefined);
          await closeClient(stockClient);
          await server.stop();
        });

        it('stores what the stock redlock stores; each refuses what the other holds', async () => {
          const theirs = await stock.lock('side:1', 10_000);
          await assert.rejects(ours.lock('side:1', 1000), (error) => {
            assert.ok(error instanceof LockError);
            assert.equal(error.attempts, 2);
            assert.equal(error.message, 'Exceeded 1 attempts to lock the resource "side:1".');
            return true;
          });
          assert.equal(await raw(stockClient, 'GET', 'side:1'), theirs.value);
          // The stock redlock's lock released by the drop-in, by its value only.
          const wrong = new Redlock.Lock(ours, 'side:1', 'not-the-value', Date.now() + 5000, 1, 0);
          await assert.rejects(wrong.unlock(), LockError);
          assert.equal(await raw(stockClient, 'GET', 'side:1'), theirs.value);
          await ours.unlock(new Redlock.Lock(ours, 'side:1', theirs.value, Date.now() + 5000, 1, 0));
          assert.equal(await raw(stockClient, 'EXISTS', 'side:1'), 0);

          const mine = await ours.lock('side:1', 5000);
          assert.equal(mine.attempts, 1);
          assert.equal(mine.attemptsRemaining, 0);
          assert.match(mine.value, /^[0-9a-f]{32}$/);
          assert.equal(await raw(stockClient, 'GET', 'side:1'), mine.value);
          const pttl = Number(await raw(stockClient, 'PTTL', 'side:1'));
          assert.ok(pttl > 4000 && pttl <= 5000, `lease ${pttl}`);
          assert.ok(mine.expiration <= Date.now() + 5000 - 50 && mine.expiration > Date.now() + 4000);
          await assert.rejects(stock.lock('side:1', 1000), Stock.LockError);
          // The stock redlock extends and releases the drop-in's lock by its value.
          const same = new Stock.Lock(stock, 'side:1', mine.value, Date.now() + 4000, 1, 0);
          await stock.extend(same, 20_000);
          assert.ok(Number(await raw(stockClient, 'PTTL', 'side:1')) > 19_000);
          await stock.unlock(same);
          assert.equal(await raw(stockClient, 'EXISTS', 'side:1'), 0);
          await assert.rejects(mine.unlock(), LockError, 'already released');
          await assert.rejects(mine.extend(1000), (error) => error instanceof LockError && error.attempts === 0);
        });

        it('takes several resources all or nothing', async () => {
          const theirs = await stock.lock('multi:2', 10_000);
          await assert.rejects(ours.lock(['multi:1', 'multi:2', 'multi:3'], 5000), LockError);
          assert.equal(await raw(stockClient, 'EXISTS', 'multi:1', 'multi:3'), 0, 'nothing taken');
          await stock.unlock(theirs);
          const mine = await ours.lock(['multi:1', 'multi:2', 'multi:3'], 5000);
          assert.deepEqual(mine.resource, ['multi:1', 'multi:2', 'multi:3']);
          for (const key of mine.resource) assert.equal(await raw(stockClient, 'GET', key), mine.value);
          await assert.rejects(stock.lock(['multi:3', 'multi:4'], 1000), Stock.LockError);
          assert.equal(await raw(stockClient, 'EXISTS', 'multi:4'), 0);
          // Extended together, and only while every one is still the lock's.
          const extended = await mine.extend(30_000);
          assert.equal(extended, mine);
          for (const key of mine.resource) assert.ok(Number(await raw(stockClient, 'PTTL', key)) > 29_000);
          await raw(stockClient, 'SET', 'multi:2', 'someone-else');
          await assert.rejects(mine.extend(60_000), LockError);
          assert.equal(await raw(stockClient, 'GET', 'multi:2'), 'someone-else');
          // As redlock does, a failed extension releases what the lock still held.
          assert.equal(await raw(stockClient, 'EXISTS', 'multi:1', 'multi:3'), 0);
          await raw(stockClient, 'DEL', 'multi:1', 'multi:2', 'multi:3');
          // No resource at all: a lock of nothing, taken and released, as redlock's scripts answer.
          for (const redlock of [ours, stock]) {
            const none = await redlock.lock([], 1000);
            assert.deepEqual(none.resource, []);
            assert.equal(none.attempts, 1);
            await none.unlock();
          }
        });

        it('answers callbacks, and emits clientError for a key of another type', async () => {
          await raw(stockClient, 'SADD', 'typed', 'x');
          const errors = [];
          const listener = (error) => errors.push(error);
          ours.on('clientError', listener);
          const error = await new Promise((resolve) => ours.lock('typed', 1000, (e) => resolve(e)));
          ours.removeListener('clientError', listener);
          assert.ok(error instanceof LockError);
          assert.equal(errors.length, 2, 'one per attempt');
          assert.match(errors[0].message, /^WRONGTYPE/);
          assert.equal(await raw(stockClient, 'TYPE', 'typed'), 'set');
          const lock = await new Promise((resolve, reject) =>
            ours.lock('cb', 1000, (e, l) => (e ? reject(e) : resolve(l))));
          await new Promise((resolve, reject) => lock.unlock((e) => (e ? reject(e) : resolve())));
        });

        it(module ? 'waits in the server: handed over first come first served, without polling'
          : 'retries as redlock does without the module', async () => {
          const waiting = new Redlock([client], { retryCount: 10, retryDelay: 200, retryJitter: 100 });
          const holder = await waiting.lock('fifo', 10_000);
          const macquires = await calls(stockClient, 'lock\\.macquire');
          const handedOver = module ? await handoffs(stockClient) : 0;
          const order = [];
          const pending = [];
          for (const [at, name] of ['a', 'b', 'c'].entries()) {
            pending.push(waiting.lock('fifo', 10_000).then(async (lock) => {
              order.push([name, Date.now()]);
              await sleep(20);
              await lock.unlock();
              return lock;
            }));
            // With the module, each waiter parked in the server before the next is sent (a pause can be too short
            // with both cores busy); without it, redlock's retries take no turns.
            if (module) await until(async () => (await blockedClients(stockClient)) === at + 1);
            else await sleep(30);
          }
          await holder.unlock();
          const locks = await Promise.all(pending);
          if (module) {
            assert.deepEqual(order.map(([name]) => name), ['a', 'b', 'c']);
            // Each lock handed over inside the release that freed it, by the server (redlock would poll every
            // 200 ± 100 ms): counted by the server, not timed by this process, whose wake-ups both cores busy delay.
            assert.equal(await handoffs(stockClient) - handedOver, 3);
            // One try and one wait each: no polling.
            assert.equal(await calls(stockClient, 'lock\\.macquire') - macquires, 6);
            for (const lock of locks) assert.ok(lock.attempts >= 2 && lock.attempts <= 11, `${lock.attempts}`);
          } else {
            assert.equal(new Set(order.map(([name]) => name)).size, 3);
          }
        });

        if (kind === 'ioredis') {
          it('uses the keys the stock redlock uses under ioredis\'s keyPrefix, waits included', async () => {
            const prefixed = await CLIENTS.ioredis(server, { keyPrefix: 'app:' });
            const stockPrefixed = await CLIENTS.ioredis(server, { keyPrefix: 'app:' });
            try {
              const mine = new Redlock([prefixed], QUICK);
              const theirs = new Stock([stockPrefixed], QUICK);
              const held = await theirs.lock('pre', 10_000);
              assert.equal(await raw(stockClient, 'GET', 'app:pre'), held.value);
              await assert.rejects(mine.lock('pre', 1000), LockError);
              await theirs.unlock(held);
              const lock = await mine.lock(['pre', 'pre2'], 10_000);
              assert.equal(await raw(stockClient, 'GET', 'app:pre'), lock.value);
              assert.equal(await raw(stockClient, 'GET', 'app:pre2'), lock.value);
              assert.equal(await raw(stockClient, 'EXISTS', 'pre', 'pre2'), 0);
              await assert.rejects(theirs.lock('pre2', 1000), Stock.LockError);
              // A waiter on the prefixed keys gets them when the holder lets go.
              const waiting = new Redlock([prefixed], { retryCount: 10, retryDelay: 200, retryJitter: 100 });
              const next = waiting.lock('pre2', 10_000);
              if (module) await until(async () => (await blockedClients(stockClient)) === 1);
              else await sleep(50);
              const released = Date.now();
              const handedOver = module ? await handoffs(stockClient) : 0;
              await lock.extend(20_000);
              await lock.unlock();
              const got = await next;
              if (module) assert.equal(await handoffs(stockClient) - handedOver, 1, 'handed over by the release');
              // Without it, by a retry (every 200 ± 100 ms, ten at most): well before the 20 s lease would end.
              else assert.ok(Date.now() - released < 3500, 'a retry, not the lease\'s end');
              assert.equal(await raw(stockClient, 'GET', 'app:pre2'), got.value);
              await got.unlock();
              assert.equal(await raw(stockClient, 'EXISTS', 'app:pre', 'app:pre2'), 0);
            } finally {
              await connectionOf(prefixed).close();
              await closeClient(prefixed);
              await closeClient(stockPrefixed);
            }
          });
        }

        if (module) {
          it('a wait ends at the retries\' bound, or by its signal, leaving nothing queued or held', async () => {
            const holder = await ours.lock('bound', 10_000);
            const bounded = new Redlock([client], { retryCount: 2, retryDelay: 100, retryJitter: 50 });
            const started = Date.now();
            await assert.rejects(bounded.lock('bound', 1000), (error) => error.attempts === 3);
            const took = Date.now() - started;
            assert.ok(took >= 290 && took < 600, `${took} ms`);
            const controller = new AbortController();
            const pending = bounded.lockWithOptions('bound', 1000, { retryCount: -1, signal: controller.signal });
            await sleep(100);
            controller.abort();
            await assert.rejects(pending, { name: 'AbortError' });
            await holder.unlock();
            assert.equal(await raw(stockClient, 'EXISTS', 'bound'), 0, 'the aborted wait got nothing');
            const next = await ours.lock('bound', 1000);
            assert.equal(next.attempts, 1);
            await next.unlock();
          });
        }
      });
    }
  }
}

for (const flavor of flavors()) {
  describe(`redlock drop-in over three servers on ${flavor.name}, two with the module and one without`, () => {
    let servers;
    let clients;
    let stockClients;
    before(async () => {
      servers = [await startServer(flavor.path), await startServer(flavor.path, { module: false }),
        await startServer(flavor.path)];
      // The third server is stopped midway: its client gives up at once rather than reconnecting (redlock, stock
      // or not, waits for every server's answer).
      clients = [await CLIENTS['node-redis'](servers[0]), await CLIENTS.ioredis(servers[1]),
        await CLIENTS.ioredis(servers[2], { retryStrategy: () => null, maxRetriesPerRequest: 0 })];
      clients[2].on('error', () => undefined);
      stockClients = await Promise.all(servers.map((s) => CLIENTS.ioredis(s)));
    });
    after(async () => {
      for (const client of clients) await connectionOf(client).close();
      for (const client of [...clients, ...stockClients]) await closeClient(client).catch(() => undefined);
      for (const server of servers) await server.stop();
    });

    it('keeps redlock\'s quorum: each server its own way, agreeing with the stock redlock, surviving one down', async () => {
      const ours = new Redlock(clients, QUICK);
      const stock = new Stock(stockClients, QUICK);
      const lock = await ours.lock(['q:1', 'q:2'], 10_000);
      for (const client of stockClients) {
        assert.equal(await raw(client, 'GET', 'q:1'), lock.value);
        assert.equal(await raw(client, 'GET', 'q:2'), lock.value);
      }
      assert.equal(await calls(stockClients[0], 'lock\\.macquire'), 1);
      assert.equal(await calls(stockClients[1], 'lock\\.macquire'), 0);
      assert.ok(await calls(stockClients[1], 'evalsha') + await calls(stockClients[1], 'eval') >= 1);
      await assert.rejects(stock.lock('q:2', 1000), Stock.LockError);
      // Held on one server only by someone else: a quorum (two of three) is still had.
      await raw(stockClients[2], 'SET', 'q:3', 'other', 'PX', 10_000);
      const two = await ours.lock('q:3', 10_000);
      assert.equal(await raw(stockClients[2], 'GET', 'q:3'), 'other');
      assert.equal(await raw(stockClients[0], 'GET', 'q:3'), two.value);
      await two.unlock(); // released on two servers of three: a quorum
      assert.equal(await raw(stockClients[2], 'GET', 'q:3'), 'other');
      assert.equal(await raw(stockClients[0], 'EXISTS', 'q:3'), 0);
      // Held on two: no quorum; the server that granted it is given it back.
      await raw(stockClients[1], 'SET', 'q:4', 'other', 'PX', 10_000);
      await raw(stockClients[2], 'SET', 'q:4', 'other', 'PX', 10_000);
      await assert.rejects(ours.lock('q:4', 10_000), LockError);
      assert.equal(await raw(stockClients[0], 'EXISTS', 'q:4'), 0);
      await lock.unlock();
      for (const client of stockClients) assert.equal(await raw(client, 'EXISTS', 'q:1', 'q:2'), 0);
      // One server down: the other two still make a quorum; its errors are emitted.
      const errors = [];
      ours.on('clientError', (error) => errors.push(error));
      await servers[2].stop();
      const still = await ours.lock('q:5', 10_000);
      assert.ok(errors.length >= 1);
      await still.extend(20_000);
      assert.ok(Number(await raw(stockClients[0], 'PTTL', 'q:5')) > 19_000);
      await still.unlock();
      assert.equal(await raw(stockClients[1], 'EXISTS', 'q:5'), 0);
    });
  });
}
