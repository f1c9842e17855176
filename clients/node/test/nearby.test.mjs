import { it } from 'node:test';
import assert from 'node:assert/strict';
import { Location, NoPosition } from '../dist/index.js';
import { onEachServer } from './matrix.mjs';
import { raw } from './harness.mjs';

onEachServer('Location', (t) => {
  it('answers what the book answers, on the plain geo key', async () => {
    const location = new Location(t.client, 'paris');
    for (const [user, long, lati] of [
      ['eiffel', 2.2945, 48.8584], ['arc-de-triomphe', 2.2950, 48.8738],
      ['louvre', 2.3376, 48.8606], ['notre-dame', 2.3499, 48.8530],
    ]) assert.equal(await location.pin(user, long, lati), undefined);
    assert.equal(await location.size(), 4);
    const [long, lati] = await location.locate('eiffel');
    assert.deepEqual([long.toFixed(4), lati.toFixed(4)], ['2.2945', '48.8584']);
    assert.equal(await location.locate('bastille'), null);
    assert.ok(Math.abs(await location.distance('eiffel', 'arc-de-triomphe') - 1.7134) < 1e-4);
    assert.equal(await location.distance('eiffel', 'bastille'), null);
    assert.deepEqual(await location.search('eiffel', 5), ['arc-de-triomphe', 'louvre', 'notre-dame']);
    assert.deepEqual(await location.search('eiffel', 5, 2), ['arc-de-triomphe']);
    assert.deepEqual(await location.search('eiffel', 0.5), []);
    assert.equal(await location.randomNeighbour('eiffel'), null);
    assert.equal(await location.cachedRandomNeighbour('eiffel'), null);
    await location.pin('trocadero', 2.2885, 48.8620);
    assert.equal(await location.randomNeighbour('eiffel'), 'trocadero');
    assert.equal(await location.cachedRandomNeighbour('eiffel', 10), 'trocadero');
    await assert.rejects(location.randomNeighbour('bastille'), (error) =>
      error instanceof NoPosition && /^NOPOSITION member 'bastille' has no position/.test(error.message));
    assert.deepEqual(await raw(t.client, 'KEYS', '*'), ['paris']);
  });

  it('draws a neighbour among every user within a kilometre, not the nine nearest', async () => {
    const location = new Location(t.client, 'berlin');
    await location.pin('me', 13.4, 52.5);
    for (let i = 0; i < 30; i++) await location.pin(`u${i}`, 13.4 + 0.0002 * (i + 1), 52.5);
    await location.pin('far', 13.5, 52.5);
    const drawn = new Set();
    // Each user missed by 600 uniform draws with probability (29/30)^600 < 2e-9.
    for (let i = 0; i < 600; i++) drawn.add(await location.randomNeighbour('me'));
    assert.deepEqual([...drawn].sort(), Array.from({ length: 30 }, (_, i) => `u${i}`).sort());
  });
});
