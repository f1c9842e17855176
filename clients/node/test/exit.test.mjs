// A process that waited exits by itself once it closes its clients, as it would with the original libraries: the
// connections of its own that waits use follow the application's client (they close when it quits) and, while
// idle, never keep the process alive. Each kind of client of the run (tests/clients.mjs), as a client and as a
// cluster, runs, in a child process, every class and drop-in that waits, with a wait granted,
// one timed out and one aborted (test/fixtures/waiter.mjs); the child must then end by itself, within a second of
// closing its clients (quit()/close() after a granted or aborted wait, disconnect()/destroy() after a timed-out one).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { flavors, startServer, startCluster, KINDS as CLIENT_KINDS } from './harness.mjs';

const FIXTURE = fileURLToPath(new URL('./fixtures/waiter.mjs', import.meta.url));
const NODE_TEST = fileURLToPath(new URL('./fixtures/waited-under-node-test.mjs', import.meta.url));
const OUTCOMES = ['granted', 'timeout', 'abort'];
// The child's steps last about 2 s (a 1 s rate window, seven waits of 100-300 ms). Once it has closed its clients
// (it prints "closed") it has nothing left to do but end: that takes a few ms (measured: under 20 ms), so a second
// is far above a slow exit with both cores busy. Without the fix it never ends (a connection of its own stays
// open); it is killed when it has not ended within BOUND of its start, far above a slow run of its steps.
const EXIT = 1000;
// The kinds of the run's client set (RECIPES_NODE_CLIENTS).
const KINDS = Object.keys(CLIENT_KINDS);
const BOUND = 30000;

/**
 * Runs the fixture; resolves { code, signal, stdout, stderr, ended, exitMs } (ended: false when killed at BOUND;
 * exitMs: from its "closed" line to its exit).
 */
function child(env, args = [FIXTURE]) {
  return new Promise((resolve) => {
    // NODE_TEST_CONTEXT would make a `node --test` child report to this runner instead of printing its results.
    const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
    const proc = spawn(process.execPath, args, { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let closedAt;
    proc.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (closedAt === undefined && stdout.includes('closed\n')) closedAt = Date.now();
    });
    proc.stderr.on('data', (chunk) => { stderr += chunk; });
    let ended = true;
    const timer = setTimeout(() => {
      ended = false;
      proc.kill('SIGKILL');
    }, BOUND);
    proc.on('exit', (code, signal) => {
      const exitMs = closedAt === undefined ? undefined : Date.now() - closedAt;
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ended, exitMs });
    });
  });
}

/** What each step answers for `outcome`. */
function expected(outcome) {
  const granted = outcome === 'granted';
  const aborted = outcome === 'abort';
  const refused = aborted ? '"AbortError"' : null;
  return [
    `Lock ${granted ? 'true' : aborted ? refused : 'false'}`,
    `ReadWriteLock ${granted ? 'true' : aborted ? refused : 'false'}`,
    `CountDownLatch ${granted ? 'true' : aborted ? refused : 'false'}`,
    `IdPool ${granted ? '1' : aborted ? refused : 'null'}`,
    `ResourcePool ${granted ? '"r1"' : aborted ? refused : 'null'}`,
    `RateLimiterQueue ${granted ? '0' : aborted ? refused : '"skipped"'}`,
    `Redlock ${granted ? '"locked"' : aborted ? '"skipped"' : '"LockError"'}`,
    'closed',
  ].join('\n') + '\n';
}

async function check(kind, ports, outcome) {
  const result = await child({ RECIPES_KIND: kind, RECIPES_PORTS: ports.join(','), RECIPES_OUTCOME: outcome,
    RECIPES_RUN: `${kind}:${outcome}` });
  assert.equal(result.stderr, '');
  assert.equal(result.stdout, expected(outcome));
  assert.ok(result.ended, `the process did not end within ${BOUND} ms of its start`);
  assert.equal(result.code, 0);
  assert.ok(result.exitMs < EXIT, `the process ended ${result.exitMs} ms after closing its clients`);
}

for (const flavor of flavors()) {
  describe(`a process that waited exits on ${flavor.name}`, () => {
    let server;
    before(async () => {
      server = await startServer(flavor.path);
    });
    after(async () => {
      await server.stop();
    });
    it('node --test on a file that waited finishes', async () => {
      const result = await child({ RECIPES_PORTS: String(server.port) }, ['--test', NODE_TEST]);
      assert.ok(result.ended, `node --test did not finish within ${BOUND} ms`);
      assert.match(result.stdout, /^# pass 1$/m);
      assert.match(result.stdout, /^# fail 0$/m);
      assert.equal(result.code, 0);
    });
    for (const kind of KINDS) {
      for (const outcome of OUTCOMES) {
        it(`with ${kind}, a wait ${outcome === 'abort' ? 'aborted' : outcome === 'timeout' ? 'timed out' : outcome}`,
          () => check(kind, [server.port], outcome));
      }
    }
  });
}

for (const flavor of flavors().slice(0, 1)) {
  describe(`a process that waited exits on a ${flavor.name} cluster`, () => {
    let cluster;
    before(async () => {
      cluster = await startCluster(flavor.path);
    });
    after(async () => {
      await cluster.stop();
    });
    for (const kind of KINDS.map((k) => `${k}-cluster`)) {
      for (const outcome of OUTCOMES) {
        it(`with ${kind}, a wait ${outcome === 'abort' ? 'aborted' : outcome === 'timeout' ? 'timed out' : outcome}`,
          () => check(kind, cluster.nodes.map((n) => n.port), outcome));
      }
    }
  });
}
