// The stock redis-semaphore 5.8.0 against redis-recipes/redis-semaphore, the same code otherwise:
// - contended: 8 async workers (a client each, as 8 processes would have), each taking a `Mutex` (or a slot of a
//   `Semaphore` of limit 2) 200 times around a 1 ms critical section. The wait is the time from acquire() to
//   holding it; a TimeoutError (the library gave up after acquireTimeout) is asked again, the wait still counted
//   from the first ask.
// - uncontended: one worker taking and releasing a `Mutex` (or a `Semaphore`'s slot) 1000 times, nobody else on
//   the key: acquire-and-release pairs a second.
// Three contended rounds of each variant, interleaved, then seven uncontended ones, interleaved (a shared machine's
// load swings: short rounds side by side compare better); each cell the median of the rounds, with its range.
// Prints markdown tables (bench/results/redis-semaphore.md).
//
//   node bench/redis-semaphore.mjs   (after `npm ci && npm run build` in clients/node; servers from the environment:
//                                     REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER, RECIPES_MODULE, as for the tests)
import { createRequire } from 'node:module';
import { cpus, loadavg, totalmem, release } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from '../clients/node/test/servers.mjs';

const require = createRequire(new URL('../clients/node/package.json', import.meta.url));
const Stock = require('redis-semaphore');
const Dropin = require('redis-recipes/redis-semaphore');
const { connectionOf } = require('redis-recipes');
const Redis = require('ioredis');

const WORKERS = 8;
const ROUNDS = 200;
const ALONE = 1000;
const ROUNDS_OF_EACH = 3;
const ALONE_ROUNDS = 7;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function start(path) {
  const server = await launch(path);
  const probe = new Redis({ port: server.port });
  const info = await probe.info('server');
  const version = (/valkey_version:(\S+)/.exec(info) ?? /redis_version:(\S+)/.exec(info))[1];
  probe.disconnect();
  return { port: server.port, version, stop: () => server.stop() };
}

/** A lock of `library` on `client`: its Mutex, or a slot of its Semaphore of limit 2. */
function make(library, kind, client, key) {
  return kind === 'mutex' ? new library.Mutex(client, key) : new library.Semaphore(client, key, 2);
}

async function contended(port, library, kind) {
  const clients = [];
  for (let i = 0; i < WORKERS; i++) clients.push(new Redis({ port }));
  await Promise.all(clients.map((c) => c.ping()));
  const waits = [];
  let failures = 0;
  const key = `bench:${kind}:${Math.random()}`;
  const began = performance.now();
  await Promise.all(clients.map(async (client) => {
    for (let i = 0; i < ROUNDS; i++) {
      const lock = make(library, kind, client, key);
      const asked = performance.now();
      for (;;) {
        try {
          await lock.acquire();
          break;
        } catch {
          failures++; // TimeoutError: asked again, the wait counted from the first ask.
        }
      }
      waits.push(performance.now() - asked);
      await sleep(1);
      await lock.release();
    }
  }));
  const seconds = (performance.now() - began) / 1000;
  for (const client of clients) {
    await connectionOf(client).close();
    await client.quit();
  }
  waits.sort((a, b) => a - b);
  return { seconds, p50: percentile(waits, 50), p99: percentile(waits, 99), max: waits[waits.length - 1], failures };
}

async function alone(port, library, kind) {
  const client = new Redis({ port });
  await client.ping();
  const key = `bench:alone:${kind}:${Math.random()}`;
  const began = performance.now();
  for (let i = 0; i < ALONE; i++) {
    const lock = make(library, kind, client, key);
    await lock.acquire();
    await lock.release();
  }
  const seconds = (performance.now() - began) / 1000;
  await connectionOf(client).close();
  await client.quit();
  return ALONE / seconds;
}

const VARIANTS = [
  ['redis-semaphore 5.8.0 `Mutex` (polls every 10 ms)', Stock, 'mutex'],
  ['`redis-recipes/redis-semaphore` `Mutex` (a wait in the server)', Dropin, 'mutex'],
  ['redis-semaphore 5.8.0 `Semaphore`, limit 2', Stock, 'semaphore'],
  ['`redis-recipes/redis-semaphore` `Semaphore`, limit 2', Dropin, 'semaphore'],
];

const FLAVORS = ['REDIS_SERVER', 'REDIS8_SERVER', 'VALKEY_SERVER'];
const only = process.argv[2];
const lines = [];
const cpu = cpus();
lines.push(`Machine: ${cpu.length} cores (${cpu[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ` +
  `${release()}, Node ${process.version}. The workers and the server share the machine; its load average (1, 5, ` +
  `15 min) was ${loadavg().map((l) => l.toFixed(1)).join(', ')} when the run began. ${new Date().toISOString().slice(0, 10)}.`, '');
for (const variable of FLAVORS) {
  const path = process.env[variable];
  if (!path || (only && only !== variable)) continue;
  const server = await start(path);
  const name = variable === 'VALKEY_SERVER' ? 'Valkey' : 'Redis';
  lines.push(`### ${name} ${server.version}: ${WORKERS} workers × ${ROUNDS} critical sections of 1 ms; one worker alone × ${ALONE}, ${ALONE_ROUNDS} rounds`, '');
  lines.push('| lock | contended: total s | p50 wait ms | p99 wait ms | longest wait ms (range) | TimeoutErrors | alone: acquire+release/s (range) |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  const results = VARIANTS.map(() => []);
  const rates = VARIANTS.map(() => []);
  for (let round = 0; round < ROUNDS_OF_EACH; round++) {
    for (const [i, [, library, kind]] of VARIANTS.entries()) results[i].push(await contended(server.port, library, kind));
  }
  for (let round = 0; round < ALONE_ROUNDS; round++) {
    for (const [i, [, library, kind]] of VARIANTS.entries()) rates[i].push(await alone(server.port, library, kind));
  }
  for (const [i, [label]] of VARIANTS.entries()) {
    const m = (key) => median(results[i].map((r) => r[key]));
    const maxes = results[i].map((r) => Math.round(r.max));
    const rate = rates[i].map(Math.round);
    lines.push(`| ${label} | ${m('seconds').toFixed(2)} | ${m('p50').toFixed(1)} | ${m('p99').toFixed(1)} | ` +
      `${Math.round(m('max'))} (${Math.min(...maxes)}–${Math.max(...maxes)}) | ` +
      `${results[i].map((r) => r.failures).join(', ')} | ${median(rate)} (${Math.min(...rate)}–${Math.max(...rate)}) |`);
  }
  lines.push('');
  await server.stop();
}
console.log(lines.join('\n'));
