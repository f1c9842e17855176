import { it } from 'node:test';
import assert from 'node:assert/strict';
import { JsonCache, InvalidJson, connectionOf, translate } from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('JsonCache', (t) => {
  it('stores values as minified JSON, reads them back whole or by fields', async () => {
    const cache = new JsonCache(t.client);
    const user = { id: 10086, name: 'Peter', age: 56, tags: ['a', 'é'], nested: { x: null } };
    assert.equal(await cache.set('user:10086', user, { ttl: 60_000 }), undefined);
    assert.equal(await raw(t.client, 'GET', 'user:10086'),
      '{"id":10086,"name":"Peter","age":56,"tags":["a","é"],"nested":{"x":null}}');
    const pttl = Number(await raw(t.client, 'PTTL', 'user:10086'));
    assert.ok(pttl > 59_000 && pttl <= 60_000, `${pttl}`);
    assert.deepEqual(await cache.get('user:10086'), user);
    assert.deepEqual(await cache.get('user:10086', 'name', 'age', 'missing'), { name: 'Peter', age: 56 });
    assert.equal(await cache.get('nothing'), null);
    await cache.set('n', 12.5);
    assert.equal(await cache.get('n'), 12.5);
    assert.equal(await raw(t.client, 'PTTL', 'n'), -1);
    await cache.set('null', null);
    assert.equal(await cache.get('null'), null);
    assert.equal(await raw(t.client, 'GET', 'null'), 'null');
  });

  it('refuses what is not JSON: InvalidJson from the server, TypeError before sending', async () => {
    const cache = new JsonCache(t.client);
    await raw(t.client, 'SET', 'bad', '{"id":10086,}');
    await assert.rejects(cache.get('bad'), { message: 'ERR the value is not JSON' });
    // The class only sends what JSON.stringify wrote; the server's check, as the package translates it:
    const reply = connectionOf(t.client).send(['CACHE.SETJSON', 'k', '{"id":10086,}']).catch((e) => {
      throw translate(e);
    });
    await assert.rejects(reply, (error) => {
      assert.ok(error instanceof InvalidJson);
      assert.equal(error.message, 'BADJSON invalid JSON: trailing comma at line 1 column 13');
      return true;
    });
    await assert.rejects(cache.set('k', undefined), TypeError);
    await assert.rejects(cache.set('k', () => 1), TypeError);
    await assert.rejects(cache.set('k', { n: 1n }), TypeError);
    assert.equal(await raw(t.client, 'EXISTS', 'k'), 0);
    await cache.set('list', [1, 2]);
    await assert.rejects(cache.get('list', 'a'), { message: 'ERR the value is not a JSON object' });
  });
});
