// Starting a server on a free loopback port, for the tests (through harness.mjs, which stops what a test file
// started) and the Node benchmarks of bench/. Nothing here depends on the test runner.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** True when a server answers PING on `port`. */
export async function reachable(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.on('connect', () => {
      socket.write('PING\r\n');
    });
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * Starts `path` on a free port in a directory of its own: with `module` (a path; default RECIPES_MODULE; false for
 * none) and `args` added to its command line, run under `wrap(dir)` (a command and its arguments, e.g. `nice`,
 * valgrind; none by default). Waits up to `waitMs` for it to answer. Returns { port, host, url, dir, child, stop() },
 * `stop` sending `signal` (default SIGKILL) and removing the directory.
 */
export async function launch(path, {
  module = process.env.RECIPES_MODULE, args = [], wrap = () => [], signal = 'SIGKILL', waitMs = 5000,
} = {}) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'recipes-node-'));
  const line = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
    '--protected-mode', 'no', '--enable-debug-command', 'yes', '--logfile', join(dir, 'log'), ...args];
  if (module) line.push('--loadmodule', module);
  const [command, ...prefix] = [...wrap(dir), path];
  const child = spawn(command, [...prefix, ...line], { stdio: 'ignore' });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  for (const started = Date.now(); !(await reachable(port));) {
    if (exited) throw new Error(`${path} exited at start (log in ${dir})`);
    if (Date.now() - started > waitMs) throw new Error(`${path} did not answer in ${waitMs} ms (log in ${dir})`);
    await sleep(10);
  }
  return {
    port,
    host: '127.0.0.1',
    url: `redis://127.0.0.1:${port}`,
    dir,
    child,
    async stop() {
      if (!exited) {
        child.kill(signal);
        await new Promise((resolve) => (exited ? resolve() : child.once('exit', resolve)));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
