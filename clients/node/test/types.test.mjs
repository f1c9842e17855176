// The package's types as a TypeScript application sees them: the packed tarball installed into a project of its
// own, a file importing the root and every subpath of the exports map type-checked (`tsc --noEmit`) under each
// moduleResolution an application may use: node (node10, the default with "module": "commonjs", which reads
// typesVersions, not exports), node16 and bundler (which read exports).
// Either client set: it uses none of RECIPES_NODE_CLIENTS's clients; tests/run.sh runs it with the current one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const subpaths = Object.keys(pkg.exports).filter((path) => path !== '.').map((path) => path.slice(2));
const tsc = join(packageDir, 'node_modules', 'typescript', 'bin', 'tsc');

const RESOLUTIONS = {
  node: { module: 'commonjs', moduleResolution: 'node' },
  node16: { module: 'node16', moduleResolution: 'node16' },
  bundler: { module: 'esnext', moduleResolution: 'bundler' },
};

describe('the package\'s types in an application', () => {
  let dir;
  let packedLicence;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'recipes-types-'));
    const [report] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir],
      { cwd: packageDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, 'redis-recipes'), { recursive: true });
    execFileSync('tar', ['-xzf', join(dir, report.filename), '-C', join(modules, 'redis-recipes'),
      '--strip-components=1']);
    packedLicence = readFileSync(join(modules, 'redis-recipes', 'LICENSE'), 'utf8');
    // The declarations use Node's types (Buffer, events), as an application's @types/node gives them.
    symlinkSync(join(packageDir, 'node_modules', '@types'), join(modules, '@types'), 'dir');
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    const lines = [
      "import * as root from 'redis-recipes';",
      ...subpaths.map((path, at) => `import * as sub${at} from 'redis-recipes/${path}';`),
      'export function dequeue(queue: root.FifoQueue): Promise<string | null> {',
      '  return queue.dequeue({ timeout: 0 });',
      '}',
      `export const all = [root, ${subpaths.map((_, at) => `sub${at}`).join(', ')}];`,
      '',
    ];
    writeFileSync(join(dir, 'app.ts'), lines.join('\n'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('carries the repository\'s LICENSE', () => {
    assert.equal(packedLicence, readFileSync(join(packageDir, '..', '..', 'LICENSE'), 'utf8'));
  });

  it('maps every subpath of the exports map in typesVersions, for moduleResolution node', () => {
    const mapped = pkg.typesVersions['*'];
    assert.deepEqual(Object.keys(mapped).sort(), [...subpaths].sort());
    for (const path of subpaths) assert.deepEqual(mapped[path], [pkg.exports[`./${path}`].types]);
  });

  for (const [name, options] of Object.entries(RESOLUTIONS)) {
    it(`type-checks the root and every subpath with moduleResolution ${name}`, () => {
      const config = join(dir, `tsconfig.${name}.json`);
      writeFileSync(config, JSON.stringify({
        compilerOptions: { ...options, target: 'ES2022', strict: true, noEmit: true, types: ['node'] },
        files: ['app.ts'],
      }));
      try {
        execFileSync(process.execPath, [tsc, '-p', config], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
      } catch (error) {
        assert.fail(`tsc (moduleResolution ${name}):\n${error.stdout}${error.stderr}`);
      }
    });
  }
});
