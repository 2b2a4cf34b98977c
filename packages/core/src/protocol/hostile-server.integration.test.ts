/**
 * A server (here a proxy) that sends what no ZooKeeper would: garbage, a frame too large, a
 * frame that never ends, a reply to a request nobody made. The client drops the connection with
 * a typed error, reconnects on the same session, and goes on — no crash, no hang.
 */
import type { GarbageKind } from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  openClient,
  proxyTo,
  record,
  rejectionOf,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { ZkError } from '../index';

describe.runIf(transportName === 'typescript')('a hostile server', () => {
  it.each<[GarbageKind, string]>([
    ['random', 'MarshallingError'],
    ['oversized', 'MarshallingError'],
    ['unknown-xid', 'MarshallingError'],
    // A frame that never completes: nothing is heard from the server any more, so the
    // connection goes after two thirds of the session timeout, as for a silent server.
    ['truncated', 'ConnectionLoss'],
  ])('drops the connection on %s bytes with a typed error and reconnects', async (kind, reason) => {
    const proxy = await proxyTo();
    const warnings: string[] = [];
    const client = await connectedClient({
      connect: proxy.connectString,
      sessionTimeoutMs: 2_000,
      retry: false,
      logger: { warn: (message) => warnings.push(message) },
    });
    const root = await testRoot();
    const sessionId = client.sessionId;
    const session = record(client.session$);
    // The connection's `srvr` (does the server know multiRead?) goes through the proxy too, on
    // a connection of its own that closes once answered: wait for it, so the garbage goes to
    // the session's connection alone.
    await waitFor(() => proxy.connections === 1);
    // A call in flight whose answer the proxy holds, then bytes no server would send.
    proxy.holdReplies(true);
    const inFlight = rejectionOf(client.promises.get(root));
    expect(proxy.injectGarbage(kind)).toBe(1);
    const error = await inFlight;
    expect(error.code).toBe('ConnectionLoss');
    expect(error.cause).toBeInstanceOf(ZkError);
    expect((error.cause as ZkError).code).toBe(reason);
    proxy.holdReplies(false);
    await waitFor(() => client.state === 'reconnected');
    expect(session.values).toEqual([
      { state: 'connected', sessionId },
      { state: 'suspended', sessionId },
      { state: 'reconnected', sessionId },
    ]);
    // Same session, and it works.
    expect((await client.promises.get(root)).stat.czxid).toBeGreaterThan(0);
    if (reason === 'MarshallingError') {
      expect(warnings.some((line) => line.includes('malformed data from'))).toBe(true);
    }
  });

  it('survives garbage instead of a ConnectResponse, and connects once the server behaves', async () => {
    const proxy = await proxyTo();
    proxy.holdReplies(true);
    const warnings: string[] = [];
    const client = await openClient({
      connect: proxy.connectString,
      logger: { warn: (message) => warnings.push(message) },
    });
    const session = record(client.session$);
    await waitFor(() => proxy.connections === 1);
    expect(proxy.injectGarbage('random')).toBe(1);
    // The client drops that connection and tries again.
    await waitFor(() => warnings.some((line) => line.includes('malformed data from')));
    expect(client.state).toBe('connecting');
    proxy.holdReplies(false);
    await client.connected(10_000);
    expect(statesOf(session)).toEqual(['connecting', 'connected']);
  });

  it('gives a handshake never answered a quarter of the session timeout, then twice that, then connects', async () => {
    // As a ZooKeeper coming up can (a member of `--scenario fleet-boot` waited its whole 10 s
    // attempt): the connection is accepted, the ConnectRequest never answered.
    const proxy = await proxyTo();
    proxy.pause();
    const failures: string[] = [];
    const client = await openClient({
      connect: proxy.connectString,
      sessionTimeoutMs: 8_000,
      logger: {
        warn: (message) => failures.push(message),
        debug: (message) => failures.push(message),
      },
      logLevel: 'debug',
    });
    const unanswered = () => failures.filter((line) => line.startsWith('no session from'));
    await waitFor(() => unanswered().length >= 2, 30_000);
    // One host: each attempt may take the whole session timeout (Java's ClientCnxn waits that
    // long for every one); a handshake gets 2 s, then 4 s.
    expect(
      unanswered()
        .slice(0, 2)
        .map((line) => line.replace(/.* within /, '')),
    ).toEqual(['2000 ms', '4000 ms']);
    proxy.resume();
    await client.connected(30_000);
    expect(client.state).toBe('connected');
  });
});
