// The stock redlock 4.2.0 against redis-recipes/redlock under contention: 8 async workers (a client each, as 8
// processes would have), each taking one lock 200 times around a 1 ms critical section. The wait is the time from
// lock() to holding the lock. Three rounds of each, interleaved. Prints markdown tables (bench/results/redlock.md).
//
//   node bench/redlock.mjs            (after `npm ci && npm run build` in clients/node; servers from the environment:
//                                      REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER, RECIPES_MODULE, as for the tests)
import { createRequire } from 'node:module';
import { cpus, totalmem, release } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from '../clients/node/test/servers.mjs';

const require = createRequire(new URL('../clients/node/package.json', import.meta.url));
const Stock = require('redlock');
const Dropin = require('redis-recipes/redlock');
const Redis = require('ioredis');

const WORKERS = 8;
const ROUNDS = 200;
const TTL = 1000;
const ROUNDS_OF_EACH = 3;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function start(path) {
  const server = await launch(path);
  const probe = new Redis({ port: server.port });
  const info = await probe.info('server');
  const version = (/valkey_version:(\S+)/.exec(info) ?? /redis_version:(\S+)/.exec(info))[1];
  probe.disconnect();
  return { port: server.port, version, stop: () => server.stop() };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function run(port, Redlock, options) {
  const clients = [];
  for (let i = 0; i < WORKERS; i++) clients.push(new Redis({ port }));
  await Promise.all(clients.map((c) => c.ping()));
  const waits = [];
  let failures = 0;
  const began = performance.now();
  await Promise.all(clients.map(async (client) => {
    const redlock = new Redlock([client], options);
    for (let i = 0; i < ROUNDS; i++) {
      const asked = performance.now();
      let lock;
      while (!lock) {
        try {
          lock = await redlock.lock('bench:redlock', TTL);
        } catch {
          failures++; // redlock gave up (LockError): asked again, the wait counted from the first ask.
        }
      }
      waits.push(performance.now() - asked);
      await sleep(1);
      await lock.unlock();
    }
  }));
  const seconds = (performance.now() - began) / 1000;
  await Promise.all(clients.map((c) => c.quit()));
  waits.sort((a, b) => a - b);
  return {
    seconds,
    rate: (WORKERS * ROUNDS) / seconds,
    p50: percentile(waits, 50),
    p99: percentile(waits, 99),
    max: waits[waits.length - 1],
    failures,
  };
}

const VARIANTS = [
  ['redlock 4.2.0, defaults (retryDelay 200, retryJitter 100)', Stock, {}],
  ['redlock 4.2.0, retryDelay 10', Stock, { retryDelay: 10 }],
  ['`redis-recipes/redlock`, defaults (a wait in the server)', Dropin, {}],
];

const FLAVORS = [['REDIS_SERVER'], ['REDIS8_SERVER'], ['VALKEY_SERVER']];
const only = process.argv[2];
const lines = [];
const cpu = cpus();
lines.push(`Machine: ${cpu.length} cores (${cpu[0]?.model}), ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Linux ` +
  `${release()}, Node ${process.version}. The workers and the server share the machine. ` +
  `${new Date().toISOString().slice(0, 10)}.`, '');
for (const [variable] of FLAVORS) {
  const path = process.env[variable];
  if (!path || (only && only !== variable)) continue;
  const server = await start(path);
  const name = variable === 'VALKEY_SERVER' ? 'Valkey' : 'Redis';
  lines.push(`### ${name} ${server.version}: ${WORKERS} workers × ${ROUNDS} critical sections of 1 ms, one lock`, '');
  lines.push('| lock | total s | locks/s | p50 wait ms | p99 wait ms | longest wait ms (range) | LockErrors |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|');
  // Rounds interleaved (the machine is shared): each cell the median of the rounds, the longest wait's range too.
  const results = VARIANTS.map(() => []);
  for (let round = 0; round < ROUNDS_OF_EACH; round++) {
    for (const [i, [, Redlock, options]] of VARIANTS.entries()) results[i].push(await run(server.port, Redlock, options));
  }
  for (const [i, [label]] of VARIANTS.entries()) {
    const m = (key) => median(results[i].map((r) => r[key]));
    const maxes = results[i].map((r) => Math.round(r.max));
    lines.push(`| ${label} | ${m('seconds').toFixed(2)} | ${Math.round(m('rate'))} | ${m('p50').toFixed(1)} | ` +
      `${m('p99').toFixed(1)} | ${Math.round(m('max'))} (${Math.min(...maxes)}–${Math.max(...maxes)}) | ` +
      `${results[i].map((r) => r.failures).join(', ')} |`);
  }
  lines.push('');
  server.stop();
}
console.log(lines.join('\n'));
