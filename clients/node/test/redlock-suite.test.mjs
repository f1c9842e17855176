// redlock 4.2.0's own test.js, unedited, run by its own mocha against `redis-recipes/redlock`: the package is
// fetched at test time (`npm pack redlock@4.2.0`) into a temporary directory with its devDependencies (chai, mocha,
// node-redis 3, ioredis 4) and bluebird; scripts/redlock-suite-shim.cjs (outside test/, where Node's runner
// would take it for a test) makes its `require('./redlock')` load the drop-in and points its clients (made for
// port 6379) at the test's server. Run on every server of the matrix, with the module (module commands, a wait in
// the server for one server) and without it (the scripts).
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flavors, startServer, CLIENTS, closeClient, raw } from './harness.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const DROPIN = join(HERE, '..', 'dist', 'redlock.js');
const SHIM = join(HERE, '..', 'scripts', 'redlock-suite-shim.cjs');
const VERSION = '4.2.0';
// The cases of test.js: 56 for each of its four client sets. None is deselected.
const CASES = 224;

function fetchSuite() {
  const dir = mkdtempSync(join(tmpdir(), 'recipes-redlock-'));
  const npm = (args) => execFileSync('npm', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  const tarball = npm(['pack', `redlock@${VERSION}`, '--silent']).trim().split('\n').pop();
  execFileSync('tar', ['xzf', tarball], { cwd: dir });
  const pkg = JSON.parse(readFileSync(join(dir, 'package', 'package.json'), 'utf8'));
  const wanted = ['chai', 'mocha', 'redis', 'ioredis'].map((name) => `${name}@${pkg.devDependencies[name]}`);
  wanted.push(`bluebird@${pkg.dependencies.bluebird}`);
  // Installed beside the package (its test.js finds them one directory up), not from its package.json, whose
  // devDependencies also name coverage tools the run does not use.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'redlock-suite', private: true }));
  npm(['install', '--no-audit', '--no-fund', '--no-package-lock', '--silent', ...wanted]);
  return dir;
}

function mocha(dir, port) {
  const suite = join(dir, 'package');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, 'node_modules', 'mocha', 'bin', 'mocha'), '--require', SHIM,
      '--reporter', 'dot', '--timeout', '10000', 'test.js'], {
      cwd: suite,
      env: { ...process.env, REDLOCK_DROPIN: DROPIN, REDLOCK_SUITE_PORT: String(port), REDLOCK_SUITE_DIR: suite },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (data) => (output += data));
    child.stderr.on('data', (data) => (output += data));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, output });
    });
  });
}

/** The calls of each command the server counted: { 'lock.macquire': n, evalsha: n, … }. */
async function commandCalls(server) {
  const client = await CLIENTS.ioredis(server);
  try {
    const calls = {};
    for (const line of String(await raw(client, 'INFO', 'commandstats')).split('\n')) {
      const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
      if (match) calls[match[1]] = Number(match[2]);
    }
    const info = await raw(client, 'COMMAND', 'INFO', 'LOCK.MACQUIRE');
    return { calls, module: Array.isArray(info) && info[0] !== null };
  } finally {
    await closeClient(client);
  }
}

const PLAN = [...flavors().map((flavor) => [flavor, true]), ...flavors().slice(0, 1).map((flavor) => [flavor, false])];

describe(`redlock ${VERSION}'s own test.js against redis-recipes/redlock`, () => {
  let dir;
  const runs = [];
  before(async () => {
    dir = fetchSuite();
    // The runs wait on timers more than they compute: two at a time, each with a server of its own. More at once
    // on a small machine makes test.js's own 100 ms margins flaky. With the module on every server; the scripts
    // (without the module) on plain Redis 7.0, the first of the matrix: they are redlock's semantics, not ours.
    const planned = [...PLAN].map(([flavor, module]) => ({ flavor, module, server: undefined }));
    let previous = Promise.resolve();
    for (let i = 0; i < planned.length; i += 2) {
      const pair = planned.slice(i, i + 2);
      const done = previous.then(() => Promise.all(pair.map(async (run) => {
        run.server = await startServer(run.flavor.path, { module: run.module });
        return mocha(dir, run.server.port);
      })));
      pair.forEach((run, j) => (run.result = done.then((results) => results[j])));
      runs.push(...pair);
      previous = done.catch(() => undefined);
    }
  });
  after(async () => {
    for (const run of runs) await run.server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [flavor, module] of PLAN) {
    {
      it(`passes on ${flavor.name} ${module ? 'with the module' : 'without the module (scripts)'}`, async () => {
        const run = runs.find((r) => r.flavor.name === flavor.name && r.module === module);
        const { code, signal, output } = await run.result;
        const passing = Number(/(\d+) passing/.exec(output)?.[1] ?? 0);
        assert.equal(code, 0, `mocha exited with ${code ?? signal}:\n${output}`);
        assert.equal(passing, CASES, output);
        assert.doesNotMatch(output, /failing|pending/);
        // Which way it went: module commands where the server has them, else the scripts.
        const { calls, module: has } = await commandCalls(run.server);
        if (module && has) {
          assert.ok(calls['lock.macquire'] > 0 && calls['lock.mreleaseif'] > 0 && calls['lock.mextend'] > 0, JSON.stringify(calls));
          assert.equal(calls.evalsha ?? 0, 0, JSON.stringify(calls));
        } else {
          assert.ok(calls.evalsha > 0, JSON.stringify(calls));
          assert.equal(calls['lock.macquire'] ?? 0, 0, JSON.stringify(calls));
        }
      });
    }
  }
});
