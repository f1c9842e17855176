// The rate-limiter-flexible drop-in against the stock library (a development dependency), on the same server and
// client: every behaviour its documentation gives RateLimiterRedis is run on both, step by step, and the results
// (resolved or rejected, every field of RateLimiterRes), the stored value and its TTL are compared (times within a
// margin). On every server of the matrix, with the module (one RATE.FIXED a call) and without it (the fallback's
// script), with ioredis and node-redis. Then what the original does not have: the queue waiting in the server,
// first come first served across clients, and the union that consumes all its limits or none.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import * as stock from 'rate-limiter-flexible';
import {
  RateLimiterRedis, RateLimiterRes, RateLimiterQueue, RateLimiterUnion, RateLimiterQueueError, connectionOf,
} from '../dist/index.js';
import { flavors, startServer, CLIENTS, closeClient, raw, familyOf } from './harness.mjs';
import { onEachCluster } from './matrix.mjs';

// ms between the two TTLs and times where a test does not measure how long its calls took: the stock and our call
// are made one after the other or at once, and on a machine whose two cores are busy with the rest of the run the
// server has handled them up to a few hundred ms apart (262 ms seen). The smallest difference a wrong TTL gives in
// these steps is 500 ms (a duration of 0.5 s rounded to 1 s, or seconds taken for milliseconds), so the bound stays
// under it.
const MARGIN = 450;
// Where the steps are timed (compare), the TTLs and times may differ by the time the two calls of a step and the two
// reads after it took, measured around each (each limiter's window begins when its own call lands), and by this
// for the clocks' rounding: a wrong TTL shows whenever a step's calls took under 450 ms, as on a quiet machine.
const ROUNDING = 50;

function shape(value) {
  if (value instanceof stock.RateLimiterRes) return { res: value.toJSON() };
  if (value instanceof Error) return { error: value.message };
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.replace(/^(stock|ours)/, ''), shape(v)]));
  }
  return value;
}

async function settle(promise) {
  try {
    return { resolved: shape(await promise) };
  } catch (error) {
    return { rejected: shape(error) };
  }
}

/** Deep equality with numbers named msBeforeNext or ttl compared within `margin` ms. */
function near(actual, expected, path = '', margin = MARGIN) {
  if (typeof expected === 'number' && typeof actual === 'number' && /msBeforeNext|ttl/.test(path)) {
    assert.ok(Math.abs(actual - expected) <= margin, `${path}: ${actual} vs ${expected} (margin ${margin} ms)`);
    return;
  }
  if (expected && typeof expected === 'object') {
    assert.equal(typeof actual, 'object', `${path}: ${JSON.stringify(actual)} vs ${JSON.stringify(expected)}`);
    assert.deepEqual(Object.keys(actual ?? {}).sort(), Object.keys(expected).sort(), path);
    for (const key of Object.keys(expected)) near(actual[key], expected[key], `${path}.${key}`, margin);
    return;
  }
  assert.deepEqual(actual, expected, path);
}

async function stored(client, key) {
  const value = await raw(client, 'GET', key);
  const ttl = Number(await raw(client, 'PTTL', key));
  return { value, ttl: ttl > 0 ? ttl : ttl };
}

// Each server, client and mode has a server of its own: they run side by side.
describe('rate-limiter-flexible drop-in', { concurrency: true }, () => {
for (const flavor of flavors()) {
  for (const module of [true, false]) {
    for (const [kind, make] of Object.entries(CLIENTS)) {
      const label = `RateLimiterRedis on ${flavor.name} ${module ? 'with the module' : 'without it (fallback)'}, ${kind}`;
      describe(label, { concurrency: 1 }, () => {
        let server;
        let client;
        let other;
        let n = 0;
        before(async () => {
          server = await startServer(flavor.path, { module });
          client = await make(server);
          other = await make(server);
        });
        after(async () => {
          await connectionOf(client).close();
          await connectionOf(other).close();
          await closeClient(client);
          await closeClient(other);
          await server.stop();
        });

        /** A stock limiter and ours with the same options (prefixes `stock…`/`ours…`). */
        function pair(options) {
          n += 1;
          const common = { storeClient: client, ...options };
          if (familyOf(kind) === 'node-redis') common.useRedisPackage = true;
          const theirs = new stock.RateLimiterRedis({ ...common, keyPrefix: `stock${n}` });
          const ours = new RateLimiterRedis({ ...common, keyPrefix: `ours${n}` });
          return [theirs, ours, n];
        }

        /**
         * Runs each step on both limiters and compares the outcomes and what is stored under the key. The steps' windows
         * and blocks last tens of seconds, as nothing here waits for one to end: with both cores busy a 5 s window once
         * ended between the two limiters' reads (the stock key gone, ours not yet).
         */
        async function compare(options, steps, key = 'k') {
          const [theirs, ours, i] = pair(options);
          // The longest a step's two calls took so far: each limiter's window or block began within such a span.
          let calls = 0;
          for (const step of steps) {
            if (typeof step === 'number') {
              await sleep(step);
              continue;
            }
            const [method, ...args] = step;
            let started = performance.now();
            const [a, b] = await Promise.all([settle(theirs[method](...args)), settle(ours[method](...args))]);
            calls = Math.max(calls, performance.now() - started);
            near(b, a, `${method}(${args.join(', ')})`, 2 * calls + ROUNDING);
            started = performance.now();
            const [sa, sb] = await Promise.all([stored(client, `stock${i}:${key}`), stored(client, `ours${i}:${key}`)]);
            near(sb, sa, `stored after ${method}`, calls + (performance.now() - started) + ROUNDING);
          }
          return [theirs, ours, i];
        }

        it('consume: within points resolves, past them rejects a RateLimiterRes; the counter and TTL as stored by the original', async () => {
          await compare({ points: 3, duration: 50 }, [
            ['consume', 'k'], ['consume', 'k', 2], ['consume', 'k'], ['consume', 'k', 3], ['get', 'k'],
            ['penalty', 'k', 2], ['reward', 'k', 4], ['get', 'k'], ['get', 'absent'], ['consume', 'k', '2'],
            ['consume', 'k', 1.5], ['consume', 'k', '0'], ['consume', 'k', '-1'], ['delete', 'k'], ['delete', 'k'],
            ['consume', 'k'],
          ]);
          const value = await raw(client, 'GET', `ours${n}:k`);
          assert.equal(value, '1', 'a plain string counter');
          assert.equal(await raw(client, 'TYPE', `ours${n}:k`), 'string');
        });

        it('set and block: a counter for a duration (0: none; negative: the limiter\'s), a block past the points', async () => {
          await compare({ points: 2, duration: 40 }, [
            ['set', 'k', 5, 100], ['get', 'k'], ['consume', 'k'], ['set', 'k', 1, 0], ['get', 'k'], ['consume', 'k'],
            ['set', 'k', 0, -1], ['block', 'k', 70], ['consume', 'k'], ['get', 'k'], ['block', 'k', 0], ['get', 'k'],
          ]);
        });

        it('blockDuration: the call that first goes past the points blocks the key for blockDuration seconds', async () => {
          await compare({ points: 2, duration: 30, blockDuration: 90 }, [
            ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['get', 'k'], ['penalty', 'k'],
          ]);
          await compare({ points: 2, duration: 30, blockDuration: 90 }, [['consume', 'k', 5], ['consume', 'k']]);
          // A block under a second: the original stores the counter with no TTL (its SET without EX).
          await compare({ points: 1, duration: 30, blockDuration: 0.5 }, [['consume', 'k'], ['consume', 'k'], ['consume', 'k']]);
        });

        it('blockOnConsumed: the block starts at its own threshold', async () => {
          await compare({ points: 2, duration: 30, blockDuration: 80, blockOnConsumed: 4 }, [
            ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['get', 'k'],
          ]);
        });

        it('inMemoryBlockOnConsumed: keys past it are refused without a call, for inMemoryBlockDuration or the window', async () => {
          const [theirs, ours] = await compare({ points: 2, duration: 30, inMemoryBlockOnConsumed: 3, inMemoryBlockDuration: 20 }, [
            ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['penalty', 'k'], ['get', 'k'],
          ]);
          near(ours.getInMemoryBlockMsBeforeExpire(ours.getKey('k')), theirs.getInMemoryBlockMsBeforeExpire(theirs.getKey('k')), 'msBeforeNext');
          await compare({ points: 2, duration: 30, inMemoryBlockOnConsumed: 2 }, [
            ['consume', 'k'], ['consume', 'k'], ['consume', 'k'], ['delete', 'k'], ['consume', 'k'],
          ]);
          await compare({ points: 1, duration: 30, inMemoryBlockOnConsumed: 2, blockDuration: 50 }, [
            ['consume', 'k'], ['consume', 'k'], ['consume', 'k'],
          ]);
        });

        it('execEvenly: allowed calls are spread over the window', async () => {
          const [theirs, ours] = pair({ points: 4, duration: 3, execEvenly: true, execEvenlyMinDelayMs: 20 });
          for (let i = 0; i < 3; i++) {
            const timed = async (limiter) => {
              const t0 = Date.now();
              const res = await limiter.consume('k');
              return [res, Date.now() - t0];
            };
            const [[a, ta], [b, tb]] = await Promise.all([timed(theirs), timed(ours)]);
            near(shape(b), shape(a), 'consume');
            assert.ok(Math.abs(ta - tb) <= MARGIN, `delays ${ta} vs ${tb}`);
            if (i > 0) assert.ok(tb >= 400, `spread: ${tb} ms`);
          }
        });

        it('customDuration, duration 0 (no expiry) and an empty keyPrefix', async () => {
          await compare({ points: 3, duration: 50 }, [
            ['consume', 'k', 1, { customDuration: 2 }], ['consume', 'k', 1, { customDuration: 9 }], ['get', 'k'],
          ]);
          await compare({ points: 3, duration: 0 }, [['consume', 'k'], ['penalty', 'k', 3], ['get', 'k'], ['reward', 'k']]);
          await compare({ points: 3, duration: 0.5 }, [['consume', 'k'], ['consume', 'k']]);
          const theirs = new stock.RateLimiterRedis({ storeClient: client, points: 1, duration: 5, keyPrefix: '', ...(familyOf(kind) === 'node-redis' ? { useRedisPackage: true } : {}) });
          const ours = new RateLimiterRedis({ storeClient: client, points: 1, duration: 5, keyPrefix: '' });
          near(shape(await ours.consume('bare:ours')), shape(await theirs.consume('bare:stock')), 'consume');
          assert.equal(ours.getKey('x'), theirs.getKey('x'));
          assert.equal(await raw(client, 'GET', 'bare:ours'), '1');
          assert.equal(new RateLimiterRedis({ storeClient: client, points: 1, duration: 1 }).getKey('x'), 'rlflx:x');
          assert.equal(ours.parseKey('a:b'), theirs.parseKey('a:b'));
        });

        it('options are checked as the original checks them', () => {
          const bad = [
            { points: undefined, duration: 1 }, { points: 1, duration: -1 }, { points: 1, duration: 1, keyPrefix: 3 },
            { points: 5, duration: 1, blockOnConsumed: 2 }, { points: 5, duration: 1, inMemoryBlockOnConsumed: 2 },
            { points: 1, duration: 1, inMemoryBlockDuration: 2 }, { points: 1, duration: 1, insuranceLimiter: {} },
          ];
          for (const options of bad) {
            let expected;
            try {
              new stock.RateLimiterRedis({ storeClient: client, ...options });
            } catch (error) {
              expected = error.message;
            }
            assert.ok(expected, JSON.stringify(options));
            assert.throws(() => new RateLimiterRedis({ storeClient: client, ...options }), { message: expected });
          }
          assert.throws(() => new RateLimiterRedis({ points: 1, duration: 1 }), { message: 'storeClient is not set' });
        });

        it('RateLimiterRes: the peer\'s own class, its fields, toJSON and toString', () => {
          assert.equal(RateLimiterRes, stock.RateLimiterRes);
          assert.equal(RateLimiterQueueError, stock.RateLimiterQueueError);
          const res = new RateLimiterRes(1, 2, 3, true);
          assert.deepEqual(res.toJSON(), { remainingPoints: 1, msBeforeNext: 2, consumedPoints: 3, isFirstInDuration: true });
          assert.equal(String(res), '{"remainingPoints":1,"msBeforeNext":2,"consumedPoints":3,"isFirstInDuration":true}');
          const ours = new RateLimiterRedis({ storeClient: client, points: 1, duration: 1 });
          assert.ok(ours instanceof stock.RateLimiterCompatibleAbstract, 'accepted by the peer\'s wrappers');
        });

        it('insuranceLimiter takes over when the store fails; rejectIfRedisNotReady refuses at once', async () => {
          const broken = await make(server);
          await closeClient(broken);
          const options = { points: 2, duration: 5, rejectIfRedisNotReady: true, ...(familyOf(kind) === 'node-redis' ? { useRedisPackage: true } : {}) };
          const theirs = new stock.RateLimiterRedis({ storeClient: broken, ...options, insuranceLimiter: new stock.RateLimiterMemory({ points: 1, duration: 5 }) });
          const ours = new RateLimiterRedis({ storeClient: broken, ...options, insuranceLimiter: new stock.RateLimiterMemory({ points: 1, duration: 5 }) });
          for (const step of [['consume', 'k'], ['consume', 'k'], ['get', 'k'], ['penalty', 'k'], ['reward', 'k'], ['set', 'k', 1, 3], ['block', 'k', 2], ['delete', 'k'], ['get', 'k']]) {
            const [method, ...args] = step;
            near(await settle(ours[method](...args)), await settle(theirs[method](...args)), method);
          }
          const bare = new RateLimiterRedis({ storeClient: broken, ...options });
          const stockBare = new stock.RateLimiterRedis({ storeClient: broken, ...options });
          near(await settle(bare.consume('k')), await settle(stockBare.consume('k')), 'not ready');
          assert.deepEqual(await settle(bare.consume('k')), { rejected: { error: 'Redis connection is not ready' } });
        });

        it('one command a call: RATE.FIXED with the module (the block in the same call), the script without it', async () => {
          const [, ours, i] = pair({ points: 1, duration: 5, blockDuration: 20 });
          await raw(client, 'CONFIG', 'RESETSTAT');
          await ours.consume('k');
          const blocked = Date.now();
          await assert.rejects(ours.consume('k'), (res) => res instanceof RateLimiterRes && res.msBeforeNext === 20_000);
          const stats = String(await raw(client, 'INFO', 'commandstats'));
          if (module) {
            assert.match(stats, /cmdstat_rate\.fixed:calls=2,/);
            assert.doesNotMatch(stats, /cmdstat_(evalsha|eval|set|multi):/);
          } else {
            assert.doesNotMatch(stats, /cmdstat_rate\.fixed/);
            assert.match(stats, /cmdstat_evalsha:calls=2,/);
          }
          assert.equal(await raw(client, 'GET', `ours${i}:k`), '2');
          // The block began during the call sent at `blocked` (1.5 s of a loaded run went by before the PTTL once).
          const ttl = Number(await raw(client, 'PTTL', `ours${i}:k`));
          assert.ok(ttl >= 19_999 - (Date.now() - blocked) && ttl <= 20_000, `block ${ttl}`);
        });

        it('RateLimiterQueue: waiters are served first come first served across clients; tokens past the points and expiries refuse', async () => {
          // 2 s windows: the three waiters below, 300 ms apart, all queue while the first window lasts.
          const limiterA = new RateLimiterRedis({ storeClient: client, points: 2, duration: 2, keyPrefix: `q${++n}` });
          const limiterB = new RateLimiterRedis({ storeClient: other, points: 2, duration: 2, keyPrefix: `q${n}` });
          const a = new RateLimiterQueue(limiterA);
          const b = new RateLimiterQueue(limiterB);
          await assert.rejects(a.removeTokens(3), (e) => e instanceof stock.RateLimiterQueueError && /exceeds maximum 2/.test(e.message));
          assert.equal(await a.removeTokens(1), 1);
          assert.equal(await a.getTokensRemaining(), 1);
          assert.equal(await b.removeTokens(1), 0);
          // Three waiters for the next windows: first come first served, across the two clients where the server
          // queues them (the points left tell the order), in this process's order without the module.
          const second = module ? b : a;
          const started = Date.now();
          const waits = [];
          // 300 ms apart: each call first tries once (`WAIT 1`), then queues; with both cores busy a first try and
          // its queueing took over 30 ms once, and the second waiter queued ahead of the first.
          waits.push(a.removeTokens(2));
          await sleep(300);
          waits.push(second.removeTokens(1));
          await sleep(300);
          waits.push(a.removeTokens(1));
          assert.deepEqual(await Promise.all(waits), [0, 1, 0]);
          assert.ok(Date.now() - started >= 1900, 'the waiters waited for the windows');
          assert.equal(await a.getTokensRemaining('other'), 2);
          // An expiry ends the wait; an aborted wait takes nothing.
          const limiter = new RateLimiterRedis({ storeClient: client, points: 1, duration: 5, keyPrefix: `q${++n}` });
          const queue = new RateLimiterQueue(limiter, { maxQueueSize: 1 });
          assert.equal(await queue.removeTokens(1, 'x'), 0);
          const t0 = Date.now();
          await assert.rejects(queue.removeTokens(1, 'x', Math.floor(Date.now() / 1000) + 2), /expired before it could be fulfilled/);
          assert.ok(Date.now() - t0 < 2500);
          const controller = new AbortController();
          const pending = queue.removeTokens(1, 'x', 0, { signal: controller.signal });
          await assert.rejects(queue.removeTokens(1, 'x'), /reached it's maximum 1/);
          controller.abort();
          await assert.rejects(pending, { name: 'AbortError' });
          // A waiter in the server never counts until served; without the module, each refused try counts, as the
          // original's queue's tries do.
          if (module) assert.equal(await raw(client, 'GET', `q${n}:x`), '1');
        });

        it('RateLimiterUnion: all limits or none', async () => {
          const fast = new RateLimiterRedis({ storeClient: client, points: 2, duration: 5, keyPrefix: `u${++n}a` });
          const slow = new RateLimiterRedis({ storeClient: client, points: 3, duration: 10, keyPrefix: `u${n}b` });
          const union = new RateLimiterUnion(fast, slow);
          const first = await union.consume('k');
          assert.deepEqual(Object.keys(first).sort(), [`u${n}a`, `u${n}b`]);
          assert.equal(first[`u${n}a`].remainingPoints, 1);
          assert.equal(first[`u${n}b`].remainingPoints, 2);
          await union.consume('k');
          const refused = await union.consume('k').then(() => null, (rejection) => rejection);
          assert.deepEqual(Object.keys(refused), [`u${n}a`]);
          assert.equal(refused[`u${n}a`].consumedPoints, 3);
          // Nothing counted anywhere for the refused call: the slow limiter still has its third point.
          assert.equal(await raw(client, 'GET', `u${n}a:k`), '2');
          assert.equal(await raw(client, 'GET', `u${n}b:k`), '2');
          assert.equal((await slow.consume('k')).remainingPoints, 0);
          assert.throws(() => new RateLimiterUnion(), /at least one limiter/);
          assert.throws(() => new RateLimiterUnion({}), /all limiters have to be/);
        });
      });
    }
  }
}

});

// After the suites above (the cluster's set-up blocks the event loop while it runs).

onEachCluster('RateLimiterRedis', (t) => {
  it('each key on its node: consume, get, set, block, delete, the queue\'s wait and the union', async () => {
    const limiter = new RateLimiterRedis({ storeClient: t.client, points: 2, duration: 1, blockDuration: 3, keyPrefix: 'cl' });
    for (let i = 0; i < 12; i++) {
      assert.equal((await limiter.consume(`u${i}`)).consumedPoints, 1);
      assert.equal((await limiter.get(`u${i}`)).remainingPoints, 1);
      assert.equal((await limiter.set(`u${i}`, 2, 5)).consumedPoints, 2);
      await assert.rejects(limiter.consume(`u${i}`), (res) => res instanceof RateLimiterRes && res.msBeforeNext === 3000);
      assert.equal((await limiter.block(`u${i}`, 4)).msBeforeNext, 4000);
      assert.equal(await limiter.delete(`u${i}`), true);
    }
    const queue = new RateLimiterQueue(limiter);
    const started = Date.now();
    const left = await Promise.all([queue.removeTokens(2, 'q'), queue.removeTokens(1, 'q'), queue.removeTokens(1, 'r')]);
    assert.deepEqual(left.sort(), [0, 1, 1]);
    assert.ok(Date.now() - started >= 900, 'the second call on q waited for the next window');
    const wide = new RateLimiterRedis({ storeClient: t.client, points: 5, duration: 5, keyPrefix: 'cm' });
    const union = new RateLimiterUnion(limiter, wide);
    await union.consume('z', 2);
    await assert.rejects(union.consume('z'), (rejection) => Object.keys(rejection).join() === 'cl');
    assert.equal((await wide.get('z')).consumedPoints, 2);
  });
}, { concurrency: 1 });
