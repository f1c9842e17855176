// The error classes against the module's catalogue (the errors of docs/spec.json, written from the module's
// declarations, with the classes clients/errors.json names for their codes), and the module's command families against
// what a server with the module lists.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as recipes from '../dist/index.js';
import { flavors, startServer, CLIENTS, closeClient, raw, clientPackages } from './harness.mjs';

const packages = await clientPackages();
const Redis = packages.ioredis.default;
const { ErrorReply } = packages['node-redis'];

const { translate, RecipeError, ModuleNotLoaded, CODES, FAMILIES, connectionOf } = recipes;

/** (error text, class) for each error of the module's spec: the class clients/errors.json names for its code. */
function catalogue() {
  const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8'));
  const spec = read('../../../docs/spec.json');
  const listed = read('../../errors.json');
  const byCode = new Map(listed.classes.flatMap((cls) => cls.codes.map((code) => [code, cls.name])));
  const errors = [...spec.errors, ...(spec.shared_errors ?? []), ...spec.families.flatMap((f) => f.errors ?? [])];
  return errors.map((error) => [
    error.text,
    error.text.startsWith('ERR unknown command')
      ? listed.unknown_command.name
      : byCode.get(error.code) ?? 'ResponseError',
  ]);
}

const SAMPLES = { name: 'idgen.next', command: 'idgen.next', commands: 'IDGEN.NEXT' };

/** `text` with its `{placeholders}` filled in. */
function filled(text) {
  for (const [name, sample] of Object.entries(SAMPLES)) text = text.replaceAll(`{${name}}`, sample);
  return text.replace(/\{[a-z_]+\}/g, '7');
}

/** The error each client makes of the reply `text` before the package translates it. */
const RECEIVED = {
  ioredis: (text) => new Redis.ReplyError(text),
  'node-redis': (text) => new ErrorReply(text),
};

describe('the error catalogue', () => {
  const rows = catalogue();

  it('is read whole', () => {
    assert.ok(rows.length >= 45, `${rows.length} rows`);
    assert.ok(rows.some(([text, python]) => text === "NOPOOL no ID pool at key '{key}'" && python === 'PoolMissing'));
  });

  for (const [kind, received] of Object.entries(RECEIVED)) {
    it(`turns each catalogued error into its class, and no other into a class (${kind})`, () => {
      for (const [text, python] of rows) {
        const error = received(filled(text));
        const translated = translate(error);
        if (python === 'ResponseError') {
          assert.equal(translated, error, `${text} is no class of its own`);
          assert.ok(!(translated instanceof RecipeError));
        } else {
          assert.equal(typeof recipes[python], 'function', `no class ${python}`);
          assert.equal(translated.constructor, recipes[python], `${text}: ${translated.constructor.name}`);
          assert.equal(translated.name, python);
          assert.ok(translated instanceof RecipeError);
          assert.equal(translated.cause, error);
          if (python !== 'ModuleNotLoaded') assert.equal(translated.message, filled(text));
        }
      }
    });
  }

  it('has an error for every class of CODES, and a class for every class the catalogue names', () => {
    const named = new Set(rows.map(([, python]) => python).filter((python) => python !== 'ResponseError'));
    const classes = new Set([...[...CODES.values()].map((cls) => cls.name), 'ModuleNotLoaded']);
    assert.deepEqual([...classes].sort(), [...named].sort());
  });

  it('leaves alone what is not a server error', () => {
    assert.equal(translate('text'), 'text');
    const type = new TypeError('BADJSON invalid JSON: but a TypeError');
    assert.ok(translate(type) instanceof recipes.InvalidJson, 'an Error of any class with a module text');
    const own = new recipes.CannotShrink('x');
    assert.equal(translate(own), own);
    const other = new Error("ERR unknown command 'get2', with args beginning with: ");
    assert.equal(translate(other), other, 'an unknown command of no family of the module');
  });
});

/** One call of each class, each sending a command of the module. */
const CALLS = {
  IdGenerator: (c) => new recipes.IdGenerator(c, 'k').produce(),
  HashIdGenerator: (c) => new recipes.HashIdGenerator(c, 'k').current('f'),
  UrlShorty: (c) => new recipes.UrlShorty(c).shorten('https://example.com/'),
  ReadWriteLock: (c) => new recipes.ReadWriteLock(c, 'k').readLock().acquire(),
  'ReadWriteLock (a wait)': (c) => new recipes.ReadWriteLock(c, 'k').writeLock().acquire({ wait: 1000 }),
  CountDownLatch: (c) => new recipes.CountDownLatch(c, 'k').wait({ timeout: 1000 }),
  IdPool: (c) => new recipes.IdPool(c, 'k').create(3),
  ResourcePool: (c) => new recipes.ResourcePool(c, 'k').using(() => 1, { wait: 1000 }),
  RateLimiter: (c) => new recipes.RateLimiter(c, 'a', 1000, 5).isPermitted('u'),
  JsonCache: (c) => new recipes.JsonCache(c).set('k', {}),
  AutoComplete: (c) => new recipes.AutoComplete(c, 's').feed('x'),
  Lock: (c) => new recipes.Lock(c, 'k').acquire(),
};

for (const flavor of flavors()) {
  describe(`${flavor.name}`, () => {
    let bare;
    let loaded;
    before(async () => {
      bare = await startServer(flavor.path, { module: false });
      loaded = await startServer(flavor.path);
    });
    after(async () => {
      await bare.stop();
      await loaded.stop();
    });

    for (const [kind, make] of Object.entries(CLIENTS)) {
      it(`without the module, every class throws ModuleNotLoaded (${kind})`, async () => {
        const client = await make(bare);
        try {
          for (const [name, call] of Object.entries(CALLS)) {
            await assert.rejects(call(client), (error) => {
              assert.ok(error instanceof ModuleNotLoaded, `${name}: ${error}`);
              assert.match(error.message, /no 'recipes' module.*\(ERR unknown command '[a-z]+\.[a-z]+'/i);
              return true;
            }, name);
          }
          assert.equal(await raw(client, 'DBSIZE'), 0);
        } finally {
          await connectionOf(client).close();
          await closeClient(client);
        }
      });
    }

    it('FAMILIES are the prefixes of every command the module lists', async () => {
      const client = await CLIENTS.ioredis(loaded);
      try {
        const names = await raw(client, 'COMMAND', 'LIST', 'FILTERBY', 'MODULE', 'recipes');
        assert.ok(names.length >= 40, `${names.length} commands`);
        const prefixes = new Set(names.map((name) => `${name.slice(0, name.indexOf('.'))}.`));
        assert.deepEqual([...prefixes].sort(), [...FAMILIES].sort());
        assert.ok(names.every((name) => name.indexOf('.') > 0), 'every command has a family');
      } finally {
        await closeClient(client);
      }
    });
  });
}
