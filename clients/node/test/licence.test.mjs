// One licence everywhere: the repository's LICENSE (BSD 3-Clause) and what each package declares (the Rust crate,
// the Python package, the Node package and its lock file's root entry), as SPDX identifiers.
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const repo = new URL('../../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, repo), 'utf8');

/** The SPDX identifier of a LICENSE file, from its title line. */
const TITLES = { 'BSD 3-Clause License': 'BSD-3-Clause', 'MIT License': 'MIT', 'Apache License': 'Apache-2.0' };

it('the repository, the crate, the Python and the Node packages state one licence', () => {
  const title = read('LICENSE').split('\n')[0].trim();
  const spdx = TITLES[title];
  assert.ok(spdx, `unknown LICENSE title: ${title}`);
  const cargo = /^\[package\][\s\S]*?^license\s*=\s*"([^"]+)"/m.exec(read('Cargo.toml'));
  const python = /^\[project\][\s\S]*?^license\s*=\s*(?:\{\s*text\s*=\s*)?"([^"]+)"/m.exec(
    read('clients/python/pyproject.toml'));
  const pkg = JSON.parse(read('clients/node/package.json'));
  const lock = JSON.parse(read('clients/node/package-lock.json'));
  assert.deepEqual({
    'Cargo.toml': cargo?.[1],
    'clients/python/pyproject.toml': python?.[1],
    'clients/node/package.json': pkg.license,
    'clients/node/package-lock.json': lock.packages[''].license,
  }, {
    'Cargo.toml': spdx,
    'clients/python/pyproject.toml': spdx,
    'clients/node/package.json': spdx,
    'clients/node/package-lock.json': spdx,
  });
});
