// Glue preloaded into mocha (`--require`) by scripts/rlf-suites.mjs to run rate-limiter-flexible's own Redis suites
// (test/RateLimiterRedis.ioredis.test.js and test/RateLimiterRedis.redis.test.js of its repository), unedited:
// - their `require('../lib/RateLimiterRedis')` loads RLF_SUITE_TARGET: `redis-recipes/rate-limiter-flexible` (the
//   built dist/rate-limiter-flexible.js, its RateLimiterRedis: the one line an application changes), or a file
//   exporting the class itself (the library's own lib/RateLimiterRedis.js, for the reference run);
// - their clients, made for 127.0.0.1:6379 (ioredis's `new Redis({ port: 6379 })` and `new Redis()`, node-redis 4's
//   `createClient(require('./RedisOptions'))`), connect to the run's server (RLF_SUITE_PORT) instead.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const target = process.env.RLF_SUITE_TARGET;
const port = Number(process.env.RLF_SUITE_PORT);
const suite = process.env.RLF_SUITE_DIR; // the directory holding the two test files
if (!target || !port || !suite) throw new Error('RLF_SUITE_TARGET, RLF_SUITE_PORT and RLF_SUITE_DIR are needed');

// The class the suites test, under a name of its own in the module cache.
const loaded = require(target);
const RateLimiterRedis = typeof loaded === 'function' ? loaded : loaded.RateLimiterRedis;
if (typeof RateLimiterRedis !== 'function') throw new Error(`${target} has no RateLimiterRedis`);
const cached = path.join(suite, '..', 'lib', 'RateLimiterRedis.under-test.js');
const entry = new Module(cached);
entry.filename = cached;
entry.loaded = true;
entry.exports = RateLimiterRedis;
require.cache[cached] = entry;

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === '../lib/RateLimiterRedis' && parent && path.dirname(parent.filename) === suite) return cached;
  return resolve.call(this, request, parent, ...rest);
};

const local = Module.createRequire(path.join(suite, 'RateLimiterRedis.ioredis.test.js'));

// ioredis: every client's options go through Redis.prototype.parseOptions; 6379 (given, or the default) becomes
// the run's port.
const Redis = local('ioredis');
const parseOptions = Redis.prototype.parseOptions;
Redis.prototype.parseOptions = function (...args) {
  parseOptions.apply(this, args);
  if (Number(this.options.port) === 6379) this.options.port = port;
};

// node-redis 4: createClient({ socket: { host, port: 6379 } }).
const redis = local('redis');
const createClient = redis.createClient;
redis.createClient = function (options = {}, ...rest) {
  const socket = options.socket ?? {};
  if (socket.port === undefined || Number(socket.port) === 6379) {
    options = { ...options, socket: { host: '127.0.0.1', ...socket, port } };
  }
  return createClient.call(this, options, ...rest);
};
