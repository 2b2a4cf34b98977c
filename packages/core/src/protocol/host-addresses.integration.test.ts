/**
 * A host name with several addresses (a Kubernetes headless service): the client tries every
 * address of every host, shuffled, and resolves the names again before each round. Here one
 * address is a server out of its quorum (it accepts a connection and closes it), the other a
 * live server; the names are resolved by the client's `lookup` option.
 */
import { createServer, type Server } from 'node:net';
import { startProxy, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { onCleanup, openClient, transportName } from '../../test/support';

/** A server that accepts every connection and closes it at once (no quorum, no session). */
async function outOfQuorum(host: string, port: number, accepted?: () => void): Promise<Server> {
  const server = createServer((socket) => {
    accepted?.();
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, resolve);
  });
  onCleanup(() => new Promise((resolve) => server.close(resolve)));
  return server;
}

/** A live server (a proxy to it) on 127.0.0.2 and one out of quorum on 127.0.0.1, one port. */
async function twoAddresses() {
  const { connectString } = await testZooKeeper();
  // All of 127/8 is loopback: the live one listens on 127.0.0.2, the dead one on 127.0.0.1.
  const live = await startProxy(connectString, { host: '127.0.0.2' });
  onCleanup(() => live.close());
  await outOfQuorum('127.0.0.1', live.port);
  return { port: live.port };
}

describe.runIf(transportName === 'typescript')('a host name with several addresses', () => {
  it('connects through the address that works, whichever comes first, for every client', async () => {
    const { port } = await twoAddresses();
    const asked: string[] = [];
    const lookup = async (name: string) => {
      asked.push(name);
      return ['127.0.0.1', '127.0.0.2'];
    };
    const clients = await Promise.all(
      [1, 2, 3].map(() => openClient({ connect: `zk.test:${port}`, lookup })),
    );
    await Promise.all(clients.map((client) => client.connected(10_000)));
    for (const client of clients) expect(client.state).toBe('connected');
    expect(new Set(asked)).toEqual(new Set(['zk.test']));
  });

  it('resolves the name again for the next round when its addresses change', async () => {
    const { port } = await twoAddresses();
    const answers = [['127.0.0.1'], ['127.0.0.1'], ['127.0.0.2']];
    let asked = 0;
    const lookup = () => answers[Math.min(asked++, answers.length - 1)]!;
    const client = await openClient({ connect: `zk.test:${port}`, lookup });
    await client.connected(10_000);
    expect(asked).toBeGreaterThanOrEqual(3);
  });

  it('connects to a host given as an address while another name never resolves', async () => {
    // One name's lookup never settles (a hung resolver, a custom lookup that forgot to answer):
    // only that host is given up, for each round, never the address given beside it.
    const { connectString } = await testZooKeeper();
    const port = Number(connectString.split(',')[0]!.split(':').pop());
    const asked: string[] = [];
    const lookup = (name: string) => {
      asked.push(name);
      return new Promise<never>(() => {});
    };
    const client = await openClient({
      connect: `hung.example:${port},127.0.0.1:${port}`,
      sessionTimeoutMs: 4_000,
      lookup,
    });
    await client.connected(20_000);
    expect(client.state).toBe('connected');
    expect(asked.every((name) => name === 'hung.example')).toBe(true);
  });

  it('refuses a lookup that is not a function, naming the option', async () => {
    await expect(
      openClient({ connect: `zk.test:2181`, lookup: 'dns' as never }),
    ).rejects.toMatchObject({ code: 'BadArguments', message: expect.stringContaining('lookup') });
  });
});

/**
 * Both families behind one name: zkrx connects to each address itself (an address given to
 * `net.connect` is never looked up again), so Node's own selection among a name's addresses —
 * `autoSelectFamily` (happy eyeballs), on by default since Node 20, whose attempt timeout is
 * 250 ms on Node 22 and 24 and 500 ms on Node 26 — never decides which server a client reaches.
 * Runs on every Node line (`test:lines`).
 */
describe.runIf(transportName === 'typescript')('a host name with IPv6 and IPv4 addresses', () => {
  for (const live of ['::1', '127.0.0.1'] as const) {
    it(`reaches the live server on ${live} and tries the other address itself, in either order (Node ${process.versions.node})`, async () => {
      const { connectString } = await testZooKeeper();
      const proxy = await startProxy(connectString, { host: live });
      onCleanup(() => proxy.close());
      const dead = live === '::1' ? '127.0.0.1' : '::1';
      let deadAccepted = 0;
      await outOfQuorum(dead, proxy.port, () => {
        deadAccepted += 1;
      });
      const clients = [];
      for (const order of [
        [dead, live],
        [live, dead],
      ]) {
        // The first round has the dead address alone (tried, by zkrx, and refused), the next
        // ones both families, in this order before the client's shuffle.
        let asked = 0;
        const lookup = () => (asked++ === 0 ? [dead] : order);
        clients.push(await openClient({ connect: `zk.test:${proxy.port}`, lookup }));
      }
      await Promise.all(clients.map((client) => client.connected(10_000)));
      for (const client of clients) expect(client.state).toBe('connected');
      expect(deadAccepted).toBeGreaterThanOrEqual(clients.length);
    });
  }

  it('connects through the system resolver (localhost)', async () => {
    const { connectString } = await testZooKeeper();
    const port = Number(connectString.split(',')[0]!.split(':').pop());
    const client = await openClient({ connect: `localhost:${port}` });
    await client.connected(10_000);
    expect(client.state).toBe('connected');
  });
});
