/**
 * Unit tests of expireSession against a fake jute server: the bytes sent, host order,
 * retries, already-expired sessions and the session$ wait.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { BehaviorSubject } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { expireSession } from './expire-session';
import { CLOSE_XID } from './raw-session';

/** What the fake server saw on one connection. */
interface SeenConnection {
  sessionId: bigint;
  passwd: string;
  timeOut: number;
  requests: { xid: number; type: number }[];
}

type Behaviour = 'valid' | 'expired' | 'drop';

/**
 * A fake ZooKeeper speaking just enough jute, decoded here independently of jute.ts: it answers
 * the ConnectRequest per `behaviours` (one per connection, the last repeats) and replies to
 * closeSession with err 0 before closing.
 */
async function fakeZooKeeper(behaviours: Behaviour[], onClose?: () => void) {
  const seen: SeenConnection[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    const behaviour = behaviours[Math.min(seen.length, behaviours.length - 1)]!;
    let pending = Buffer.alloc(0);
    let connection: SeenConnection | undefined;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const body = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + body.length);
        if (!connection) {
          const passwdLength = body.readInt32BE(24);
          connection = {
            timeOut: body.readInt32BE(12),
            sessionId: body.readBigInt64BE(16),
            passwd: body.subarray(28, 28 + passwdLength).toString('hex'),
            requests: [],
          };
          seen.push(connection);
          if (behaviour === 'drop') {
            socket.destroy();
            return;
          }
          const valid = behaviour === 'valid';
          const response = Buffer.alloc(4 + 4 + 4 + 8 + 4 + 16 + 1);
          response.writeInt32BE(response.length - 4, 0);
          response.writeInt32BE(0, 4);
          response.writeInt32BE(valid ? 4000 : 0, 8);
          response.writeBigInt64BE(valid ? connection.sessionId : 0n, 12);
          response.writeInt32BE(16, 20);
          if (valid) Buffer.from(connection.passwd, 'hex').copy(response, 24);
          socket.write(response);
          if (!valid) socket.end();
        } else {
          const request = { xid: body.readInt32BE(0), type: body.readInt32BE(4) };
          connection.requests.push(request);
          if (request.type === -11) {
            const reply = Buffer.alloc(4 + 16);
            reply.writeInt32BE(16, 0);
            reply.writeInt32BE(request.xid, 4);
            reply.writeBigInt64BE(42n, 8);
            reply.writeInt32BE(0, 16);
            socket.end(reply);
            onClose?.();
          }
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('no port');
  servers.push({ server, sockets });
  return { hostPort: `127.0.0.1:${address.port}`, seen };
}

const servers: { server: Server; sockets: Set<Socket> }[] = [];
afterEach(async () => {
  for (const { server, sockets } of servers.splice(0)) {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A port where nothing listens. */
async function deadHostPort(): Promise<string> {
  const { hostPort } = await fakeZooKeeper(['valid']);
  const { server, sockets } = servers.pop()!;
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  return hostPort;
}

const credentials = { sessionId: '100000205df0000', password: '0123456789abcdef'.repeat(2) };

describe('expireSession', () => {
  it('resumes the session with its id and password, then sends closeSession', async () => {
    const zk = await fakeZooKeeper(['valid']);
    await expireSession({ connectString: zk.hostPort, ...credentials });
    expect(zk.seen).toHaveLength(1);
    expect(zk.seen[0]!.sessionId).toBe(0x100000205df0000n);
    expect(zk.seen[0]!.passwd).toBe(credentials.password);
    expect(zk.seen[0]!.timeOut).toBeGreaterThan(0);
    expect(zk.seen[0]!.requests).toEqual([{ xid: CLOSE_XID, type: -11 }]);
  });

  it('resolves without closing when the server says the session is already gone', async () => {
    const zk = await fakeZooKeeper(['expired']);
    await expireSession({ connectString: zk.hostPort, ...credentials });
    expect(zk.seen).toHaveLength(1);
    expect(zk.seen[0]!.requests).toEqual([]);
  });

  it('tries the servers of options.connectString in order', async () => {
    const dead = await deadHostPort();
    const zk = await fakeZooKeeper(['valid']);
    await expireSession(
      { connectString: 'unused:1', ...credentials },
      { connectString: `${dead},${zk.hostPort}/chroot` },
    );
    expect(zk.seen[0]!.requests).toEqual([{ xid: CLOSE_XID, type: -11 }]);
  });

  it('retries when the connection drops before the session is closed', async () => {
    const zk = await fakeZooKeeper(['drop', 'valid']);
    await expireSession({ connectString: zk.hostPort, ...credentials });
    expect(zk.seen.map((connection) => connection.requests.length)).toEqual([0, 1]);
  });

  it('rejects with every server tried when none can be reached', async () => {
    const dead = await deadHostPort();
    await expect(
      expireSession({ connectString: dead, ...credentials }, { timeoutMs: 2_000 }),
    ).rejects.toThrow(/Could not expire session 100000205df0000:[\s\S]*ECONNREFUSED/);
  });

  it("waits for a client's session$ to emit { state: 'expired' }", async () => {
    const session$ = new BehaviorSubject<{ state: string }>({ state: 'connected' });
    let closedAt = 0;
    const zk = await fakeZooKeeper(['valid'], () => {
      closedAt = Date.now();
      // The client notices on its next reconnect, a little later.
      setTimeout(() => session$.next({ state: 'disconnected' }), 50);
      setTimeout(() => session$.next({ state: 'expired' }), 200);
    });
    const client = {
      connectString: zk.hostPort,
      sessionCredentials: () => credentials,
      session$,
    };
    await expireSession(client);
    expect(closedAt).toBeGreaterThan(0);
    expect(Date.now() - closedAt).toBeGreaterThanOrEqual(190);
    expect(session$.observed).toBe(false); // unsubscribed
  });

  it("rejects when session$ does not emit 'expired' in time", async () => {
    const zk = await fakeZooKeeper(['valid']);
    const client = {
      connectString: zk.hostPort,
      sessionCredentials: () => credentials,
      session$: new BehaviorSubject({ state: 'connected' }),
    };
    await expect(expireSession(client, { timeoutMs: 300 })).rejects.toThrow(
      /closed on the server but the client's session\$ did not emit \{ state: 'expired' \} within 300 ms/,
    );
    expect(client.session$.observed).toBe(false);
  });

  it('rejects a client that has no session yet', async () => {
    await expect(
      expireSession({ connectString: '127.0.0.1:1', sessionCredentials: () => undefined }),
    ).rejects.toThrow(/no session to expire/);
  });
});
