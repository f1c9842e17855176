import { it } from 'node:test';
import assert from 'node:assert/strict';
import {
  IdGenerator, HashIdGenerator, UrlShorty, GeneratorExhausted, WrongType, MAX_ID, toBase62, fromBase62, keySlot,
} from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('IdGenerator', (t) => {
  it('produces, reserves (the book\'s SET NX), raises the floor and reads the current ID', async () => {
    const ids = new IdGenerator(t.client, 'user::id');
    assert.equal(await ids.current(), 0);
    assert.equal(await ids.reserve(1_000_000), true);
    assert.equal(await ids.reserve(5), false, 'the generator has a value: nothing changes');
    assert.equal(await raw(t.client, 'GET', 'user::id'), '1000000');
    assert.equal(await ids.produce(), 1_000_001);
    assert.equal(await ids.raiseFloor(9999), false);
    assert.equal(await ids.raiseFloor('2000000'), true);
    assert.equal(await ids.produce(), 2_000_001);
    const block = await ids.produceMany(3);
    assert.deepEqual([block.first, block.last, block.count], [2_000_002, 2_000_004, 3]);
    assert.deepEqual([...block], [2_000_002, 2_000_003, 2_000_004]);
    assert.equal(await ids.current(), 2_000_004);
    assert.equal(await raw(t.client, 'GET', 'user::id'), '2000004');
  });

  it('refuses a floor that is not a whole number before sending it, and the server refuses a bad raise', async () => {
    const ids = new IdGenerator(t.client, 'floors');
    for (const bad of [-1, 1.5, '007x', 2n ** 63n, Number.NaN]) {
      await assert.rejects(ids.reserve(bad), RangeError);
    }
    assert.equal(await raw(t.client, 'EXISTS', 'floors'), 0);
    await assert.rejects(ids.raiseFloor(-1), { message: 'ERR floor must be a non-negative integer' });
    assert.equal(await ids.reserve(MAX_ID), true);
    assert.equal(await raw(t.client, 'GET', 'floors'), '9223372036854775807');
  });

  it('assigns a name its ID once (get-or-create), with the reverse hash', async () => {
    const ids = new IdGenerator(t.client, '{u}:id');
    assert.equal(await ids.assign('{u}:by-email', 'peter@example.com', { reverse: '{u}:email' }), 1);
    assert.equal(await ids.assign('{u}:by-email', 'jack@example.com'), 2);
    assert.equal(await ids.assign('{u}:by-email', 'peter@example.com', { reverse: '{u}:email' }), 1);
    assert.equal(await ids.current(), 2);
    assert.equal(await raw(t.client, 'HGET', '{u}:email', '1'), 'peter@example.com');
    assert.equal(await raw(t.client, 'HGET', '{u}:by-email', 'jack@example.com'), '2');
    await assert.rejects(ids.assign('{u}:id', 'x'), { message: 'ERR the counter, index and REVERSE keys must differ' });
  });

  it('errors come out as classes and change nothing', async () => {
    const ids = new IdGenerator(t.client, 'end');
    assert.equal(await ids.raiseFloor(MAX_ID - 1n), true);
    await assert.rejects(ids.produceMany(2), (error) => {
      assert.ok(error instanceof GeneratorExhausted);
      assert.equal(error.message,
        'EXHAUSTED taking 2 more ID(s) after 9223372036854775806 would pass 9223372036854775807');
      assert.ok(error.cause instanceof Error);
      return true;
    });
    assert.equal(await raw(t.client, 'GET', 'end'), '9223372036854775806');
    await raw(t.client, 'HSET', 'ahash', 'f', '1');
    await assert.rejects(new IdGenerator(t.client, 'ahash').produce(), WrongType);
    await assert.rejects(ids.produceMany(0), { message: 'ERR COUNT must be between 1 and 2147483648' });
    const big = new IdGenerator(t.client, 'big');
    assert.equal(await big.raiseFloor(Number.MAX_SAFE_INTEGER - 2), true);
    assert.equal(await big.produce(), Number.MAX_SAFE_INTEGER - 1);
    await assert.rejects(big.produceMany(2), RangeError, 'its last ID is past 2**53 - 1');
    await assert.rejects(big.produce(), RangeError, 'never a number that may equal another ID');
    await assert.rejects(big.current(), RangeError);
    assert.equal(await raw(t.client, 'GET', 'big'), '9007199254740993');
  });
});

onEachServer('HashIdGenerator', (t) => {
  it('keeps one generator per field of a hash', async () => {
    const ids = new HashIdGenerator(t.client, 'ids');
    assert.equal(await ids.produce('post'), 1);
    assert.equal(await ids.produce('post'), 2);
    assert.equal(await ids.produce('user'), 1);
    assert.equal(await ids.reserve('comment', 100), true);
    assert.equal(await ids.reserve('comment', 5), false);
    assert.equal(await ids.produce('comment'), 101);
    assert.equal(await ids.raiseFloor('post', 1), false);
    assert.equal(await ids.raiseFloor('post', 50), true);
    const block = await ids.produceMany('post', 2);
    assert.deepEqual([...block], [51, 52]);
    assert.equal(await ids.current('post'), 52);
    assert.equal(await ids.current('none'), 0);
    assert.deepEqual(await raw(t.client, 'HMGET', 'ids', 'post', 'user', 'comment'), ['52', '1', '101']);
    await raw(t.client, 'HSET', 'ids', 'bad', 'x');
    await assert.rejects(ids.produce('bad'), { message: 'ERR hash value is not an integer' });
    await assert.rejects(new HashIdGenerator(t.client, 'ids').reserve('c2', -3), RangeError);
  });
});

onEachServer('UrlShorty', (t) => {
  it('gives a URL one short ID, in base 62, and restores it; its keys share a slot', async () => {
    const shorty = new UrlShorty(t.client);
    assert.deepEqual([shorty.counter, shorty.ids, shorty.urls], ['{UrlShorty}:counter', '{UrlShorty}:ids',
      '{UrlShorty}:urls']);
    assert.equal(new Set([shorty.counter, shorty.ids, shorty.urls].map(keySlot)).size, 1);
    const page = 'https://redis.io/docs/latest/develop/data-types/strings/';
    assert.equal(await shorty.shorten(page), '1');
    assert.equal(await shorty.shorten('https://example.com/'), '2');
    assert.equal(await shorty.shorten(page), '1');
    assert.equal(await shorty.restore('1'), page);
    assert.equal(await raw(t.client, 'GET', '{UrlShorty}:counter'), '2');
    assert.equal(await raw(t.client, 'HGET', '{UrlShorty}:ids', page), '1');
    for (const unknown of ['3', 'zz', '0', '', '01', 'a-b', 'é', 'aZl8N0y58M8', 'zzzzzzzzzzzz']) {
      assert.equal(await shorty.restore(unknown), null, unknown);
    }
    await raw(t.client, 'SET', '{UrlShorty}:counter', '61');
    assert.equal(await shorty.shorten('https://example.com/z'), '10');
    assert.equal(await shorty.restore('10'), 'https://example.com/z');
    const other = new UrlShorty(t.client, 'links');
    assert.equal(await other.shorten(page), '1');
    assert.equal(await raw(t.client, 'EXISTS', '{links}:counter', '{links}:ids', '{links}:urls'), 3);
    assert.throws(() => new UrlShorty(t.client, ''), TypeError);
  });
});

it('base 62 round-trips every ID and refuses other text', () => {
  for (const n of [0, 1, 9, 10, 35, 36, 61, 62, 3843, 3844, MAX_ID]) assert.equal(fromBase62(toBase62(n)), BigInt(n));
  assert.deepEqual([toBase62(61), toBase62(62), toBase62(MAX_ID)], ['Z', '10', 'aZl8N0y58M7']);
  assert.deepEqual(['', '00', '01', 'a b', 'aZl8N0y58M8'].map(fromBase62), [null, null, null, null, null]);
  assert.throws(() => toBase62(-1), RangeError);
  assert.throws(() => toBase62(1.5), RangeError);
});
