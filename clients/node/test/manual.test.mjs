// The Node.js examples of the README and of every page of the documentation site (docs/src/**/*.md), run as written
// (each ```js block, as a CommonJS file of this package so that `require('redis-recipes')` finds the build) against
// a fresh server of each flavor, their output compared with the `// prints: …` comments, in order. A block preceded
// by `<!-- not run: <why> -->` is skipped. A failure names the file and the line.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { blocksOf, expected, root, run } from './glue/manual-blocks.mjs';
import { flavors, startServer } from './harness.mjs';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The Markdown files under a directory, in the order of their paths. */
function pagesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return pagesUnder(path);
      return entry.name.endsWith('.md') ? [path] : [];
    });
}

const blocks = [join(root, 'README.md'), ...pagesUnder(join(root, 'docs', 'src'))].flatMap(blocksOf);

describe("the Node.js examples of the README and the site's pages", () => {
  let dir;
  before(() => {
    // Inside the package, so that the package's own name resolves to it.
    dir = mkdtempSync(join(packageDir, '.manual-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('has examples that print something', () => {
    const files = new Set(blocks.map((block) => block.file));
    assert.ok(files.has('README.md'), 'an example in the README');
    assert.ok(blocks.filter((block) => block.file === join('docs', 'src', 'node.md')).length >= 2,
      'the Node.js package page\'s examples');
    for (const { file, line, code } of blocks) {
      assert.ok(expected(code).length > 0, `${file} line ${line}: no \`// prints:\` comment`);
    }
  });

  for (const flavor of flavors()) {
    blocks.forEach(({ file: page, line, code }, at) => {
      it(`${page} line ${line} runs as written on ${flavor.name}`, async () => {
        const server = await startServer(flavor.path);
        try {
          const file = join(dir, `example-${at + 1}.cjs`);
          writeFileSync(file, code);
          const { error, stdout, stderr } = await run(file, server.port, { cwd: packageDir, timeout: 30000 });
          assert.equal(error, null, `${page} line ${line}:\n${stderr}\n${stdout}`);
          assert.deepEqual(stdout.trim().split('\n'), expected(code), `${page} line ${line}:\n${stderr}`);
        } finally {
          await server.stop();
        }
      });
    });
  }
});
