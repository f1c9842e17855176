// The connections of its own that a wait used close when the application's client closes: quit(), disconnect()
// (ioredis), quit()/disconnect() (node-redis 4), close()/destroy() (node-redis 5). Checked in the server's CLIENT
// LIST: after the client closes, no connection of it is left (an idle one would stay open, unreferenced, without
// the client's 'end' being followed). The same for the cluster clients, on every node. A close takes a few ms
// (the client's 'end', then a QUIT or a socket's end); `until` allows 3 s, far above that with both cores busy.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { Lock, keySlot } from '../dist/index.js';
import { flavors, startCluster, startServer } from './harness.mjs';
import { until } from './matrix.mjs';

const KINDS = {
  async ioredis(server) {
    const client = new Redis({ host: server.host, port: server.port });
    return { client, closings: { 'quit()': () => client.quit(), 'disconnect()': () => client.disconnect() } };
  },
  async 'node-redis 4'(server) {
    const { createClient } = await import('redis4');
    const client = createClient({ url: server.url });
    client.on('error', () => undefined);
    await client.connect();
    return { client, closings: { 'quit()': () => client.quit(), 'disconnect()': () => client.disconnect() } };
  },
  async 'node-redis 5'(server) {
    const { createClient } = await import('redis');
    const client = createClient({ url: server.url });
    client.on('error', () => undefined);
    await client.connect();
    return { client, closings: { 'close()': () => client.close(), 'destroy()': () => client.destroy() } };
  },
};

/** The ids of the server's connections, but `admin`'s. */
async function others(admin) {
  const mine = await admin.call('CLIENT', 'ID');
  const list = String(await admin.call('CLIENT', 'LIST'));
  return list.split('\n').filter(Boolean).map((line) => Number(/\bid=(\d+)/.exec(line)[1])).filter((id) => id !== mine);
}

for (const flavor of flavors()) {
  describe(`the connections of waits close with the client on ${flavor.name}`, () => {
    let server;
    let admin;
    before(async () => {
      server = await startServer(flavor.path);
      admin = new Redis({ host: server.host, port: server.port });
    });
    after(async () => {
      admin.disconnect();
      await server.stop();
    });
    for (const [kind, make] of Object.entries(KINDS)) {
      for (const closing of kind === 'node-redis 5' ? ['close()', 'destroy()'] : ['quit()', 'disconnect()']) {
        it(`with ${kind}, on ${closing}`, async () => {
          const key = `follow:${kind}:${closing}`;
          const holder = new Lock(admin, key);
          assert.equal(await holder.acquire(), true);
          const { client, closings } = await make(server);
          // A wait that runs out: its connection is then idle, kept for the next wait.
          assert.equal(await new Lock(client, key).acquire({ wait: 50 }), false);
          assert.equal((await others(admin)).length, 2);
          await closings[closing]();
          await until(async () => (await others(admin)).length === 0);
          assert.equal(await holder.release(), true);
        });
      }
    }
  });
}

const CLUSTERS = {
  async ioredis(cluster) {
    const client = new Redis.Cluster(cluster.nodes.map((n) => ({ host: n.host, port: n.port })));
    await new Promise((resolve, reject) => client.once('ready', resolve).once('error', reject));
    return { client, closings: { 'quit()': () => client.quit(), 'disconnect()': () => client.disconnect() } };
  },
  async 'node-redis 4'(cluster) {
    const { createCluster } = await import('redis4');
    const client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })) });
    client.on('error', () => undefined);
    await client.connect();
    return { client, closings: { 'quit()': () => client.quit(), 'disconnect()': () => client.disconnect() } };
  },
  async 'node-redis 5'(cluster) {
    const { createCluster } = await import('redis');
    const client = createCluster({ rootNodes: cluster.nodes.map((n) => ({ url: n.url })) });
    client.on('error', () => undefined);
    await client.connect();
    return { client, closings: { 'close()': () => client.close(), 'destroy()': () => client.destroy() } };
  },
};

for (const flavor of flavors().slice(0, 1)) {
  describe(`the connections of waits close with the cluster client on a ${flavor.name} cluster`, () => {
    let cluster;
    let admins;
    before(async () => {
      cluster = await startCluster(flavor.path);
      admins = cluster.nodes.map((n) => new Redis({ host: n.host, port: n.port }));
    });
    after(async () => {
      for (const admin of admins) admin.disconnect();
      await cluster.stop();
    });
    for (const [kind, make] of Object.entries(CLUSTERS)) {
      for (const closing of kind === 'node-redis 5' ? ['close()', 'destroy()'] : ['quit()', 'disconnect()']) {
        it(`with ${kind}, on ${closing}`, async () => {
          const key = `follow:{${kind}:${closing}}`;
          const shards = await admins[0].call('CLUSTER', 'SLOTS');
          const slot = keySlot(key);
          const [, , [, port]] = shards.find(([from, to]) => from <= slot && slot <= to);
          const admin = admins[cluster.nodes.findIndex((n) => n.port === port)];
          const holder = new Lock(admin, key);
          assert.equal(await holder.acquire(), true);
          const { client, closings } = await make(cluster);
          assert.equal(await new Lock(client, key).acquire({ wait: 50 }), false);
          // The wait's connection (and the client's own, when it made one there).
          assert.ok((await others(admin)).length >= 1);
          await closings[closing]();
          for (const each of admins) await until(async () => (await others(each)).length === 0);
          assert.equal(await holder.release(), true);
        });
      }
    }
  });
}
