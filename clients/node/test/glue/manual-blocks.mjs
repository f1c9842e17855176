// The Node.js examples of the pages (the README, the site's pages under docs/src, the package's README): each
// ```js block not marked `<!-- not run: … -->`, what its `// prints: …` comments say it prints, and a run of one
// as a CommonJS file with its clients pointed at a test's server (glue/manual-shim.cjs). test/manual.test.mjs and
// test/package-readme.test.mjs run them as files of this package; as a command,
//
//   node test/glue/manual-blocks.mjs PAGE DIR PORT
//
// runs the first block of PAGE as a file of DIR (so that `require` finds what DIR's node_modules hold) against the
// server on 127.0.0.1:PORT and exits 1 unless it prints what its comments say: `make test`'s test of the release's
// npm tarball, installed into a fresh project (tests/dist/).
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..', '..', '..');

/** Each ```js block of a page that is not marked `<!-- not run: … -->`: its file, first line and code. */
export function blocksOf(path) {
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

/** What a block's `// prints: …` comments say it prints, in order. */
export function expected(code) {
  return [...code.matchAll(/\/\/ prints: (.*)$/gm)].map((m) => m[1].trim());
}

/** Runs `file` (an example written out) from `cwd` with its clients pointed at 127.0.0.1:`port`; killed after
 * `timeout` ms. Resolves to execFile's error (null when it ended well), stdout and stderr. */
export function run(file, port, { cwd, timeout }) {
  return new Promise((done) => {
    execFile(process.execPath, ['--require', join(here, 'manual-shim.cjs'), file],
      { cwd, env: { ...process.env, RECIPES_MANUAL_PORT: String(port) }, timeout },
      (error, stdout, stderr) => done({ error, stdout, stderr }));
  });
}

async function main([page, dir, port]) {
  const [block] = blocksOf(resolve(page));
  const file = join(resolve(dir), 'example.cjs');
  writeFileSync(file, block.code);
  const { error, stdout, stderr } = await run(file, Number(port), { cwd: dirname(file), timeout: 30000 });
  const printed = stdout.trim().split('\n');
  if (error || JSON.stringify(printed) !== JSON.stringify(expected(block.code))) {
    console.error(`${block.file} line ${block.line}: printed ${JSON.stringify(printed)}, the page shows `
      + `${JSON.stringify(expected(block.code))}\n${error ?? ''}\n${stderr}`);
    process.exit(1);
  }
  console.log(`${block.file} line ${block.line}: ran as written`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv.slice(2));
