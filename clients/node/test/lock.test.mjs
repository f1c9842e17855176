import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Lock, LockLost, LockNotAcquired, connectionOf } from '../dist/index.js';
import { flavors, startServer, CLIENTS, closeClient, raw } from './harness.mjs';
import { answersAtOnce, blockedClients, onEachCluster, until } from './matrix.mjs';

for (const flavor of flavors()) {
  for (const [kind, make] of Object.entries(CLIENTS)) {
    describe(`Lock on ${flavor.name} with ${kind}`, () => {
      let server;
      let client;
      let other;
      before(async () => {
        server = await startServer(flavor.path);
        client = await make(server);
        other = await make(server);
      });
      after(async () => {
        await connectionOf(client).close();
        await connectionOf(other).close();
        await closeClient(client);
        await closeClient(other);
        await server.stop();
      });

      it('acquires once, refuses another token, releases only its own', async () => {
        const a = new Lock(client, 'lock:1', { token: 'a', ttl: 10_000 });
        const b = new Lock(other, 'lock:1', { token: 'b' });
        assert.equal(await a.acquire(), true);
        assert.equal(await a.acquire(), false, 'NX: a held lock is not taken again');
        assert.equal(await b.acquire(), false);
        assert.equal(await raw(client, 'GET', 'lock:1'), 'a');
        const pttl = Number(await raw(client, 'PTTL', 'lock:1'));
        assert.ok(pttl > 9000 && pttl <= 10_000, `lease ${pttl}`);
        assert.equal(await b.release(), false);
        assert.equal(await a.owned(), true);
        assert.equal(await b.owned(), false);
        assert.equal(await a.locked(), true);
        assert.equal(await a.extend(20_000), true);
        assert.ok(Number(await raw(client, 'PTTL', 'lock:1')) > 19_000);
        assert.equal(await b.extend(20_000), false);
        assert.equal(await a.release(), true);
        assert.equal(await raw(client, 'EXISTS', 'lock:1'), 0);
        assert.equal(await a.release(), false);
      });

      it('waits in the server on a connection of its own, first come first served', async () => {
        const holder = new Lock(client, 'lock:2', { token: 'holder', ttl: 10_000 });
        assert.equal(await holder.acquire(), true);
        const order = [];
        const first = new Lock(client, 'lock:2', { token: 'first', ttl: 10_000 });
        const second = new Lock(client, 'lock:2', { token: 'second', ttl: 10_000 });
        // Each waiter parked in the server before the next is sent (a 50 ms pause was not enough once with both
        // cores busy: the second arrived first).
        const p1 = first.acquire({ wait: 5000 }).then((got) => order.push(['first', got]));
        await until(async () => (await blockedClients(client)) === 1);
        const p2 = second.acquire({ wait: 5000 }).then((got) => order.push(['second', got]));
        await until(async () => (await blockedClients(client)) === 2);
        // The application's client is not held up by the waits.
        await answersAtOnce(client);
        assert.equal(await holder.release(), true);
        await p1;
        assert.deepEqual(order, [['first', true]]);
        assert.equal(await first.release(), true);
        await p2;
        assert.deepEqual(order, [['first', true], ['second', true]]);
        assert.equal(await second.release(), true);
      });

      it('a wait whose connection drops rejects, and is not sent again', async () => {
        const holder = new Lock(client, 'lock:drop', { token: 'holder' });
        assert.equal(await holder.acquire(), true);
        const waiter = new Lock(client, 'lock:drop', { token: 'w' });
        // Settled into a value at once: the rejection comes while the test is still sending the kill.
        const outcome = waiter.acquire({ wait: 5000 }).then((got) => got, (error) => error);
        const blocked = async () => String(await raw(client, 'CLIENT', 'LIST')).split('\n')
          .find((line) => line.includes('cmd=lock.acquire') && / flags=\S*b/.test(line));
        await until(blocked);
        const id = /\bid=(\d+)/.exec(await blocked())[1];
        assert.equal(await raw(client, 'CLIENT', 'KILL', 'ID', id), 1);
        assert.ok((await outcome) instanceof Error, 'the wait rejects');
        // Nothing queued again: no client waits, and the released lock goes to nobody.
        await sleep(300);
        assert.equal(await blocked(), undefined);
        assert.equal(await holder.release(), true);
        await sleep(50);
        assert.equal(await raw(client, 'EXISTS', 'lock:drop'), 0);
      });

      it('a wait that times out answers false; an abort rejects and leaves nothing queued or held', async () => {
        const holder = new Lock(client, 'lock:3', { token: 'holder' });
        assert.equal(await holder.acquire(), true);
        const waiter = new Lock(client, 'lock:3', { token: 'w' });
        assert.equal(await waiter.acquire({ wait: 100 }), false);
        const controller = new AbortController();
        const pending = waiter.acquire({ wait: 60_000, signal: controller.signal });
        await sleep(100);
        controller.abort();
        await assert.rejects(pending, { name: 'AbortError' });
        assert.equal(await holder.release(), true);
        await sleep(50);
        assert.equal(await raw(client, 'EXISTS', 'lock:3'), 0, 'the aborted waiter was not granted the lock');
        const already = new AbortController();
        already.abort();
        await assert.rejects(waiter.acquire({ wait: 100, signal: already.signal }), { name: 'AbortError' });
      });

      it('fences each acquisition with a strictly increasing token', async () => {
        const a = new Lock(client, 'lock:4', { fence: 'lock:4:fence' });
        assert.equal(await a.acquire(), true);
        assert.equal(a.fencingToken, 1);
        assert.equal(await a.release(), true);
        assert.equal(await a.acquire(), true);
        assert.equal(a.fencingToken, 2);
        assert.equal(await a.release(), true);
      });

      it('using() holds, renews and gives back; a stolen lock calls onLost once or throws LockLost', async () => {
        const lock = new Lock(client, 'lock:5', { ttl: 300, renew: true });
        const result = await lock.using(async () => {
          await sleep(700);
          assert.equal(await raw(client, 'GET', 'lock:5'), lock.token, 'renewed past its 300 ms lease');
          return 42;
        });
        assert.equal(result, 42);
        assert.equal(await raw(client, 'EXISTS', 'lock:5'), 0);

        const lost = [];
        const watched = new Lock(client, 'lock:6', { ttl: 300, renew: true, onLost: (l) => lost.push(l.token) });
        await watched.using(async () => {
          await raw(client, 'DEL', 'lock:6');
          await sleep(300);
        });
        assert.deepEqual(lost, [watched.token]);

        const plain = new Lock(client, 'lock:7', { ttl: 10_000 });
        await assert.rejects(plain.using(() => raw(client, 'DEL', 'lock:7')), LockLost);

        const busy = new Lock(other, 'lock:8', { token: 'busy' });
        assert.equal(await busy.acquire(), true);
        await assert.rejects(new Lock(client, 'lock:8', { wait: 100 }).using(() => 1), LockNotAcquired);
      });

      it('hold() takes for an await using block, whose end gives back', async () => {
        // What `await using held = await lock.hold()` runs (this file is plain JavaScript for Node 18).
        const lock = new Lock(client, 'lock:9', { ttl: 5000 });
        const held = await lock.hold();
        assert.equal(held, lock);
        assert.equal(await raw(client, 'GET', 'lock:9'), lock.token);
        await held[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')]();
        assert.equal(await raw(client, 'EXISTS', 'lock:9'), 0);
      });
    });
  }
}

onEachCluster('Lock', (t) => {
  it('routes every key to its node, waits included', async () => {
    for (let i = 0; i < 20; i++) {
      const holder = new Lock(t.client, `cl:${i}`, { token: 'h', ttl: 5000 });
      assert.equal(await holder.acquire(), true);
      const waiter = new Lock(t.client, `cl:${i}`, { token: 'w', ttl: 5000 });
      const pending = waiter.acquire({ wait: 3000 });
      await sleep(20);
      assert.equal(await holder.release(), true);
      assert.equal(await pending, true);
      assert.equal(await waiter.release(), true);
    }
  });
});
