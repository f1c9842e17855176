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

/**
 * The process id of the server answering on `port` (`INFO server`), or null when none answers (yet). Another test's
 * server can take a free port before ours binds it: only the process started counts.
 */
export async function answeringPid(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let data = '';
    socket.on('connect', () => {
      socket.write('INFO server\r\n');
    });
    socket.on('data', (chunk) => {
      data += chunk.toString();
      const header = /^\$(\d+)\r\n/.exec(data);
      if (data.startsWith('-')) {
        socket.destroy();
        resolve(null);
      } else if (header && Buffer.byteLength(data) >= header[0].length + Number(header[1])) {
        socket.destroy();
        const pid = /process_id:(\d+)/.exec(data);
        resolve(pid ? Number(pid[1]) : null);
      }
    });
    socket.on('error', () => resolve(null));
    // A peer that closes or stays silent is not ours answering (yet): ask again.
    socket.on('close', () => resolve(null));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(null);
    });
  });
}

/**
 * Starts `path` on a free port in a directory of its own: with `module` (a path; default RECIPES_MODULE; false for
 * none) and `args` added to its command line, run under `wrap(dir)` (a command and its arguments, e.g. `nice`,
 * valgrind; none by default). Waits up to `waitMs` for it to answer (20 s, as the Rust and Python harnesses: a
 * server answers in milliseconds on a quiet machine; beside the rest of `make test`, one once took over 5 s).
 * Returns { port, host, url, dir, child, stop() }, `stop` sending `signal` (default SIGKILL) and removing the
 * directory.
 */
export async function launch(path, {
  module = process.env.RECIPES_MODULE, args = [], wrap = () => [], signal = 'SIGKILL', waitMs = 20000,
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'recipes-node-'));
  // A free port can be taken by another test's server before ours binds it (ours then exits): try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const line = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no',
      '--protected-mode', 'no', '--enable-debug-command', 'yes', '--logfile', join(dir, 'log'), ...args];
    if (module) line.push('--loadmodule', module);
    const [command, ...prefix] = [...wrap(dir), path];
    const child = spawn(command, [...prefix, ...line], { stdio: 'ignore' });
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    const stop = async () => {
      if (!exited) {
        child.kill(signal);
        await new Promise((resolve) => (exited ? resolve() : child.once('exit', resolve)));
      }
    };
    let pid = null;
    for (const started = Date.now(); pid === null;) {
      pid = await answeringPid(port);
      if (pid !== null || exited) break;
      if (Date.now() - started > waitMs) {
        await stop();
        throw new Error(`${path} did not answer in ${waitMs} ms (log in ${dir})`);
      }
      await sleep(10);
    }
    if (pid !== child.pid) {
      await stop();
      if (attempt < 4) continue;
      throw new Error(`${path} did not start on a port of its own (log in ${dir})`);
    }
    return {
      port,
      host: '127.0.0.1',
      url: `redis://127.0.0.1:${port}`,
      dir,
      child,
      async stop() {
        await stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
