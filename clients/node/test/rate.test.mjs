import { it } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter, LimiterMismatch, CostTooHigh, WrongType } from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

const close = (actual, expected, slack = 100) =>
  assert.ok(actual <= expected && actual > expected - slack, `${actual} is not within ${slack} ms below ${expected}`);

onEachServer('RateLimiter', (t) => {
  it('GCRA: decisions as objects with camelCase fields, and the book\'s methods', async () => {
    const login = new RateLimiter(t.client, 'login', 60_000, 5);
    assert.equal(login.key(42), 'RateLimiter:login:42');
    assert.deepEqual(await login.peek(42), {
      limited: false, allowed: true, limit: 5, remaining: 5, retryAfterMs: -1, resetAfterMs: 0,
    });
    assert.equal(await raw(t.client, 'EXISTS', 'RateLimiter:login:42'), 0, 'a peek consumes nothing');
    assert.deepEqual(await login.limit(42), {
      limited: false, allowed: true, limit: 5, remaining: 4, retryAfterMs: -1, resetAfterMs: 12_000,
    });
    const four = await login.limit(42, 4);
    assert.deepEqual([four.limited, four.limit, four.remaining, four.retryAfterMs], [false, 5, 0, -1]);
    close(four.resetAfterMs, 60_000);
    const refused = await login.limit(42);
    assert.deepEqual([refused.limited, refused.allowed, refused.remaining], [true, false, 0]);
    close(refused.retryAfterMs, 12_000);
    assert.equal(await login.isPermitted(42), false);
    assert.equal(await login.remaining(42), 0);
    assert.equal(await login.duration(42), 12, 'seconds, rounded up');
    assert.equal(await login.revoke(42), undefined);
    assert.equal(await raw(t.client, 'EXISTS', 'RateLimiter:login:42'), 0);
    assert.equal(await login.duration(42), null);
    assert.equal(await login.remaining(42), 5);
    assert.equal(await login.isPermitted(42), true);
    assert.equal(await login.remaining(42), 4);
    assert.equal(await login.revoke('nobody'), undefined);
  });

  it('BURST, several limits at once (all or nothing), and an exact SLIDING window', async () => {
    const bursty = new RateLimiter(t.client, 'api', 1000, 1, { burst: 3 });
    assert.deepEqual((await bursty.limit('u')).limit, 3);
    assert.equal(await bursty.isPermitted('u'), true);
    assert.equal(await bursty.isPermitted('u'), true);
    assert.equal(await bursty.isPermitted('u'), false);

    const two = new RateLimiter(t.client, 'search', 1000, 10, { also: [{ interval: 3_600_000, max: 3 }] });
    for (let i = 0; i < 3; i++) assert.equal((await two.limit('u')).allowed, true);
    const hourly = await two.limit('u');
    assert.deepEqual([hourly.limited, hourly.limit, hourly.remaining], [true, 3, 0], 'the hourly limit decides');
    close(hourly.retryAfterMs, 1_200_000, 1000);
    assert.equal((await two.peek('u')).limited, true);

    const quota = new RateLimiter(t.client, 'quota', 1000, 2, { sliding: true });
    assert.deepEqual(await quota.limit(7, 2), {
      limited: false, allowed: true, limit: 2, remaining: 0, retryAfterMs: -1, resetAfterMs: 1000,
    });
    const peeked = await quota.peek(7);
    assert.deepEqual([peeked.limited, peeked.limit, peeked.remaining], [true, 2, 0]);
    close(peeked.retryAfterMs, 1000);
  });

  it('errors come out as classes and change nothing', async () => {
    const gcra = new RateLimiter(t.client, 'mixed', 1000, 5);
    const sliding = new RateLimiter(t.client, 'mixed', 1000, 5, { sliding: true });
    const two = new RateLimiter(t.client, 'mixed', 1000, 5, { also: [{ interval: 60_000, max: 50 }] });
    assert.equal(await gcra.isPermitted('k'), true);
    const state = await raw(t.client, 'GET', 'RateLimiter:mixed:k');
    await assert.rejects(sliding.limit('k'), (error) => {
      assert.ok(error instanceof LimiterMismatch);
      assert.equal(error.message, 'MISMATCH the key holds a GCRA limiter, not a SLIDING window (RATE.RESET it first)');
      return true;
    });
    await assert.rejects(two.peek('k'), (error) => {
      assert.ok(error instanceof LimiterMismatch);
      assert.equal(error.message,
        'MISMATCH the key holds a limiter of 1 limit(s); this call gives 2 (RATE.RESET it first)');
      return true;
    });
    await assert.rejects(gcra.limit('k', 6), (error) => {
      assert.ok(error instanceof CostTooHigh);
      assert.equal(error.message, 'TOOCOSTLY cost 6 exceeds the burst of 5: such an action can never be allowed');
      return true;
    });
    await assert.rejects(sliding.limit('other', 6), CostTooHigh);
    assert.equal(await raw(t.client, 'GET', 'RateLimiter:mixed:k'), state, 'nothing changed');
    await raw(t.client, 'SET', 'RateLimiter:mixed:text', 'hello');
    await assert.rejects(gcra.limit('text'), LimiterMismatch);
    await raw(t.client, 'HSET', 'RateLimiter:mixed:h', 'f', '1');
    await assert.rejects(gcra.limit('h'), WrongType);
    await assert.rejects(new RateLimiter(t.client, 'bad', 0, 5).limit('k'), { message: /^ERR period must be/ });
    await assert.rejects(new RateLimiter(t.client, 'bad', Number.NaN, 5).limit('k'), TypeError);
    assert.equal(await raw(t.client, 'EXISTS', 'RateLimiter:bad:k'), 0);
  });
});
