// @fastify/rate-limit's own test file (test/redis-rate-limit.test.js of its published package, fetched here with
// `npm pack`, its runtime dependencies and the two development dependencies that file uses installed beside it) run
// against this package's store, on every server of the matrix, with the module and without it (the fallback). The
// glue (test/glue/fastify-shim.cjs) points the file's clients at the test server and builds our store where the
// plugin builds its RedisStore. Nothing of the file is changed; the cases deselected are listed in DESELECTED.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flavors, startServer } from './harness.mjs';

const VERSION = '11.2.0';
const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE = join(HERE, '..', 'dist', 'index.js');
const SHIM = join(HERE, 'glue', 'fastify-shim.cjs');

/** Test names skipped, each with its reason (listed on the drop-ins page, docs/src/drop-ins.md, too). */
const DESELECTED = {};

/** The plugin's package, unpacked in a directory kept between runs: its path. */
function fetchPlugin() {
  const root = join(tmpdir(), `redis-recipes-fastify-rate-limit-${VERSION}`);
  const dir = join(root, 'package');
  if (existsSync(join(root, 'ready'))) return dir;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const quiet = { cwd: root, stdio: 'ignore' };
  execFileSync('npm', ['pack', `@fastify/rate-limit@${VERSION}`], quiet);
  execFileSync('tar', ['xzf', `fastify-rate-limit-${VERSION}.tgz`], quiet);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const flags = ['--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund'];
  execFileSync('npm', ['install', '--omit=dev', ...flags], { cwd: dir, stdio: 'ignore' });
  // The development dependencies the Redis test file requires, beside the package (found by Node's lookup upward).
  writeFileSync(join(root, 'package.json'), '{"private":true}\n');
  const dev = ['fastify', 'ioredis'].map((name) => `${name}@${manifest.devDependencies[name]}`);
  execFileSync('npm', ['install', ...flags, ...dev], quiet);
  writeFileSync(join(root, 'ready'), '');
  return dir;
}

/** Runs the plugin's Redis test file against `server`: { code, output }. */
function runPluginTests(dir, server) {
  const skip = Object.keys(DESELECTED).flatMap((name) => ['--test-skip-pattern', name]);
  // The file runs as a test run of its own, not as a child of this one.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', SHIM, '--test', '--test-reporter', 'tap', ...skip, 'test/redis-rate-limit.test.js'], {
      cwd: dir,
      env: {
        ...env,
        RECIPES_GLUE_PORT: String(server.port),
        RECIPES_GLUE_PLUGIN_DIR: dir,
        RECIPES_GLUE_PACKAGE: PACKAGE,
      },
    });
    let output = '';
    child.stdout.on('data', (data) => (output += data));
    child.stderr.on('data', (data) => (output += data));
    child.on('close', (code) => resolve({ code, output }));
  });
}

// Each run has a server of its own: they run side by side.
describe(`@fastify/rate-limit ${VERSION}'s own Redis tests against FastifyRateLimitStore`, { concurrency: true }, () => {
  let dir;
  before(() => {
    dir = fetchPlugin();
  });

  for (const flavor of flavors()) {
    for (const module of [true, false]) {
      const label = `${flavor.name} ${module ? 'with the module' : 'without the module (fallback)'}`;
      describe(label, () => {
        let server;
        before(async () => {
          server = await startServer(flavor.path, { module });
        });
        after(async () => {
          await server.stop();
        });

        it('passes every case of test/redis-rate-limit.test.js', async () => {
          const { code, output } = await runPluginTests(dir, server);
          const pass = Number(/^# pass (\d+)/m.exec(output)?.[1]);
          const fail = Number(/^# fail (\d+)/m.exec(output)?.[1]);
          assert.equal(fail, 0, output);
          const cases = (readFileSync(join(dir, 'test', 'redis-rate-limit.test.js'), 'utf8').match(/^\s*test\(/gm) ?? []).length;
          assert.equal(pass, cases - Object.keys(DESELECTED).length, output);
          assert.equal(code, 0, output);
          // The store in use is ours: the keys are counted by RATE.FIXED where the module is loaded.
          const counted = /cmdstat_rate\.fixed:/i.test(execFileSync('redis-cli', ['-p', String(server.port), 'INFO', 'commandstats']).toString());
          assert.equal(counted, module);
        });
      });
    }
  }
});
