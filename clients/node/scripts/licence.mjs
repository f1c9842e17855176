// The build's last step: the repository's LICENSE copied beside package.json, where npm packs it (the BSD 3-Clause
// licence asks that its text go with every copy). The copy is not committed: the repository's file is the one.
import { copyFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const from = fileURLToPath(new URL('../../../LICENSE', import.meta.url));
copyFileSync(from, fileURLToPath(new URL('../LICENSE', import.meta.url)));
