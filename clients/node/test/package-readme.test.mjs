// The package's own README (what the npm registry page shows): each ```js block runs as written (a CommonJS file
// of this package, so that `require('redis-recipes')` finds the build; its clients pointed at a fresh server of
// each flavor by glue/manual-shim.cjs), prints what its `// prints: …` comments say, in order, and ends by itself.
// The README shows both clients and names every subpath of the exports map.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blocksOf, expected, run } from './glue/manual-blocks.mjs';
import { flavors, startServer } from './harness.mjs';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const blocks = blocksOf(join(packageDir, 'README.md')).map((block) => block.code);

// An example that does not end by itself (a client left open) is killed at this bound and fails; one that ends
// takes well under a second, so the bound holds with both cores busy.
const ENDS_WITHIN = 20_000;

describe("the package README's examples", () => {
  let dir;
  before(() => {
    dir = mkdtempSync(join(packageDir, '.readme-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has an example per client, each printing something, and names every subpath', () => {
    assert.ok(blocks.some((code) => code.includes("require('ioredis')")), 'an ioredis example');
    assert.ok(blocks.some((code) => code.includes("require('redis')")), 'a node-redis example');
    for (const code of blocks) assert.ok(expected(code).length > 0, code);
    for (const path of Object.keys(pkg.exports).filter((p) => p !== '.')) {
      assert.ok(readme.includes(`redis-recipes/${path.slice(2)}`), path);
    }
    assert.match(readme, /\]\(\.\.\/\.\.\/docs\/src\/node\.md\)/, 'a link to the full manual');
  });

  for (const flavor of flavors()) {
    blocks.forEach((code, at) => {
      it(`example ${at + 1} runs as written and ends by itself on ${flavor.name}`, async () => {
        const server = await startServer(flavor.path);
        try {
          const file = join(dir, `example-${at + 1}.cjs`);
          writeFileSync(file, code);
          const { error, stdout, stderr } = await run(file, server.port, { cwd: packageDir, timeout: ENDS_WITHIN });
          assert.equal(error, null, `${error?.killed ? 'did not end by itself\n' : ''}${stderr}\n${stdout}`);
          assert.deepEqual(stdout.trim().split('\n'), expected(code), stderr);
        } finally {
          await server.stop();
        }
      });
    });
  }
});
