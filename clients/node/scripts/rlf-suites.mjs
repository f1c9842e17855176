// `make peer-suites RLF_REPO=/path/to/node-rate-limiter-flexible`: rate-limiter-flexible's own Redis suites
// (test/RateLimiterRedis.ioredis.test.js and test/RateLimiterRedis.redis.test.js of its repository, which its npm
// package does not ship), unedited, run by their own mocha against `redis-recipes/rate-limiter-flexible` (the built
// dist/): with the module on every server of the environment's matrix (REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER),
// without it (the drop-in's scripts) on the first, and, for reference, the copy's own lib/RateLimiterRedis.js there.
//
// The two files (and RedisOptions.js, which one requires) are copied into a temporary directory beside what they
// need (mocha, chai, sinon, ioredis, node-redis 4: the versions below, the lower bounds of the repository's
// devDependencies), installed there, never into this repository nor the given copy. rlf-suite-shim.cjs makes their
// `require('../lib/RateLimiterRedis')` load the class under test and points their clients (made for
// 127.0.0.1:6379) at the run's server, one started for each run with test/servers.mjs's `launch`.
//
// Without RLF_REPO it says it skipped, and exits 0. It exits 1 when a run of the drop-in does not pass every case.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../test/servers.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DROPIN = join(HERE, '..', 'dist', 'rate-limiter-flexible.js');
const SHIM = join(HERE, 'rlf-suite-shim.cjs');
const FILES = ['RateLimiterRedis.ioredis.test.js', 'RateLimiterRedis.redis.test.js'];
const NEEDS = ['RedisOptions.js'];
const PACKAGES = ['mocha@10.8.2', 'chai@4.5.0', 'sinon@17.0.2', 'ioredis@5.10.1', 'redis@4.7.1'];

const repo = process.env.RLF_REPO;
if (!repo) {
  console.log('peer-suites: skipped: no copy of rate-limiter-flexible\'s repository given '
    + '(make peer-suites RLF_REPO=/path/to/node-rate-limiter-flexible)');
  process.exit(0);
}
const tests = join(resolve(repo), 'test');
for (const name of [...FILES, ...NEEDS]) {
  if (!existsSync(join(tests, name))) {
    console.error(`peer-suites: ${join(tests, name)} is missing: RLF_REPO must be a checkout of animir/node-rate-limiter-flexible`);
    process.exit(2);
  }
}
if (!existsSync(DROPIN)) {
  console.error(`peer-suites: ${DROPIN} is missing: build the Node package first (npm run build)`);
  process.exit(2);
}
const servers = [['Redis 7.0', 'REDIS_SERVER'], ['Redis 8.6', 'REDIS8_SERVER'], ['Valkey 9', 'VALKEY_SERVER']]
  .filter(([, variable]) => process.env[variable]).map(([name, variable]) => ({ name, path: process.env[variable] }));
if (servers.length === 0 || !process.env.RECIPES_MODULE) {
  console.error('peer-suites: RECIPES_MODULE and at least one of REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER are needed');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'recipes-rlf-suites-'));
const suite = join(dir, 'test');

/** Runs the two files with mocha against `target` on a server of its own: { passing, failing, pending, output }. */
async function run(target, server, module) {
  const started = await launch(server.path, { module: module ? process.env.RECIPES_MODULE : false });
  try {
    const output = await new Promise((done) => {
      const child = spawn(process.execPath, [join(dir, 'node_modules', 'mocha', 'bin', 'mocha'), '--require', SHIM,
        '--reporter', 'dot', '--exit', ...FILES.map((name) => join('test', name))], {
        cwd: dir,
        env: { ...process.env, RLF_SUITE_TARGET: target, RLF_SUITE_PORT: String(started.port), RLF_SUITE_DIR: suite },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let text = '';
      child.stdout.on('data', (data) => (text += data));
      child.stderr.on('data', (data) => (text += data));
      const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        done(code === null ? `${text}\nmocha killed by ${signal}` : text);
      });
    });
    const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
    return { passing: count('passing'), failing: count('failing'), pending: count('pending'), output };
  } finally {
    await started.stop();
  }
}

let status = 0;
try {
  mkdirSync(suite);
  for (const name of [...FILES, ...NEEDS]) copyFileSync(join(tests, name), join(suite, name));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'rlf-suites', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--silent', ...PACKAGES],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const plan = [
    ...servers.map((server) => ({ label: `redis-recipes/rate-limiter-flexible on ${server.name} with the module`, target: DROPIN, server, module: true, ours: true })),
    { label: `redis-recipes/rate-limiter-flexible on ${servers[0].name} without the module (its scripts)`, target: DROPIN, server: servers[0], module: false, ours: true },
    { label: `the copy's own lib/RateLimiterRedis.js on ${servers[0].name} (reference)`, target: join(resolve(repo), 'lib', 'RateLimiterRedis.js'), server: servers[0], module: false, ours: false },
  ];
  for (const entry of plan) {
    const result = await run(entry.target, entry.server, entry.module);
    const total = result.passing + result.failing + result.pending;
    console.log(`peer-suites: ${entry.label}: ${result.passing} of ${total} passing`
      + `${result.failing ? `, ${result.failing} failing` : ''}${result.pending ? `, ${result.pending} pending` : ''}`);
    if (entry.ours && (result.failing > 0 || result.pending > 0 || result.passing === 0)) {
      status = 1;
      console.log(result.output.replace(/^/gm, '  | '));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
