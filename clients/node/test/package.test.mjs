// The package as it is published: what `require` and `import` give through the exports map, and what `npm pack`
// puts in the tarball (run `npm run build` first, as for every test).
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));
const require = createRequire(import.meta.url);

describe('the package', () => {
  it('require() and import() of the package by name give the same names and the same objects', async () => {
    const cjs = require('redis-recipes');
    const esm = await import('redis-recipes');
    const names = (module) => Object.keys(module).filter((name) => name !== 'default' && name !== '__esModule').sort();
    assert.deepEqual(names(esm), names(cjs));
    for (const name of names(cjs)) assert.equal(esm[name], cjs[name], name);
    for (const name of ['Lock', 'IdGenerator', 'HashIdGenerator', 'ReadWriteLock', 'RwLockHandle', 'CountDownLatch',
      'IdPool', 'IdLease', 'ResourcePool', 'PoolLease', 'RateLimiter', 'JsonCache', 'AutoComplete', 'translate',
      'ModuleNotLoaded', 'LockLost', 'LeaseLost', 'NoResourceFree', 'connectionOf']) {
      assert.equal(typeof cjs[name], 'function', name);
    }
    assert.equal(esm.default, cjs);
  });

  it('npm pack holds the built JavaScript, its types and ES modules, and no test or source file', () => {
    const [report] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'],
    }));
    const files = report.files.map((file) => file.path).sort();
    const sources = readdirSync(new URL('src/', root)).filter((name) => name.endsWith('.ts'));
    const modules = sources.map((name) => name.slice(0, -3));
    assert.ok(modules.length >= 12, modules.join());
    for (const module of modules) {
      assert.ok(files.includes(`dist/${module}.js`), `dist/${module}.js`);
      assert.ok(files.includes(`dist/${module}.d.ts`), `dist/${module}.d.ts`);
    }
    for (const target of Object.values(pkg.exports)) {
      for (const path of [target.types, target.require, target.import]) {
        assert.ok(files.includes(path.replace(/^\.\//, '')), path);
      }
    }
    assert.ok(files.some((file) => file.endsWith('.mjs')));
    for (const file of files) {
      const published = file === 'package.json' || /^(README|LICENSE)/i.test(file)
        || /^dist\/[^/]+\.(js|d\.ts|mjs)$/.test(file);
      assert.ok(published, `${file} is not part of the package`);
    }
    assert.ok(!files.some((file) => /test|^src\/|\.tsbuildinfo$/.test(file)));
  });
});
