// `make peer-suites SEMAPHORE_REPO=/path/to/redis-semaphore`: redis-semaphore's own tests of its public classes
// (test/src/{Lock,index,RedisMutex,RedisSemaphore,RedisMultiSemaphore,RedlockMutex,RedlockSemaphore,
// RedlockMultiSemaphore}.test.ts of its repository, which its npm package does not ship), unedited, run by mocha
// against `redis-recipes/redis-semaphore` (the built dist/): with the module on every server of the environment's
// matrix (REDIS_SERVER, REDIS8_SERVER, VALKEY_SERVER), without it on the first, and, for reference, the npm
// package redis-semaphore 5.8.0 there. Its tests of the internal Lua steps (test/src/{mutex,semaphore,
// multiSemaphore,redlockMutex,redlockSemaphore,redlockMultiSemaphore,utils}/) call the library's private functions
// (`acquireLua`, `refreshMutex`, `createEval`, …), which the drop-in does not have: they do not apply.
//
// The files (and the suite's helpers test/setup.ts, redisClient.ts, unhandledRejection.ts, init.test.ts) are copied
// into a temporary directory beside what they need (mocha, chai, sinon, ioredis, ioredis-mock, ts-node to load
// TypeScript: the versions the repository's devDependencies name), installed there, never into this repository
// nor the given copy. There, generated modules stand for the library's src/ (each re-exporting the class of the
// target under test) and for test/shell.ts (its servers stopped and started again on their ports by this script
// instead of `docker compose`). Each run gets three servers of its own (REDIS_URI1..3).
//
// With the module, the cases named in DESELECTED are left out, each for the reason given there.
//
// Without SEMAPHORE_REPO it says it skipped, and exits 0. It exits 1 when a run of the drop-in fails a case.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../test/servers.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DROPIN = join(HERE, '..', 'dist', 'redis-semaphore.js');
const PUBLIC = ['Lock', 'index', 'RedisMutex', 'RedisSemaphore', 'RedisMultiSemaphore', 'RedlockMutex',
  'RedlockSemaphore', 'RedlockMultiSemaphore'].map((name) => `src/${name}.test.ts`);
const HELPERS = ['setup.ts', 'redisClient.ts', 'unhandledRejection.ts', 'init.test.ts'];
const PACKAGES = ['mocha@11.1.0', 'chai@4.5.0', 'chai-as-promised@7.1.2', 'sinon@19.0.4', 'sinon-chai@3.7.0',
  'ioredis@5.6.0', 'ioredis-mock@8.9.0', 'ts-node@10.9.2', 'typescript@5.8.2', 'debug@4.4.0',
  'redis-semaphore@5.8.0'];

/**
 * Cases left out with the module (mocha titles, matched in full): what they check is the library's stored format
 * of a semaphore (a sorted set of identifiers scored by the client's clock), which the module's pool replaces.
 */
export const DESELECTED = {
  'the semaphore is the module\'s pool, not the library\'s sorted set, which they read (ZRANGE, ZCARD) or write (ZADD)': [
    'Semaphore should acquire and release semaphore',
    'Semaphore should refresh lock every refreshInterval ms until release',
    'Semaphore should stop refreshing lock if stopped',
    'Semaphore should acquire maximum LIMIT semaphores',
    'Semaphore should support externally acquired semaphore (deprecated interface)',
    'Semaphore should support externally acquired semaphore',
    'Semaphore [Node shutdown] should lost lock when node become alive',
    'MultiSemaphore should acquire and release semaphore',
    'MultiSemaphore should refresh lock every refreshInterval ms until release',
    'MultiSemaphore should stop refreshing lock if stopped',
    'MultiSemaphore should acquire maximum LIMIT semaphores',
    'MultiSemaphore should support externally acquired semaphore (deprecated interface)',
    'MultiSemaphore should support externally acquired semaphore',
    'MultiSemaphore [Node shutdown] should lost lock when node become alive',
    'MultiSemaphore Compatibility with Semaphore should work with Semaphore',
  ],
  'the module\'s pool stays, its permits free, after the last release (the library\'s sorted set goes): GET of its key answers WRONGTYPE, not nil': [
    'Semaphore should reject after timeout',
    'Semaphore should abort when the given signal is aborted',
    'MultiSemaphore should reject after timeout',
    'MultiSemaphore should abort when the given signal is aborted',
  ],
};

function escape(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const repo = process.env.SEMAPHORE_REPO;
if (!repo) {
  console.log('peer-suites: skipped: no copy of redis-semaphore\'s repository given '
    + '(make peer-suites SEMAPHORE_REPO=/path/to/redis-semaphore)');
  process.exit(0);
}
const tests = join(resolve(repo), 'test');
for (const name of [...PUBLIC, ...HELPERS]) {
  if (!existsSync(join(tests, name))) {
    console.error(`peer-suites: ${join(tests, name)} is missing: SEMAPHORE_REPO must be a checkout of swarthy/redis-semaphore`);
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

const dir = mkdtempSync(join(tmpdir(), 'recipes-semaphore-suites-'));

/** The modules standing for the library's src/: each re-exports what the target (SEMAPHORE_TARGET) has. */
function writeSources() {
  const target = "const target = require(process.env.SEMAPHORE_TARGET);\n";
  const files = {
    'index.js': `${target}module.exports = target;\n`,
    'RedisMutex.js': `${target}module.exports = { __esModule: true, default: target.Mutex };\n`,
    'RedisSemaphore.js': `${target}module.exports = { __esModule: true, default: target.Semaphore };\n`,
    'RedisMultiSemaphore.js': `${target}module.exports = { __esModule: true, default: target.MultiSemaphore };\n`,
    'RedlockMutex.js': `${target}module.exports = { __esModule: true, default: target.RedlockMutex };\n`,
    'RedlockSemaphore.js': `${target}module.exports = { __esModule: true, default: target.RedlockSemaphore };\n`,
    'RedlockMultiSemaphore.js': `${target}module.exports = { __esModule: true, default: target.RedlockMultiSemaphore };\n`,
    'errors/LostLockError.js': `${target}module.exports = { __esModule: true, default: target.LostLockError };\n`,
    'errors/TimeoutError.js': `${target}module.exports = { __esModule: true, default: target.TimeoutError };\n`,
    // The library's index does not export its base class: its own file does.
    'Lock.js': `${target}const path = require('node:path');\n`
      + 'module.exports = { Lock: target.Lock ?? require(path.join(path.dirname(process.env.SEMAPHORE_TARGET), \'Lock\')).Lock };\n',
    'types.js': 'module.exports = {};\n',
    'utils/index.js': 'exports.delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));\n',
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, 'src', name)), { recursive: true });
    writeFileSync(join(dir, 'src', name), text);
  }
  // test/shell.ts's two functions, on this run's servers: SHUTDOWN NOSAVE, and the same server started again on
  // its port (SEMAPHORE_SERVERS: a JSON list of { port, path, module }).
  writeFileSync(join(dir, 'test', 'shell.js'), `'use strict';
const { spawn } = require('node:child_process');
const net = require('node:net');
const servers = JSON.parse(process.env.SEMAPHORE_SERVERS);
function answers(port) {
  return new Promise((resolve) => {
    const socket = net.createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.end('PING\\r\\n'); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}
async function until(check) {
  for (let tries = 0; tries < 2000; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('server did not change state');
}
exports.downRedisServer = async (num) => {
  const { port } = servers[num - 1];
  await new Promise((resolve) => {
    const socket = net.createConnection({ port, host: '127.0.0.1' }, () => socket.write('SHUTDOWN NOSAVE\\r\\n'));
    socket.on('close', resolve);
    socket.on('error', resolve);
  });
  await until(async () => !(await answers(port)));
};
exports.upRedisServer = async (num) => {
  const { port, path, module, dir } = servers[num - 1];
  if (await answers(port)) return;
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  if (module) args.push('--loadmodule', module);
  const child = spawn(path, args, { stdio: 'ignore', detached: false });
  process.on('exit', () => child.kill('SIGKILL'));
  await until(() => answers(port));
};
`);
}

/** The files to run, as mocha's arguments. */
const SPECS = ['test/init.test.ts', ...PUBLIC.map((name) => join('test', name))];

/** The full titles of the suite's cases (mocha --dry-run: no hook nor case runs, no server is needed). */
function listed() {
  const out = execFileSync(process.execPath, [join(dir, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--require',
    'ts-node/register', '--require', 'test/setup.ts', '--extension', 'ts', '--dry-run', '--reporter', 'json', ...SPECS], {
    cwd: dir,
    env: { ...process.env, SEMAPHORE_TARGET: DROPIN, SEMAPHORE_SERVERS: '[]', TS_NODE_TRANSPILE_ONLY: 'true',
      TS_NODE_COMPILER_OPTIONS: JSON.stringify({ module: 'commonjs', esModuleInterop: true, target: 'es2022' }) },
    maxBuffer: 64 * 1024 * 1024,
  }).toString();
  return JSON.parse(out.slice(out.indexOf('{'))).tests.map((test) => test.fullTitle);
}

/** Runs the files with mocha against `target` on three servers of its own: { passing, failing, pending, output }. */
async function run(target, server, module, grep) {
  const started = [];
  for (let n = 0; n < 3; n++) {
    started.push(await launch(server.path, { module: module ? process.env.RECIPES_MODULE : false }));
  }
  try {
    const env = {
      ...process.env,
      SEMAPHORE_TARGET: target,
      SEMAPHORE_SERVERS: JSON.stringify(started.map((s) => ({ port: s.port, path: server.path, dir: s.dir,
        module: module ? process.env.RECIPES_MODULE : false }))),
      TS_NODE_TRANSPILE_ONLY: 'true',
      TS_NODE_COMPILER_OPTIONS: JSON.stringify({ module: 'commonjs', esModuleInterop: true, target: 'es2022' }),
    };
    started.forEach((s, at) => (env[`REDIS_URI${at + 1}`] = s.url));
    const args = [join(dir, 'node_modules', 'mocha', 'bin', 'mocha.js'), '--require', 'ts-node/register',
      '--require', 'test/setup.ts', '--extension', 'ts', '--timeout', '5000', '--reporter', 'dot', '--exit'];
    if (grep) args.push('--grep', grep, '--invert');
    args.push(...SPECS);
    const output = await new Promise((done) => {
      const child = spawn(process.execPath, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (data) => (text += data));
      child.stderr.on('data', (data) => (text += data));
      const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        done(code === null ? `${text}\nmocha killed by ${signal}` : text);
      });
    });
    const count = (word) => Number(new RegExp(`(\\d+) ${word}`).exec(output)?.[1] ?? 0);
    return { passing: count('passing'), failing: count('failing'), pending: count('pending'), output };
  } finally {
    for (const s of started) await s.stop();
  }
}

let status = 0;
try {
  for (const name of [...PUBLIC, ...HELPERS]) {
    mkdirSync(dirname(join(dir, 'test', name)), { recursive: true });
    copyFileSync(join(tests, name), join(dir, 'test', name));
  }
  writeSources();
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'semaphore-suites', private: true }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--silent', ...PACKAGES],
    { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const deselected = Object.values(DESELECTED).flat();
  // Every deselected case must be one of the suite's (a title that matches none would deselect nothing).
  const titles = listed();
  // SEMAPHORE_LIST=1 prints the cases' titles (as DESELECTED names them) instead of running them.
  if (process.env.SEMAPHORE_LIST) console.log(titles.join('\n'));
  const unknown = deselected.filter((title) => !titles.includes(title));
  if (unknown.length > 0) {
    console.error(`peer-suites: deselected cases that are not in the suite:\n  ${unknown.join('\n  ')}`);
    process.exitCode = 2;
    throw new Error('stale deselection');
  }
  // SEMAPHORE_ALL=1 runs every case, the deselected ones too (to see what they find).
  const grep = process.env.SEMAPHORE_ALL ? undefined : `^(${deselected.map(escape).join('|')})$`;
  const only = process.env.SEMAPHORE_SERVERS_ONLY ? servers.slice(0, 1) : servers;
  const plan = [
    ...only.map((server) => ({ label: `redis-recipes/redis-semaphore on ${server.name} with the module`, target: DROPIN, server, module: true, ours: true, grep })),
    { label: `redis-recipes/redis-semaphore on ${servers[0].name} without the module (the library's way)`, target: DROPIN, server: servers[0], module: false, ours: true },
    { label: `redis-semaphore 5.8.0 from npm on ${servers[0].name} (reference)`, target: join(dir, 'node_modules', 'redis-semaphore', 'lib', 'index.js'), server: servers[0], module: false, ours: false },
  ];
  for (const entry of process.env.SEMAPHORE_LIST ? [] : plan) {
    const result = await run(entry.target, entry.server, entry.module, entry.grep);
    const total = result.passing + result.failing + result.pending;
    console.log(`peer-suites: ${entry.label}: ${result.passing} of ${total} passing`
      + `${result.failing ? `, ${result.failing} failing` : ''}${result.pending ? `, ${result.pending} pending` : ''}`
      + `${entry.grep ? ` (${deselected.length} deselected)` : ''}`);
    const failed = result.failing > 0 || result.pending > 0 || result.passing === 0;
    if (failed && entry.ours) status = 1;
    // The reference's failures are shown too: the suite's timing cases (leases of 50–300 ms refreshed every 80 ms)
    // fail on a loaded machine, the library's own as the drop-in's. SEMAPHORE_VERBOSE=1 shows every run's output.
    if (failed || process.env.SEMAPHORE_VERBOSE) console.log(result.output.replace(/^/gm, '  | '));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
