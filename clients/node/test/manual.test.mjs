// The README's Node.js examples, run as written (each ```js block of the "Node.js" section, as a CommonJS file of
// this package so that `require('redis-recipes')` finds the build) against a fresh server of each flavor, their
// output compared with the `// prints: …` comments, in order.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flavors, startServer } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = join(here, '..');
const readme = readFileSync(join(packageDir, '..', '..', 'README.md'), 'utf8');
const start = readme.indexOf('\n## Node.js\n');
const end = readme.indexOf('\n## ', start + 1);
const section = readme.slice(start, end === -1 ? undefined : end);
const blocks = [...section.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

function expected(code) {
  return [...code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1].trim());
}

function run(file, port) {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--require', join(here, 'glue', 'manual-shim.cjs'), file],
      { cwd: packageDir, env: { ...process.env, RECIPES_MANUAL_PORT: String(port) }, timeout: 30000 },
      (error, stdout, stderr) => resolve({ error, stdout, stderr }));
  });
}

describe("the README's Node.js examples", () => {
  let dir;
  before(() => {
    // Inside the package, so that the package's own name resolves to it.
    dir = mkdtempSync(join(packageDir, '.manual-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has examples that print something', () => {
    assert.ok(blocks.length >= 2, `found ${blocks.length} examples`);
    for (const block of blocks) assert.ok(expected(block).length > 0, block);
  });

  for (const flavor of flavors()) {
    blocks.forEach((code, at) => {
      it(`example ${at + 1} runs as written on ${flavor.name}`, async () => {
        const server = await startServer(flavor.path);
        try {
          const file = join(dir, `example-${at + 1}.cjs`);
          writeFileSync(file, code);
          const { error, stdout, stderr } = await run(file, server.port);
          assert.equal(error, null, `${stderr}\n${stdout}`);
          assert.deepEqual(stdout.trim().split('\n'), expected(code), stderr);
        } finally {
          await server.stop();
        }
      });
    });
  }
});
