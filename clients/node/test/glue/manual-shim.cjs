// Preloaded (--require) into the Node examples of the README and the site's pages by test/manual.test.mjs (and
// the package README's by test/package-readme.test.mjs, and the README's first in a project of its own by
// test/glue/manual-blocks.mjs): the examples connect as written, to the default port, and this points both
// clients' defaults at the test's server (RECIPES_MANUAL_PORT) instead of 6379, in whichever copy of the client the
// example loads.
'use strict';
const Module = require('node:module');

const port = Number(process.env.RECIPES_MANUAL_PORT);
if (!port) throw new Error('RECIPES_MANUAL_PORT is needed');

const load = Module._load;
let redis;
Module._load = function (request, ...rest) {
  const loaded = load.call(this, request, ...rest);
  if (request === 'ioredis') {
    loaded.defaultOptions.port = port;
    loaded.defaultOptions.host = '127.0.0.1';
  }
  if (request !== 'redis') return loaded;
  redis ??= new Proxy(loaded, {
    get(target, name) {
      if (name !== 'createClient') return target[name];
      return (options = {}) => target.createClient({ url: `redis://127.0.0.1:${port}`, ...options });
    },
  });
  return redis;
};
