// Writes an ES module beside each entry point of the CommonJS build, re-exporting its names, so that the package
// works from `import` as from `require` (the `exports` map of package.json points at both).
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
for (const [, target] of Object.entries(pkg.exports)) {
  const cjs = target.require.replace(/^\.\//, '../');
  const exported = require(cjs);
  const names = Object.keys(exported).filter((name) => name !== 'default' && name !== '__esModule');
  const lines = [
    `import cjs from './${target.require.split('/').pop()}';`,
    ...names.map((name) => `export const ${name} = cjs.${name};`),
    // A module with a default export of its own (`export default`) keeps it as the default.
    'default' in exported ? 'export default cjs.default;' : 'export default cjs;',
    '',
  ];
  writeFileSync(new URL(`../${target.import.replace(/^\.\//, '')}`, import.meta.url), lines.join('\n'));
}
