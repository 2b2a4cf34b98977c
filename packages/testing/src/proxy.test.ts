/**
 * Unit tests of the TCP proxy against an echo server: byte integrity, half-close, cut,
 * pause/resume of existing and new connections, refuse, close.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { garbageBytes, startProxy, type TcpProxy } from './proxy';

/** An echo server that also counts the connections it accepted; it ends when its client ends. */
let echo: { server: Server; hostPort: string; accepted: number; sockets: Set<Socket> };
let proxy: TcpProxy;
const clients: Socket[] = [];

beforeEach(async () => {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    echo.accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.on('data', (chunk) => socket.write(chunk));
    socket.on('end', () => socket.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('no port');
  echo = { server, hostPort: `127.0.0.1:${address.port}`, accepted: 0, sockets };
  proxy = await startProxy(echo.hostPort);
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await proxy.close();
  for (const socket of echo.sockets) socket.destroy();
  await new Promise((resolve) => echo.server.close(resolve));
});

/** A client connected to the proxy, collecting what it receives. */
async function client() {
  const socket = connect({ host: '127.0.0.1', port: proxy.port });
  clients.push(socket);
  socket.on('error', () => {});
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  await once(socket, 'connect');
  return {
    socket,
    text: () => Buffer.concat(received).toString(),
    bytes: () => Buffer.concat(received),
    closed: new Promise<void>((resolve) => socket.once('close', () => resolve())),
  };
}

async function until(condition: () => boolean, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('startProxy', () => {
  it('listens on loopback and forwards bytes both ways, intact', async () => {
    expect(proxy.connectString).toBe(`127.0.0.1:${proxy.port}`);
    const c = await client();
    const payload = Buffer.alloc(1 << 20, 0);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 0xff;
    c.socket.write(payload);
    await until(() => c.bytes().length === payload.length);
    expect(c.bytes().equals(payload)).toBe(true);
    expect(proxy.connections).toBe(1);
  });

  it('carries half-closes: the answer still arrives after the client ends its side', async () => {
    const c = await client();
    c.socket.end('last words');
    await c.closed;
    expect(c.text()).toBe('last words');
    await until(() => proxy.connections === 0);
  });

  it('cut() drops every connection at once, and new ones work after', async () => {
    const [a, b] = [await client(), await client()];
    await until(() => echo.accepted === 2);
    expect(proxy.connections).toBe(2);
    proxy.cut();
    expect(proxy.connections).toBe(0);
    await Promise.all([a.closed, b.closed]);
    await until(() => echo.sockets.size === 0);
    const c = await client();
    c.socket.write('again');
    await until(() => c.text() === 'again');
  });

  it('pause() stalls existing and new connections until resume()', async () => {
    const existing = await client();
    await until(() => echo.accepted === 1);
    proxy.pause();
    expect(proxy.paused).toBe(true);
    existing.socket.write('held');
    const fresh = await client(); // accepted by the proxy...
    fresh.socket.write('also held');
    await sleep(300);
    expect(existing.text()).toBe('');
    expect(fresh.text()).toBe('');
    expect(echo.accepted).toBe(1); // ...but not yet connected to the server
    expect(proxy.connections).toBe(2);
    proxy.resume();
    await until(() => existing.text() === 'held' && fresh.text() === 'also held');
    expect(echo.accepted).toBe(2);
  });

  it('refuse() resets new connections while existing ones keep flowing', async () => {
    const existing = await client();
    proxy.refuse(true);
    expect(proxy.refusing).toBe(true);
    const refused = connect({ host: '127.0.0.1', port: proxy.port });
    const [error] = (await once(refused, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNRESET');
    expect(echo.accepted).toBe(1);
    existing.socket.write('still here');
    await until(() => existing.text() === 'still here');
    proxy.refuse(false);
    const welcome = await client();
    welcome.socket.write('back');
    await until(() => welcome.text() === 'back');
  });

  it('closes the client connection when the server cannot be reached', async () => {
    const dead = await startProxy('127.0.0.1:1');
    try {
      const socket = connect({ host: '127.0.0.1', port: dead.port });
      socket.on('error', () => {});
      await new Promise((resolve) => socket.once('close', resolve));
      await until(() => dead.connections === 0);
    } finally {
      await dead.close();
    }
  });

  it('close() drops connections and stops listening', async () => {
    const c = await client();
    await proxy.close();
    await c.closed;
    const late = connect({ host: '127.0.0.1', port: proxy.port });
    const [error] = (await once(late, 'error')) as [NodeJS.ErrnoException];
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('counts the replies it holds, and forwards them in one write when released', async () => {
    const c = await client();
    proxy.holdReplies(true);
    c.socket.write('one');
    await until(() => proxy.heldReplyBytes === 3);
    c.socket.write('two');
    await until(() => proxy.heldReplyBytes === 6);
    const chunks: Buffer[] = [];
    c.socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    proxy.holdReplies(false);
    await until(() => c.text() === 'onetwo');
    expect(proxy.heldReplyBytes).toBe(0);
    expect(chunks.map(String)).toEqual(['onetwo']);
  });

  it('injectGarbage sends each client the garbage at once, ahead of held replies', async () => {
    const c = await client();
    c.socket.write('hello');
    await until(() => c.text() === 'hello');
    proxy.holdReplies(true);
    c.socket.write('held');
    expect(proxy.injectGarbage('oversized')).toBe(1);
    await until(() => c.bytes().length === 5 + 20);
    expect(c.bytes().readInt32BE(5)).toBe(0x7fff_fff0);
    proxy.holdReplies(false);
    await until(() => c.bytes().length === 5 + 20 + 4);
    expect(c.bytes().subarray(25).toString()).toBe('held');
    expect(proxy.injectGarbage(Buffer.from('raw'))).toBe(1);
    await until(() => c.bytes().length === 32);
    expect(garbageBytes('random').readInt32BE(0)).toBeLessThan(0);
    expect(garbageBytes('truncated').readInt32BE(0)).toBe(1_000);
    expect(garbageBytes('unknown-xid').length).toBe(20);
  });
});
