// Glue for @fastify/rate-limit's own test file, preloaded with --require: its clients go to the test server's port
// (the file connects to 127.0.0.1's default port), and the plugin's RedisStore is this package's store, built from
// the same arguments (the plugin builds it from its `redis` and `nameSpace` options).
'use strict';
const Module = require('node:module');
const path = require('node:path');

const port = Number(process.env.RECIPES_GLUE_PORT);
const pluginDir = process.env.RECIPES_GLUE_PLUGIN_DIR;
const { FastifyRateLimitStore } = require(process.env.RECIPES_GLUE_PACKAGE);
const storePath = path.join(pluginDir, 'store', 'RedisStore.js');

let ioredis;
function redirected(original) {
  if (ioredis) return ioredis;
  class Redis extends original {
    constructor(...args) {
      const options = typeof args[0] === 'object' && args[0] !== null ? args[0] : {};
      super({ ...options, port });
    }
  }
  ioredis = Redis;
  return ioredis;
}

function RedisStore(continueExceeding, exponentialBackoff, redis, nameSpace) {
  return new FastifyRateLimitStore({ continueExceeding, exponentialBackoff, redis, nameSpace });
}

const load = Module._load;
Module._load = function (request, parent, isMain) {
  const loaded = load.call(this, request, parent, isMain);
  if (request === 'ioredis') return redirected(loaded);
  if (parent && Module._resolveFilename(request, parent, isMain) === storePath) return RedisStore;
  return loaded;
};
