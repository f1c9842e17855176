// Glue preloaded into mocha (`--require`) by test/redlock-suite.test.mjs to run redlock 4.2.0's own test.js,
// unedited, against the drop-in:
// - its `require('./redlock')` loads `redis-recipes/redlock` (REDLOCK_DROPIN: the built dist/redlock.js);
// - `bluebird` is one copy for the test and the drop-in (bluebird's `Promise.using` knows its own disposers only);
// - its clients, made without a port (node-redis 3's `createClient()`, ioredis 4's `new Redis()`), connect to the
//   test's server (REDLOCK_SUITE_PORT) instead of 6379.
'use strict';
const Module = require('node:module');
const path = require('node:path');

const dropin = process.env.REDLOCK_DROPIN;
const port = Number(process.env.REDLOCK_SUITE_PORT);
const suite = process.env.REDLOCK_SUITE_DIR; // the unpacked package: its test.js
if (!dropin || !port || !suite) throw new Error('REDLOCK_DROPIN, REDLOCK_SUITE_PORT and REDLOCK_SUITE_DIR are needed');

const local = Module.createRequire(path.join(suite, 'test.js'));
const bluebird = local.resolve('bluebird');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (request === './redlock' && parent && path.dirname(parent.filename) === suite) return dropin;
  if (request === 'bluebird') return bluebird;
  return resolve.call(this, request, parent, ...rest);
};

const redis = local('redis');
const createClient = redis.createClient;
redis.createClient = function (...args) {
  if (args.length === 0) args = [{}];
  if (args.length === 1 && typeof args[0] === 'object' && args[0] !== null && args[0].port === undefined) {
    args[0] = { host: '127.0.0.1', ...args[0], port };
  }
  return createClient.apply(this, args);
};

const Redis = local('ioredis');
Redis.defaultOptions.port = port;
Redis.defaultOptions.host = '127.0.0.1';
