import { it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { AutoComplete, WrongType } from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('AutoComplete', (t) => {
  it('the book\'s class: feed, hint, set and feedex return what the book\'s do', async () => {
    const ac = new AutoComplete(t.client, 'search');
    assert.equal(ac.key, 'AutoComplete:search');
    const replies = [await ac.feed('黄健宏'), await ac.feed('黄晓明', 3)];
    replies.push(await ac.feedex('黄埔军校', 1, 300_000));
    assert.deepEqual(replies, [undefined, undefined, undefined]);
    const hints = await ac.hint('黄');
    assert.deepEqual(hints, ['黄晓明', '黄埔军校', '黄健宏'], 'equal weights by content, descending');
    assert.deepEqual(await ac.hint('黄晓'), ['黄晓明']);
    assert.deepEqual(await ac.hint('黄', 2), ['黄晓明', '黄埔军校']);
    assert.deepEqual(await ac.hint('黄', 0), ['黄晓明', '黄埔军校', '黄健宏'], 'ZRANGE 0 -1: all');
    assert.deepEqual(await ac.hint('黄', -1), ['黄晓明', '黄埔军校'], 'ZRANGE 0 -2: all but the last');
    assert.deepEqual(await ac.hint('黄', -5), []);
    assert.deepEqual(await ac.hint(''), [], 'an empty segment has no table');
    assert.deepEqual(await ac.hint('x'), []);
    assert.equal(await ac.set('黄健宏', 10), undefined);
    assert.deepEqual(await ac.hint('黄'), ['黄健宏', '黄晓明', '黄埔军校']);
    await ac.feed('黄健宏', -2.5);
    assert.equal(await ac.weight('黄健宏'), 7.5);
    assert.equal(await ac.weight('none'), null);
    assert.equal(await ac.count(), 3);
    assert.equal(await ac.remove('黄健宏', 'none'), 1);
    assert.equal(await ac.remove(), 0);
    assert.equal(await ac.count(), 2);
    await ac.feed(Buffer.from('redis'), 0.1);
    await ac.feed('redis', 0.2);
    assert.equal(await ac.weight('redis'), 0.30000000000000004, 'a weight is sent and read back exactly');
    assert.equal(await raw(t.client, 'TYPE', 'AutoComplete:search'), 'rr-autocp');
  });

  it('feedex entries fade by themselves; a key of its own; errors', async () => {
    const ac = new AutoComplete(t.client, 'fading', { key: 'ac:{fading}' });
    await ac.feedex('rust', 5, 100);
    await ac.feed('ruby', 1);
    assert.deepEqual(await ac.hint('ru'), ['rust', 'ruby']);
    await sleep(150);
    assert.deepEqual(await ac.hint('ru'), ['ruby']);
    assert.equal(await ac.weight('rust'), null);
    assert.equal(await ac.count(), 1);
    await assert.rejects(ac.feed(''), { message: 'ERR content must not be empty' });
    await assert.rejects(ac.feed('x'.repeat(257)), { message: 'ERR content must be at most 256 characters' });
    await assert.rejects(ac.set('x', Number.POSITIVE_INFINITY), { message: /^ERR / });
    await assert.rejects(ac.feedex('x', 1, 0), { message: /^ERR invalid expire time/ });
    assert.equal(await ac.count(), 1, 'nothing changed');
    await raw(t.client, 'SET', 'AutoComplete:str', 'x');
    await assert.rejects(new AutoComplete(t.client, 'str').hint('a'), WrongType);
  });
});
