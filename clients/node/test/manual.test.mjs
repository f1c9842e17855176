// The Node.js examples of the README and of every page of the documentation site (docs/src/**/*.md), run as written
// (each ```js block, as a CommonJS file of this package so that `require('redis-recipes')` finds the build) against
// a fresh server of each flavor, their output compared with the `// prints: …` comments, in order. A block preceded
// by `<!-- not run: <why> -->` is skipped. A failure names the file and the line.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { flavors, startServer } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = join(here, '..');
const root = join(packageDir, '..', '..');

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

/** Each ```js block of a page that is not marked `<!-- not run: … -->`: its file, first line and code. */
function blocksOf(path) {
  const lines = readFileSync(path, 'utf8').split('\n');
  const found = [];
  for (let at = 0; at < lines.length; at++) {
    if (!lines[at].startsWith('```')) continue;
    let end = at + 1;
    while (end < lines.length && !lines[end].startsWith('```')) end++;
    let above = at - 1;
    while (above >= 0 && !lines[above].trim()) above--;
    const skipped = above >= 0 && lines[above].trim().startsWith('<!-- not run:');
    if (lines[at].slice(3).trim() === 'js' && !skipped) {
      found.push({ file: relative(root, path), line: at + 2, code: `${lines.slice(at + 1, end).join('\n')}\n` });
    }
    at = end;
  }
  return found;
}

const blocks = [join(root, 'README.md'), ...pagesUnder(join(root, 'docs', 'src'))].flatMap(blocksOf);

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
          const { error, stdout, stderr } = await run(file, server.port);
          assert.equal(error, null, `${page} line ${line}:\n${stderr}\n${stdout}`);
          assert.deepEqual(stdout.trim().split('\n'), expected(code), `${page} line ${line}:\n${stderr}`);
        } finally {
          await server.stop();
        }
      });
    });
  }
});
