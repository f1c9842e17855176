// The run's client set, without node:test (the child processes of the tests import it too).
/**
 * The client versions the tests run on, chosen for a whole run by RECIPES_NODE_CLIENTS: `current` (the default:
 * ioredis 5 and node-redis 5, RESP2) or `next` (ioredis 6 and node-redis 6, each speaking RESP3, which ioredis 6 does
 * by default). The two kinds keep their names, `ioredis` and `node-redis`, whatever the versions. node-redis 4 has
 * a file of its own (node-redis4.test.mjs).
 */
export const GENERATIONS = {
  current: { ioredis: ['ioredis', {}], 'node-redis': ['redis', {}] },
  next: { ioredis: ['ioredis6', {}], 'node-redis': ['redis6', { RESP: 3 }] },
};
export const GENERATION = process.env.RECIPES_NODE_CLIENTS || 'current';
if (!GENERATIONS[GENERATION]) throw new Error(`RECIPES_NODE_CLIENTS: no client set named ${GENERATION}`);
