// The run's client set, without node:test (the child processes of the tests import it too).
/**
 * The client versions the tests run on, chosen for a whole run by RECIPES_NODE_CLIENTS. Each set names its kinds of
 * client, each a package (an alias in package.json's devDependencies) and the options a client of it is made with:
 * - `current` (the default): ioredis 5 and node-redis 5, RESP2;
 * - `next`: ioredis 6 and node-redis 6, each speaking RESP3 (ioredis 6 does by default);
 * - `others`: the rest of the packages' peer ranges, ioredis 6 on RESP2, node-redis 4 (RESP2 only), node-redis 5 on
 *   RESP3 and node-redis 6 on RESP2 (tests/run.sh runs this set on one server: the server matrix is the others').
 * Every set has a kind named `ioredis` and one named `node-redis`, which the tests that need one of a family use; a
 * kind's family is the start of its name (`familyOf`).
 */
export const GENERATIONS = {
  current: {
    ioredis: ['ioredis', {}],
    'node-redis': ['redis', {}],
  },
  next: {
    ioredis: ['ioredis6', {}],
    'node-redis': ['redis6', { RESP: 3 }],
  },
  others: {
    ioredis: ['ioredis6', { protocol: 2 }],
    'node-redis': ['redis4', {}],
    'node-redis5-resp3': ['redis', { RESP: 3 }],
    'node-redis6-resp2': ['redis6', {}],
  },
};
export const GENERATION = process.env.RECIPES_NODE_CLIENTS || 'current';
if (!GENERATIONS[GENERATION]) throw new Error(`RECIPES_NODE_CLIENTS: no client set named ${GENERATION}`);

/** The run's kinds: { kind: [package, options] }. */
export const KINDS = GENERATIONS[GENERATION];

/** The family of a kind of the run: 'ioredis' or 'node-redis'. */
export function familyOf(kind) {
  return kind.startsWith('ioredis') ? 'ioredis' : 'node-redis';
}

/** Whether a kind of the run speaks RESP3. */
export function speaksResp3(kind) {
  const [name, options] = KINDS[kind];
  return familyOf(kind) === 'ioredis' ? name === 'ioredis6' && options.protocol !== 2 : options.RESP === 3;
}
