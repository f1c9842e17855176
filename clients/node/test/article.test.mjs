import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Article, SlugIndex, SlugTaken, InvalidSlug } from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('Article', (t) => {
  it('creates only if absent, updates, counts views, moves and releases slugs', async () => {
    const article = new Article(t.client, 10086, { slugIndex: 'slug.to.id' });
    assert.deepEqual(await article.get(), { id: '10086' });
    assert.equal(await article.create('greeting', 'hello world', 'peter', 'hello'), true);
    assert.equal(await article.create('again', 'x', 'y'), false);
    const got = await article.get();
    assert.equal(got.title, 'greeting');
    assert.ok(Number(got.create_at) > 1_600_000_000);
    assert.equal(await article.update({ title: 'hi' }), true);
    assert.equal(await new Article(t.client, 1).update({ title: 'no such' }), false);
    assert.equal(await raw(t.client, 'EXISTS', 'article::1'), 0);
    assert.equal(await article.view(), 1);
    assert.equal(await article.view(), 2);
    assert.equal(await new Article(t.client, 2).view(), null);
    const index = new SlugIndex(t.client, 'slug.to.id');
    assert.equal(await index.lookup('hello'), 'article::10086');
    const other = new Article(t.other, 7, { slugIndex: 'slug.to.id' });
    await assert.rejects(other.create('t', 'c', 'a', 'hello'), SlugTaken);
    await assert.rejects(other.create('t', 'c', 'a', 'no spaces'), InvalidSlug);
    assert.equal(await raw(t.client, 'EXISTS', 'article::7'), 0, 'a refused create writes nothing');
    assert.equal(await article.setSlug('hi-there'), true);
    assert.equal(await index.lookup('hello'), null);
    assert.equal(await index.lookup('hi-there'), 'article::10086');
    assert.equal(await article.delete(), true);
    assert.equal(await article.delete(), false);
    assert.equal(await index.lookup('hi-there'), null);
    await assert.rejects(article.update({}), TypeError);
    await assert.rejects(new Article(t.client, 3).setSlug('x'), TypeError);
  });

  it('answers what the book answers, and reads a hash the book wrote', async () => {
    const article = new Article(t.client, 10086);
    assert.equal(article.id, '10086');
    assert.equal(article.key, 'article::10086');
    assert.equal(await article.isExists(), false);
    assert.equal(await article.create('message', 'hello world', 'peter'), true);
    const got = await article.get();
    assert.deepEqual(Object.keys(got), ['id', 'title', 'content', 'author', 'create_at']);
    const createAt = got.create_at;
    delete got.create_at;
    assert.deepEqual(got, { id: '10086', title: 'message', content: 'hello world', author: 'peter' });
    assert.match(createAt, /^\d+\.\d+$/);
    assert.ok(Math.abs(Number(createAt) - Date.now() / 1000) < 60, createAt);
    assert.equal(await article.update({ author: 'john' }), true);
    assert.deepEqual(await article.get(), { ...got, author: 'john', create_at: createAt });
    assert.equal(await article.isExists(), true);
    const missing = new Article(t.client, 10087);
    assert.deepEqual(await missing.get(), { id: '10087' });
    assert.equal(await missing.record(), null);
    await raw(t.client, 'HSET', 'article::1', 'title', 't', 'content', 'c', 'author', 'a',
      'create_at', '1551199163.4296808');
    assert.deepEqual(await new Article(t.client, 1).get(),
      { id: '1', title: 't', content: 'c', author: 'a', create_at: '1551199163.4296808' });
    assert.equal(await article.view(), 1);
    const record = await article.record();
    assert.equal(record.id, '10086');
    assert.equal(record.author, 'john');
    assert.equal(record.views, 1);
    assert.equal(typeof record.created_at, 'number');
    assert.ok(Math.abs(record.created_at - Number(createAt) * 1000) < 1);
    assert.ok(record.updated_at >= record.created_at);
    const custom = new Article(t.client, 5, { key: '{blog}article::5' });
    assert.equal(await custom.create('t', 'c', 'a'), true);
    assert.equal(await raw(t.client, 'HGET', '{blog}article::5', 'title'), 't');
  });
});
