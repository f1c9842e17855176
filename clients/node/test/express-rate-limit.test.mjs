// The express-rate-limit store against rate-limit-redis (the stock store, a development dependency), on the same
// server and client: each behaviour their documentation gives the store (init, increment, get, decrement, resetKey,
// the window's end, the options and their errors) is run on both and the results, the stored counter and its TTL
// compared (times within a margin); then both behind express-rate-limit in an Express app, the responses and headers
// compared. On every server of the matrix, with the module (one RATE.FIXED a hit) and without it (the fallback's
// script), with ioredis and node-redis.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisStore as StockStore } from 'rate-limit-redis';
import { rateLimit } from 'express-rate-limit';
import express from 'express';
import { RedisStore } from '../dist/express-rate-limit.js';
import { flavors, startServer, startCluster, CLIENTS, CLUSTER_CLIENTS, closeClient, raw, familyOf } from './harness.mjs';

// ms the two stores' TTLs and reset times may differ by beyond the time their calls and reads took, measured around
// each (a store sets its window when its own call lands, and the two calls of a step and the two reads after it land
// up to a few hundred ms apart when both cores are busy): the clocks' rounding.
const ROUNDING = 50;

function sendCommandOf(kind, client) {
  return familyOf(kind) === 'ioredis'
    ? (command, ...args) => client.call(command, ...args)
    : (...args) => client.sendCommand(args);
}

async function settle(promise) {
  try {
    const value = await promise;
    if (value && value.resetTime instanceof Date) return { resolved: { totalHits: value.totalHits, reset: value.resetTime.getTime() - Date.now() } };
    return { resolved: value };
  } catch (error) {
    return { rejected: error.message };
  }
}

function near(actual, expected, what, margin) {
  if (actual?.resolved?.reset !== undefined && expected?.resolved?.reset !== undefined) {
    assert.ok(Math.abs(actual.resolved.reset - expected.resolved.reset) <= margin, `${what}: reset ${actual.resolved.reset} vs ${expected.resolved.reset} (margin ${margin} ms)`);
    assert.equal(actual.resolved.totalHits, expected.resolved.totalHits, `${what}: totalHits`);
    return;
  }
  assert.deepEqual(actual, expected, what);
}

async function stored(client, key) {
  return { value: await raw(client, 'GET', key), ttl: Number(await raw(client, 'PTTL', key)) };
}

describe('express-rate-limit store', { concurrency: true }, () => {
  for (const flavor of flavors()) {
    for (const module of [true, false]) {
      for (const [kind, make] of Object.entries(CLIENTS)) {
        describe(`on ${flavor.name} ${module ? 'with the module' : 'without it (fallback)'}, ${kind}`, { concurrency: 1 }, () => {
          let server;
          let client;
          let n = 0;
          before(async () => {
            server = await startServer(flavor.path, { module });
            client = await make(server);
          });
          after(async () => {
            await closeClient(client);
            await server.stop();
          });

          async function both(windowMs, options = {}) {
            n += 1;
            const sendCommand = sendCommandOf(kind, client);
            const theirs = new StockStore({ sendCommand, prefix: `stock${n}:`, ...options });
            const ours = new RedisStore({ sendCommand, prefix: `ours${n}:`, ...options });
            await Promise.all([theirs.init({ windowMs }), ours.init({ windowMs })]);
            return [theirs, ours, n];
          }

          async function compare(windowMs, steps) {
            const [theirs, ours, i] = await both(windowMs);
            // The longest a step's two calls took so far: each store's window began within such a span.
            let calls = 0;
            for (const step of steps) {
              if (typeof step === 'number') {
                await sleep(step);
                continue;
              }
              if (step.gone) {
                // Until both windows have ended: each store's first hit was sent at its own moment, which a busy
                // machine spreads further apart than any fixed sleep past the window allows for.
                const keys = [`stock${i}:${step.gone}`, `ours${i}:${step.gone}`];
                for (let t = 0; Number(await raw(client, 'EXISTS', ...keys)) > 0; t++) {
                  assert.ok(t < 500, `${keys} still there`);
                  await sleep(10);
                }
                continue;
              }
              const [method, key] = step;
              let started = performance.now();
              const [a, b] = await Promise.all([settle(theirs[method](key)), settle(ours[method](key))]);
              calls = Math.max(calls, performance.now() - started);
              if (method === 'get' && Number.isNaN(a.resolved.totalHits)) {
                // rate-limit-redis reads an absent key's hits as NaN (its script's nil through parseInt); ours as 0.
                assert.equal(b.resolved.totalHits, 0);
                b.resolved.totalHits = NaN;
              }
              near(b, a, `${method}(${key})`, 2 * calls + ROUNDING);
              started = performance.now();
              const [sa, sb] = await Promise.all([stored(client, `stock${i}:${key}`), stored(client, `ours${i}:${key}`)]);
              const margin = calls + (performance.now() - started) + ROUNDING;
              assert.equal(sb.value, sa.value, `stored after ${method}`);
              assert.ok(Math.abs(sb.ttl - sa.ttl) <= margin, `TTL after ${method}: ${sb.ttl} vs ${sa.ttl} (margin ${margin} ms)`);
            }
            return i;
          }

          it('increment, get, decrement and resetKey: the same hits, reset times, counter and TTL', async () => {
            const i = await compare(5000, [
              ['get', 'k'], ['increment', 'k'], ['increment', 'k'], ['get', 'k'], ['decrement', 'k'], ['get', 'k'],
              ['increment', 'k'], ['resetKey', 'k'], ['get', 'k'], ['increment', 'k'], ['decrement', 'k'], ['decrement', 'k'],
              ['get', 'k'],
            ]);
            assert.equal(await raw(client, 'TYPE', `ours${i}:k`), 'string');
          });

          it('the window ends: the next hit starts a new one', async () => {
            // A window of 1 s: the two hits and their reads take far less with both cores busy (the whole case took
            // 360 ms then), so both stores still hold the window at the second hit.
            await compare(1000, [['increment', 'w'], ['increment', 'w'], { gone: 'w' }, ['get', 'w'], ['increment', 'w'], ['get', 'w']]);
          });

          it('options: the default prefix, and the constructor\'s errors', async () => {
            const sendCommand = sendCommandOf(kind, client);
            assert.equal(new RedisStore({ sendCommand }).prefix, new StockStore({ sendCommand }).prefix);
            for (const options of [undefined, {}, { sendCommand, sendCommandCluster: () => 0 }]) {
              let expected;
              try {
                new StockStore(options);
              } catch (error) {
                expected = error.message;
              }
              assert.ok(expected);
              assert.throws(() => new RedisStore(options), { message: expected });
            }
          });

          it('resetExpiryOnChange (rate-limit-redis before 6): every hit starts the window again', async () => {
            const store = new RedisStore({ sendCommand: sendCommandOf(kind, client), prefix: `renew${++n}:`, resetExpiryOnChange: true });
            // Windows of 5 s: both hits land in the first one even when a starved client takes seconds between
            // them (with both cores busy, 1 s windows ran out between two hits 300 ms apart).
            await store.init({ windowMs: 5000 });
            // Bounds from the clock around each call (the server's clock, in whole ms), so they hold however long
            // a call takes on a busy machine: a window that starts again at a hit ends a window after the hit was
            // sent; one that does not ends a window after the first hit's answer, plus the second call's time.
            await store.increment('k');
            await sleep(300);
            const asked = Date.now();
            const second = await store.increment('k');
            assert.equal(second.totalHits, 2);
            assert.ok(second.resetTime.getTime() >= asked + 4999, `${second.resetTime.getTime() - asked}`);
            const pttl = Number(await raw(client, 'PTTL', `renew${n}:k`));
            assert.ok(pttl >= 4999 - (Date.now() - asked), `${pttl}`);
            const plain = new RedisStore({ sendCommand: sendCommandOf(kind, client), prefix: `plain${n}:` });
            await plain.init({ windowMs: 5000 });
            await plain.increment('k');
            const first = Date.now();
            await sleep(300);
            const sent = Date.now();
            const kept = await plain.increment('k');
            const took = Date.now() - sent;
            assert.equal(kept.totalHits, 2);
            assert.ok(kept.resetTime.getTime() <= first + 5001 + took, `${kept.resetTime.getTime() - first} ${took}`);
          });

          it('one command a hit: RATE.FIXED with the module, the script without it', async () => {
            const [, ours, i] = await both(5000);
            await raw(client, 'CONFIG', 'RESETSTAT');
            await ours.increment('k');
            await ours.increment('k');
            const stats = String(await raw(client, 'INFO', 'commandstats'));
            if (module) {
              assert.match(stats, /cmdstat_rate\.fixed:calls=2,/);
              assert.doesNotMatch(stats, /cmdstat_eval/);
            } else {
              assert.doesNotMatch(stats, /cmdstat_rate\.fixed/);
              assert.match(stats, /cmdstat_evalsha:calls=2,/);
            }
            assert.equal(await raw(client, 'GET', `ours${i}:k`), '2');
          });

          it('behind express-rate-limit: the same statuses and headers as rate-limit-redis', async () => {
            n += 1;
            const sendCommand = sendCommandOf(kind, client);
            const apps = [];
            for (const store of [new StockStore({ sendCommand, prefix: `appstock${n}:` }), new RedisStore({ sendCommand, prefix: `appours${n}:` })]) {
              const app = express();
              // A window of 20 s: the four hits land in the first one even when a starved client takes seconds
              // (with both cores busy, a 4 s window ran out before the fourth hit).
              app.use(rateLimit({ windowMs: 20000, limit: 2, standardHeaders: 'draft-7', legacyHeaders: true, store, validate: false }));
              app.get('/', (_req, res) => res.send('ok'));
              const listener = await new Promise((resolve) => {
                const s = app.listen(0, '127.0.0.1', () => resolve(s));
              });
              apps.push(listener);
            }
            try {
              for (let hit = 0; hit < 4; hit++) {
                const [a, b] = await Promise.all(apps.map(async (listener) => {
                  const response = await fetch(`http://127.0.0.1:${listener.address().port}/`);
                  const headers = Object.fromEntries([...response.headers].filter(([name]) => /ratelimit|retry-after/i.test(name)));
                  return { status: response.status, body: await response.text(), headers };
                }));
                // Reset times are whole seconds rounded up: the two may fall either side of a second.
                const resets = (r) => [Number(/reset=(\d+)/.exec(r.headers.ratelimit)?.[1]), Number(r.headers['x-ratelimit-reset']), Number(r.headers['retry-after'] ?? 0)];
                for (const [x, y] of resets(b).map((v, j) => [v, resets(a)[j]])) assert.ok(Math.abs(x - y) <= 1, `hit ${hit}: reset ${x} vs ${y}`);
                const strip = (r) => ({ ...r, headers: { ...r.headers, ratelimit: r.headers.ratelimit.replace(/reset=\d+/, ''), 'x-ratelimit-reset': '', 'retry-after': '' } });
                assert.deepEqual(strip(b), strip(a), `hit ${hit}`);
              }
            } finally {
              for (const listener of apps) listener.close();
            }
          });
        });
      }
    }
  }
});

// After the suites above (the cluster's set-up blocks the event loop while it runs).
for (const flavor of flavors().slice(0, 1)) {
  describe(`express-rate-limit store on a ${flavor.name} cluster with node-redis (sendCommandCluster)`, () => {
    let cluster;
    let client;
    before(async () => {
      cluster = await startCluster(flavor.path);
      client = await CLUSTER_CLIENTS['node-redis'](cluster);
    });
    after(async () => {
      await closeClient(client);
      await cluster.stop();
    });

    it('each key on its node, as rate-limit-redis routes it', async () => {
      const sendCommandCluster = ({ key, isReadOnly, command }) => client.sendCommand(key, isReadOnly, command);
      const ours = new RedisStore({ sendCommandCluster, prefix: 'o:' });
      const theirs = new StockStore({ sendCommandCluster, prefix: 's:' });
      await ours.init({ windowMs: 5000 });
      await theirs.init({ windowMs: 5000 });
      for (let i = 0; i < 12; i++) {
        for (let hit = 1; hit <= 2; hit++) {
          const [a, b] = await Promise.all([theirs.increment(`ip${i}`), ours.increment(`ip${i}`)]);
          assert.equal(b.totalHits, hit);
          assert.equal(b.totalHits, a.totalHits);
        }
        await ours.decrement(`ip${i}`);
        assert.equal((await ours.get(`ip${i}`)).totalHits, 1);
        await ours.resetKey(`ip${i}`);
        assert.equal((await ours.get(`ip${i}`)).totalHits, 0);
      }
    });
  });
}
