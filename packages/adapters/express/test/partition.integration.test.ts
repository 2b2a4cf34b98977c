/**
 * A partition seen from an Express app: a call sent right after the connection drops (so the C
 * client closes its socket silently) must still be reported as a lost session and lock, and the
 * app's other sockets must keep working. Both were bugs of the zookeeper binding, fixed by
 * zkrx's patch and @zkrx/core.
 */
import { acquireWrite } from '@zkrx/rwlock';
import { childrenOf, connectedClient, lockPath } from '@zkrx/test-support';
import { startProxy, type TcpProxy, testZooKeeper } from '@zkrx/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { flavours, listen, openRequest } from './apps';

const proxies: TcpProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

async function partitionedClient(sessionTimeoutMs: number) {
  const { connectString } = await testZooKeeper();
  const proxy = await startProxy(connectString);
  proxies.push(proxy);
  const client = await connectedClient({ connect: proxy.connectString, sessionTimeoutMs });
  return { client, proxy };
}

/**
 * When a call is sent just after the connection dropped and the reconnects are refused (a
 * partition), the C client meets the dead socket while sending and closes it without a session
 * event; every later attempt fails before queued events are delivered.
 */
describe('@zkrx/core: a call sent right after the connection drops, during a partition', () => {
  it('session$ reports the loss, and a held lock is lost once the server expired the session', async () => {
    const { client, proxy } = await partitionedClient(2_000);
    const observer = await connectedClient();
    const path = lockPath('partition');
    const lease = await acquireWrite(client, path);

    proxy.refuse(true);
    proxy.cut();
    void client.promises.exists(path).catch(() => {}); // e.g. a handler's read

    // The server expires the session (2 s) and deletes the lock node: another instance may now
    // take the lock. By then the holder must know.
    await vi.waitUntil(async () => (await childrenOf(observer, path)).length === 0, {
      timeout: 6_000,
      interval: 100,
    });
    expect(client.state).not.toBe('connected');
    expect(lease.signal.aborted).toBe(true);
  });

  it('other sockets of the process keep working: a new HTTP server answers', async () => {
    // A request in flight on another server first, so the binding's socket number is reused.
    const idle = flavours[0]!.create();
    idle.post('/hang', () => {});
    openRequest(`${await listen(idle)}/hang`);
    const { client, proxy } = await partitionedClient(4_000);

    proxy.refuse(true);
    proxy.cut();
    void client.promises.exists('/').catch(() => {});

    const app = flavours[0]!.create();
    app.get('/ping', (_request, response) => {
      response.json({ ok: true });
    });
    const answer = openRequest(`${await listen(app)}/ping`, 'GET').response;
    const status = await Promise.race([
      answer,
      new Promise((resolve) => setTimeout(() => resolve('no answer within 2 s'), 2_000)),
    ]);
    expect(status).toBe(200);
  });
});
