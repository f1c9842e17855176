// rate-limiter-flexible's RateLimiterRedis (its Lua script, EVALSHA) against the drop-in of the Node package
// (one RATE.FIXED a call), same ioredis client, same server, same options (points 1e9, duration 3600 s: every call
// allowed), fresh keys each round.
//
// Speed: ROUNDS rounds, each running CALLS consume() calls of one limiter then of the other (the order alternating
// round by round), CONCURRENCY calls in flight over KEYS keys. Calls a second: median and spread (min–max) over the
// rounds.
// Instructions: the server under callgrind; COST_CALLS consume() calls of each limiter between a zeroing and a dump
// of its counters (as bench/cost.py counts: everything the server executed, divided by the calls), after as many
// uncounted.
//
// Usage: node bench/dropin_rlf.mjs OUTPUT.md   (servers from REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER; the module
// from RECIPES_MODULE; clients/node built with `npm run build`). Runs `nice`d servers one at a time.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { launch } from '../clients/node/test/servers.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(ROOT, 'clients', 'node', 'package.json'));
const Redis = require('ioredis');
const stock = require('rate-limiter-flexible');
const ours = require(join(ROOT, 'clients', 'node', 'dist', 'rate-limiter-flexible.js'));

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = Number(process.env.CALLS ?? 20_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const KEYS = 1000;
const COST_CALLS = Number(process.env.COST_CALLS ?? 5000);
const MODULE = process.env.RECIPES_MODULE ?? join(ROOT, 'target', 'release', 'librecipes.so');

// The server `nice`d (under callgrind with `callgrind`, its dumps in the server's directory), with a client.
async function startServer(binary, { callgrind = false } = {}) {
  const wrap = (dir) => (callgrind
    ? ['nice', 'valgrind', '--tool=callgrind', `--callgrind-out-file=${join(dir, 'cg')}.%p`]
    : ['nice']);
  const server = await launch(binary, { module: MODULE, wrap, signal: 'SIGTERM', waitMs: 120_000 });
  const client = new Redis({ port: server.port });
  await client.ping();
  return { ...server, client, async stop() {
    client.disconnect();
    await server.stop();
  } };
}

function limiters(client, round) {
  const options = { storeClient: client, points: 1e9, duration: 3600 };
  return {
    stock: new stock.RateLimiterRedis({ ...options, keyPrefix: `stock${round}` }),
    ours: new ours.RateLimiterRedis({ ...options, keyPrefix: `ours${round}` }),
  };
}

async function drive(limiter, calls) {
  let next = 0;
  const worker = async () => {
    while (next < calls) {
      const i = next++;
      await limiter.consume(`user${i % KEYS}`);
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return calls / (Number(process.hrtime.bigint() - started) / 1e9);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function speed(binary) {
  const server = await startServer(binary);
  const version = await serverVersion(server.client);
  const rates = { stock: [], ours: [] };
  try {
    const warm = limiters(server.client, 'warm');
    await drive(warm.stock, 2000);
    await drive(warm.ours, 2000);
    for (let round = 0; round < ROUNDS; round++) {
      const pair = limiters(server.client, round);
      const order = round % 2 ? ['ours', 'stock'] : ['stock', 'ours'];
      for (const name of order) rates[name].push(await drive(pair[name], CALLS));
      await server.client.flushall();
    }
  } finally {
    await server.stop();
  }
  return { version, rates };
}

function totalOf(dump) {
  for (const line of readFileSync(dump, 'utf8').split('\n')) {
    if (line.startsWith('summary:') || line.startsWith('totals:')) return Number(line.split(/\s+/)[1]);
  }
  throw new Error(`no total in ${dump}`);
}

async function instructions(binary) {
  const server = await startServer(binary, { callgrind: true });
  const pid = await serverPid(server);
  const out = {};
  try {
    for (const name of ['stock', 'ours']) {
      const limiter = limiters(server.client, `cost${name}`)[name];
      await drive(limiter, COST_CALLS);
      const before = new Set(readdirSync(server.dir));
      execFileSync('callgrind_control', ['-z', String(pid)], { stdio: 'ignore' });
      await drive(limiter, COST_CALLS);
      execFileSync('callgrind_control', ['--dump', String(pid)], { stdio: 'ignore' });
      let dump;
      for (let i = 0; i < 600 && !dump; i++) {
        dump = readdirSync(server.dir).find((f) => f.startsWith('cg.') && f.split('.').length > 2 && !before.has(f));
        if (!dump) await sleep(100);
      }
      await sleep(300);
      out[name] = totalOf(join(server.dir, dump)) / COST_CALLS;
      rmSync(join(server.dir, dump));
    }
  } finally {
    await server.stop();
  }
  return out;
}

async function serverPid(server) {
  const info = await server.client.info('server');
  return Number(/process_id:(\d+)/.exec(info)[1]);
}

async function serverVersion(client) {
  const info = await client.info('server');
  const valkey = /valkey_version:(\S+)/.exec(info);
  return valkey ? `Valkey ${valkey[1]}` : `Redis ${/redis_version:(\S+)/.exec(info)[1]}`;
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');

async function main() {
  const output = process.argv[2];
  if (!output) throw new Error('usage: node bench/dropin_rlf.mjs OUTPUT.md');
  const servers = [process.env.REDIS_SERVER, process.env.REDIS8_SERVER, process.env.VALKEY_SERVER].filter(Boolean);
  const lines = [];
  const machine = `${cpus().length} × ${cpus()[0].model}, Node ${process.version}, ioredis ${require('ioredis/package.json').version}, ` +
    `rate-limiter-flexible ${require('rate-limiter-flexible/package.json').version}`;
  lines.push('| server | stock calls/s (median, min–max) | drop-in calls/s (median, min–max) | ratio | stock instructions/call | drop-in instructions/call | ratio |');
  lines.push('| --- | --- | --- | --- | --- | --- | --- |');
  for (const binary of servers) {
    const { version, rates } = await speed(binary);
    const cost = await instructions(binary);
    const ms = median(rates.stock);
    const mo = median(rates.ours);
    lines.push(`| ${version} | ${fmt(ms)} (${fmt(Math.min(...rates.stock))}–${fmt(Math.max(...rates.stock))}) | ` +
      `${fmt(mo)} (${fmt(Math.min(...rates.ours))}–${fmt(Math.max(...rates.ours))}) | ${(mo / ms).toFixed(2)}× | ` +
      `${fmt(cost.stock)} | ${fmt(cost.ours)} | ${(cost.ours / cost.stock).toFixed(2)}× |`);
    console.log(lines.at(-1));
  }
  const text = [
    '# rate-limiter-flexible: the drop-in against the stock RateLimiterRedis',
    '',
    `Machine: ${machine}. ${ROUNDS} interleaved rounds of ${CALLS.toLocaleString('en-US')} \`consume()\` calls each, ` +
      `${CONCURRENCY} in flight over ${KEYS} keys (points 1e9, duration 3600 s: every call allowed), one ioredis ` +
      `client, the server \`nice\`d on the same machine; instructions: the server under callgrind, ` +
      `${COST_CALLS.toLocaleString('en-US')} counted calls of each after as many uncounted, everything the server ` +
      'executed divided by the calls (as `bench/cost.py` counts). Made by `node bench/dropin_rlf.mjs`.',
    '',
    ...lines,
    '',
  ].join('\n');
  writeFileSync(output, text);
  console.log(text);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
