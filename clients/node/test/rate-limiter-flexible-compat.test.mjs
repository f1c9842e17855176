// What rate-limiter-flexible's own Redis suites check of the drop-in (`make peer-suites` runs them whole), and what
// the library's RateLimiterQueue does, each run on the drop-in and on the library (a development dependency) side by
// side and compared: clients that are not ready (each kind the library tells apart) under `rejectIfRedisNotReady`,
// the internal methods a subclass or a stub reaches (`_upsert`, `_get`, `_delete`, `_block`), the queue's
// `maxQueueSize` (only the calls that wait count) and its calls that never wait (0 tokens, a reward), and the errors'
// classes (the client's own, as the library's). On every server of the matrix, with the module and without it, with
// ioredis and node-redis.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as stock from 'rate-limiter-flexible';
import { RateLimiterRedis, RateLimiterQueue, RecipeError, connectionOf } from '../dist/index.js';
import { FastifyRateLimitStore } from '../dist/fastify-rate-limit.js';
import { RedisStore } from '../dist/express-rate-limit.js';
import { RedisStore as StockStore } from 'rate-limit-redis';
import { flavors, startServer, CLIENTS, closeClient, raw, replyErrorClasses, familyOf } from './harness.mjs';

const errorClasses = await replyErrorClasses();

/** `{ resolved }` or `{ rejected }`: a RateLimiterRes as its fields, an error as its class and message. */
async function settle(promise) {
  const shape = (value) => {
    if (value instanceof stock.RateLimiterRes) return value.toJSON();
    if (value instanceof Error) return { error: value.constructor.name, message: value.message };
    return value;
  };
  try {
    return { resolved: shape(await promise) };
  } catch (error) {
    return { rejected: shape(error) };
  }
}

// How far apart two `msBeforeNext` of the same outcome may be where a test does not time its calls: the two limiters'
// calls run one after the other, a few ms apart (more on a loaded machine); every window and block of these tests is
// whole seconds, so an outcome that differs differs by a second or more.
const SLACK_MS = 400;
// Where a test times its calls (inTurn), the two `msBeforeNext` may differ by the longest a pair of calls took so far
// (each limiter's window began, and is read, within such a pair: 413 ms once with both cores busy), and by this for
// the clocks' rounding.
const ROUNDING_MS = 50;

/**
 * Settles `theirs()` then `ours()`, as the comparisons do; `spans.longest` keeps the longest the two took so far, the
 * most their windows' starts and reads can lie apart.
 */
async function inTurn(theirs, ours, spans) {
  const started = performance.now();
  const a = await settle(theirs());
  const b = await settle(ours());
  spans.longest = Math.max(spans.longest, performance.now() - started);
  return [a, b];
}

/** Asserts two settled outcomes are the same, their `msBeforeNext` within `slack` ms of each other. */
function same(ours, theirs, what, slack = SLACK_MS) {
  const [a, b] = [ours.resolved ?? ours.rejected, theirs.resolved ?? theirs.rejected];
  if (typeof a?.msBeforeNext === 'number' && typeof b?.msBeforeNext === 'number'
    && Math.abs(a.msBeforeNext - b.msBeforeNext) <= slack) {
    ours = JSON.parse(JSON.stringify(ours));
    (ours.resolved ?? ours.rejected).msBeforeNext = b.msBeforeNext;
  }
  assert.deepEqual(ours, theirs, what);
}

/** The error `promise` rejects with. */
async function rejection(promise) {
  return promise.then((value) => assert.fail(`resolved ${JSON.stringify(value)}`), (error) => error);
}

/** rate-limiter-flexible's `TypeError` messages name its own calls on the client (`…eval is not a function`). */
function sameOutcome(ours, theirs, what) {
  if (theirs.rejected?.error === 'TypeError') {
    assert.equal(ours.rejected?.error, 'TypeError', `${what}: ${JSON.stringify(ours)}`);
  } else {
    same(ours, theirs, what);
  }
}

describe('rate-limiter-flexible drop-in: clients that are not ready', () => {
  // The objects the library's own suites pass as clients, and a few more of each kind.
  const FAKES = {
    'ioredis, closed': () => ({ status: 'closed' }),
    'ioredis, reconnecting': () => ({ status: 'reconnecting' }),
    'node-redis 3, isReady()': () => ({ isReady: () => false }),
    'node-redis 4 and later, isReady': () => ({ isReady: false }),
    'node-redis cluster, not open': () => ({ isOpen: false, _slots: { getClient: () => undefined } }),
    'node-redis cluster, the key\'s node not ready': () => ({ isOpen: true, _slots: { getClient: () => ({ isReady: false }) } }),
    'node-redis cluster, no node for the key': () => ({ isOpen: true, _slots: { getClient: () => { throw new Error('no slot'); } } }),
  };
  const CALLS = [['consume', 'k'], ['penalty', 'k', 2], ['reward', 'k'], ['get', 'k'], ['set', 'k', 3, 5], ['block', 'k', 5]];

  for (const [name, fake] of Object.entries(FAKES)) {
    it(`${name}: built as the library builds it; every call rejects "Redis connection is not ready", or goes to the insurance limiter`, async () => {
      const options = { points: 2, duration: 5, rejectIfRedisNotReady: true };
      const ours = new RateLimiterRedis({ storeClient: fake(), ...options });
      const theirs = new stock.RateLimiterRedis({ storeClient: fake(), ...options });
      for (const [method, ...args] of CALLS) {
        const [a, b] = [await settle(theirs[method](...args)), await settle(ours[method](...args))];
        same(b, a, `${method}`);
        assert.deepEqual(b, { rejected: { error: 'Error', message: 'Redis connection is not ready' } }, method);
      }
      const insured = (Limiter) => new Limiter({ storeClient: fake(), ...options, insuranceLimiter: new stock.RateLimiterMemory({ points: 1, duration: 5 }) });
      const [ourInsured, theirInsured] = [insured(RateLimiterRedis), insured(stock.RateLimiterRedis)];
      for (const [method, ...args] of [...CALLS, ['consume', 'k']]) {
        same(await settle(ourInsured[method](...args)), await settle(theirInsured[method](...args)), `insured ${method}`);
      }
      // Without rejectIfRedisNotReady, the calls go to the client: a TypeError on an object that is not one.
      const bare = new RateLimiterRedis({ storeClient: fake(), points: 2, duration: 5 });
      const stockBare = new stock.RateLimiterRedis({ storeClient: fake(), points: 2, duration: 5 });
      for (const [method, ...args] of [...CALLS, ['delete', 'k']]) {
        sameOutcome(await settle(bare[method](...args)), await settle(stockBare[method](...args)), `not checked: ${method}`);
      }
    });
  }

  it('a node-redis cluster is asked about the key\'s node, for a write or a read as the library asks', async () => {
    const asked = (calls) => ({ isOpen: true, _slots: { getClient: (key, readonly) => { calls.push([key, readonly]); return { isReady: false }; } } });
    const [ourCalls, theirCalls] = [[], []];
    const ours = new RateLimiterRedis({ storeClient: asked(ourCalls), points: 2, duration: 5, rejectIfRedisNotReady: true });
    const theirs = new stock.RateLimiterRedis({ storeClient: asked(theirCalls), points: 2, duration: 5, rejectIfRedisNotReady: true });
    for (const limiter of [ours, theirs]) {
      for (const [method, ...args] of CALLS) await limiter[method](...args).catch(() => undefined);
    }
    assert.deepEqual(ourCalls, theirCalls);
    assert.deepEqual(ourCalls.map(([, readonly]) => readonly), [false, false, false, true, false, false]);
  });
});

describe('rate-limiter-flexible drop-in: internals, the queue and errors, against the library', { concurrency: true }, () => {
  for (const flavor of flavors()) {
    for (const module of [true, false]) {
      describe(`on ${flavor.name} ${module ? 'with the module' : 'without it (fallback)'}`, { concurrency: true }, () => {
        let server;
        before(async () => {
          server = await startServer(flavor.path, { module });
        });
        after(async () => {
          await server.stop();
        });

        for (const [index, [kind, make]] of Object.entries(CLIENTS).entries()) {
          describe(kind, { concurrency: 1 }, () => {
            let client;
            let n = 0;
            const tag = index; // the kinds' keys apart on their server
            const clientErrorClass = errorClasses[kind];
            before(async () => {
              client = await make(server);
            });
            after(async () => {
              await connectionOf(client).close();
              await closeClient(client);
            });

            /** The drop-in's class (or a subclass of it made by `extend`) and the library's, same options. */
            function pair(options, extend = (Base) => Base) {
              n += 1;
              const common = { storeClient: client, ...options };
              if (familyOf(kind) === 'node-redis') common.useRedisPackage = true;
              const Theirs = extend(stock.RateLimiterRedis);
              const Ours = extend(RateLimiterRedis);
              return [new Theirs({ ...common, keyPrefix: `s${tag}${n}` }), new Ours({ ...common, keyPrefix: `o${tag}${n}` }), `${tag}${n}`];
            }

            it('a stubbed _block that fails fails the consume that blocks, as in the library', async () => {
              const [theirs, ours] = pair({ points: 1, duration: 1, blockDuration: 2 });
              for (const limiter of [theirs, ours]) limiter._block = () => Promise.reject(new Error('no block'));
              const [a, b] = [await settle(theirs.consume('k', 2)), await settle(ours.consume('k', 2))];
              same(b, a);
              assert.deepEqual(b, { rejected: { error: 'Error', message: 'no block' } });
            });

            it('a subclass\'s _upsert, _get and _delete are the ones called, with the library\'s arguments', async () => {
              const calls = { s: [], o: [] };
              const extend = (Base) => class extends Base {
                _upsert(rlKey, points, msDuration, forceExpire, options) {
                  calls[rlKey[0]].push(['_upsert', rlKey.slice(rlKey.indexOf(':')), points, msDuration, forceExpire, options]);
                  return super._upsert(rlKey, forceExpire ? points : points * 2, msDuration, forceExpire, options);
                }
                _get(rlKey, options) {
                  calls[rlKey[0]].push(['_get', rlKey.slice(rlKey.indexOf(':')), options]);
                  return super._get(rlKey, options);
                }
                _delete(rlKey, options) {
                  calls[rlKey[0]].push(['_delete', rlKey.slice(rlKey.indexOf(':')), options]);
                  return super._delete(rlKey, options).then((deleted) => (deleted ? 'yes' : 'no'));
                }
              };
              // Windows and blocks far longer than the steps take with both cores busy: none ends between the two
              // limiters' calls.
              const [theirs, ours, i] = pair({ points: 3, duration: 50, blockDuration: 70 }, extend);
              const steps = [['consume', 'k'], ['penalty', 'k'], ['get', 'k'], ['consume', 'k'], ['get', 'k'], ['reward', 'k'],
                ['set', 'k', 1, 40], ['block', 'k', 30], ['delete', 'k'], ['delete', 'k'], ['get', 'k']];
              const spans = { longest: 0 };
              for (const [method, ...args] of steps) {
                const [a, b] = await inTurn(() => theirs[method](...args), () => ours[method](...args), spans);
                same(b, a, method, spans.longest + ROUNDING_MS);
                assert.equal(await raw(client, 'GET', `o${i}:k`), await raw(client, 'GET', `s${i}:k`), `stored after ${method}`);
              }
              assert.deepEqual(calls.o, calls.s);
              assert.ok(calls.o.some(([name, , , , force]) => name === '_upsert' && force === true), 'the block went through _upsert');
            });

            it('_upsert, _get, _delete, _block and _getRateLimiterRes called directly answer as the library\'s', async () => {
              const [theirs, ours, i] = pair({ points: 5, duration: 5 });
              const res = async (limiter, changed, result) => settle(Promise.resolve(limiter._getRateLimiterRes(limiter.getKey('k'), changed, await result)));
              same(await res(ours, 2, ours._upsert(ours.getKey('k'), 2, 5000)), await res(theirs, 2, theirs._upsert(theirs.getKey('k'), 2, 5000)));
              same(await res(ours, 0, ours._get(ours.getKey('k'))), await res(theirs, 0, theirs._get(theirs.getKey('k'))));
              assert.equal(await ours._get(ours.getKey('absent')), null);
              assert.equal(await theirs._get(theirs.getKey('absent')), null);
              const blocked = Date.now();
              same(await settle(ours._block(ours.getKey('b'), 9, 3000)), await settle(theirs._block(theirs.getKey('b'), 9, 3000)));
              assert.equal(await raw(client, 'GET', `o${i}:b`), '9');
              // Set during the call sent at `blocked`, however long the calls after it took.
              const ttl = Number(await raw(client, 'PTTL', `o${i}:b`));
              assert.ok(ttl >= 2999 - (Date.now() - blocked) && ttl <= 3000, `block's TTL ${ttl}`);
              assert.equal(await ours._delete(ours.getKey('b')), await theirs._delete(theirs.getKey('b')));
              assert.equal(await ours._delete(ours.getKey('b')), false);
            });

            it('RateLimiterQueue: maxQueueSize counts only the calls that wait', async () => {
              const queues = (points, duration, maxQueueSize) => {
                const [theirs, ours] = pair({ points, duration });
                return [new stock.RateLimiterQueue(theirs, { maxQueueSize }), new RateLimiterQueue(ours, { maxQueueSize })];
              };
              const all = (queue, calls) => Promise.all(calls.map((call) => settle(call(queue))));
              // Three calls at once, all within the points: served at once, none waits.
              let [theirs, ours] = queues(5, 5, 1);
              const three = [(q) => q.removeTokens(1), (q) => q.removeTokens(1), (q) => q.removeTokens(1)];
              const stockThree = await all(theirs, three);
              assert.deepEqual(await all(ours, three), stockThree);
              assert.deepEqual(stockThree, [{ resolved: 4 }, { resolved: 3 }, { resolved: 2 }]);
              // maxQueueSize 0: a call that fits is served.
              [theirs, ours] = queues(5, 5, 0);
              same(await settle(ours.removeTokens(2)), await settle(theirs.removeTokens(2)));
              assert.deepEqual(await settle(ours.removeTokens(2)), { resolved: 1 });
              // One point a 2 s window, one waiter allowed: the first served, the second waits for the next window,
              // the third is refused at once.
              [theirs, ours] = queues(1, 2, 1);
              const calls = [(q) => q.removeTokens(1), (q) => q.removeTokens(1), (q) => q.removeTokens(1)];
              const [a, b] = await Promise.all([all(theirs, calls), all(ours, calls)]);
              same(b, a);
              assert.deepEqual(b, [{ resolved: 0 }, { resolved: 0 }, { rejected: { error: 'RateLimiterQueueError', message: 'Number of requests reached it\'s maximum 1' } }]);
            });

            it('RateLimiterQueue: 0 tokens and a reward answer at once, even while a call waits', async () => {
              const [theirs, ours] = pair({ points: 2, duration: 3 });
              const [stockQueue, queue] = [new stock.RateLimiterQueue(theirs), new RateLimiterQueue(ours)];
              // With no call waiting, as the library answers.
              for (const tokens of [1, 0, -1, 0, 2]) {
                same(await settle(queue.removeTokens(tokens)), await settle(stockQueue.removeTokens(tokens)), `removeTokens(${tokens})`);
              }
              // All points taken; a call waits for the window's end (3 s). The calls that give or take nothing answer
              // well before it.
              const waiting = queue.removeTokens(1);
              await new Promise((resolve) => setTimeout(resolve, 100));
              const started = Date.now();
              // (Without the module the waiter's refused try counted, as the library's does: 3 of 2 points.)
              assert.equal(await queue.removeTokens(0), 0);
              assert.equal(await queue.removeTokens(-1), module ? 1 : 0);
              // The 3 s window began at the first call, at least 100 ms before: these answered before its end.
              assert.ok(Date.now() - started < 1500, `answered in ${Date.now() - started} ms`);
              // Served: with the module, by the reward's room at once; without it, in the next window.
              assert.equal(await waiting, module ? 0 : 1);
            });

            it('errors keep the client\'s classes: a key of another type', async () => {
              const [theirs, ours, i] = pair({ points: 5, duration: 5 });
              await raw(client, 'LPUSH', `s${i}:k`, 'x');
              await raw(client, 'LPUSH', `o${i}:k`, 'x');
              // (`get`: the library's ioredis path resolves a RateLimiterRes of no points, docs/src/drop-ins.md.)
              for (const [method, ...args] of [['consume', 'k'], ['penalty', 'k'], ['reward', 'k']]) {
                const [a, b] = [await rejection(theirs[method](...args)), await rejection(ours[method](...args))];
                assert.ok(a instanceof clientErrorClass, `${method}: the library's ${a.constructor.name}`);
                assert.ok(b instanceof a.constructor, `${method}: ${b.constructor.name} is not a ${a.constructor.name}`);
                assert.ok(!(b instanceof RecipeError), method);
                assert.match(b.message, /^WRONGTYPE /, method);
              }
              const [stockQueue, queue] = [new stock.RateLimiterQueue(theirs), new RateLimiterQueue(ours)];
              const [a, b] = [await rejection(stockQueue.removeTokens(1, 'k')), await rejection(queue.removeTokens(1, 'k'))];
              assert.ok(b instanceof a.constructor && a instanceof clientErrorClass, `queue: ${b.constructor.name} vs ${a.constructor.name}`);
            });

            it('errors keep the client\'s classes: the @fastify/rate-limit and express-rate-limit stores', async () => {
              const i = `${tag}${++n}`;
              await raw(client, 'LPUSH', `f${i}k`, 'x');
              const Store = FastifyRateLimitStore.with(client, { nameSpace: `f${i}` });
              const store = new Store({});
              const error = await new Promise((resolve) => store.incr('k', (e) => resolve(e), 1000, 5));
              // The plugin's RedisStore takes ioredis only, whose command rejects with a ReplyError; node-redis's is
              // an ErrorReply.
              assert.ok(error instanceof clientErrorClass && !(error instanceof RecipeError), `fastify: ${error?.constructor?.name}`);
              assert.match(error.message, /^WRONGTYPE /);
              const sendCommand = familyOf(kind) === 'ioredis' ? (command, ...args) => client.call(command, ...args) : (...args) => client.sendCommand(args);
              const [theirs, ours] = [new StockStore({ sendCommand, prefix: `es${i}:` }), new RedisStore({ sendCommand, prefix: `eo${i}:` })];
              for (const s of [theirs, ours]) await s.init({ windowMs: 1000 });
              // rate-limit-redis replaces a key of another type that has no TTL by a counter; with a TTL, its INCR fails.
              for (const prefix of [`es${i}:`, `eo${i}:`]) await raw(client, 'LPUSH', `${prefix}k`, 'x');
              const [counted, ourCounted] = [await theirs.increment('k'), await ours.increment('k')];
              assert.equal(ourCounted.totalHits, counted.totalHits);
              assert.equal(await raw(client, 'GET', `eo${i}:k`), await raw(client, 'GET', `es${i}:k`));
              for (const prefix of [`es${i}:`, `eo${i}:`]) {
                await raw(client, 'DEL', `${prefix}k`);
                await raw(client, 'LPUSH', `${prefix}k`, 'x');
                await raw(client, 'PEXPIRE', `${prefix}k`, 10000);
              }
              const [a, b] = [await rejection(theirs.increment('k')), await rejection(ours.increment('k'))];
              assert.ok(a instanceof clientErrorClass, `rate-limit-redis: ${a.constructor.name}`);
              assert.ok(b instanceof a.constructor && !(b instanceof RecipeError), `express: ${b.constructor.name} vs ${a.constructor.name}`);
              assert.equal(await raw(client, 'TYPE', `eo${i}:k`), 'list');
            });
          });
        }
      });
    }
  }
});
