/**
 * The event loop stalls (a sync JSON parse, a GC pause) at the worst moments for the heartbeat:
 * right after a ping is written, and right after a ping's reply is read. A stall the server can
 * outlive (shorter than the session timeout) must not drop the connection: no `suspended`, the
 * same session, its ephemeral node kept. The stalls are aimed by watching the client's own
 * socket for a ping frame; nothing here asserts a time.
 */
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  onCleanup,
  proxyTo,
  record,
  statesOf,
  testRoot,
  transportName,
} from '../../test/support';
import { Connection } from './connection';

/** A ping request frame: length 8, xid -2, opcode 11 (ping). */
const PING = Buffer.from('00000008fffffffe0000000b', 'hex');
/** The head of a ping reply frame: length 16, xid -2. */
const PING_REPLY_HEAD = Buffer.from('00000010fffffffe', 'hex');

function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the process is stalled: no timer, no I/O
  }
}

/**
 * Watches the process's sockets for pings: `next()` resolves on the next ping written. The first
 * ping written (`afterWrite`) or the first ping reply read (`afterReply`) stalls the process for
 * the given time right after it. Reads are watched where every chunk a connection reads arrives,
 * `Connection.receive` (a plain TCP connection reads into a shared buffer: no `data` events).
 */
function stallAtPing(stall: {
  afterWrite?: number;
  afterReply?: number;
  /** Called once, right after the first ping reply read once the stall is over. */
  thenAtReply?: () => void;
}) {
  const write = Socket.prototype.write;
  const receive = Connection.prototype.receive;
  const waiting: Array<() => void> = [];
  let stalled = false;
  let resolveStalled: () => void = () => {};
  const stalledOnce = new Promise<void>((resolve) => {
    resolveStalled = resolve;
  });
  const stallNow = (ms: number) => {
    stalled = true;
    busyWait(ms);
    resolveStalled();
  };
  Socket.prototype.write = function patchedWrite(this: Socket, chunk: unknown, ...rest: unknown[]) {
    const result = (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    if (Buffer.isBuffer(chunk) && chunk.equals(PING)) {
      if (!stalled && stall.afterWrite !== undefined) stallNow(stall.afterWrite);
      for (const resolve of waiting.splice(0)) resolve();
    }
    return result;
  } as typeof write;
  let then = stall.thenAtReply;
  Connection.prototype.receive = function patchedReceive(this: Connection, chunk: Buffer) {
    receive.call(this, chunk);
    const pingReply = chunk.subarray(0, PING_REPLY_HEAD.length).equals(PING_REPLY_HEAD);
    if (!stalled && stall.afterReply !== undefined && pingReply) {
      stallNow(stall.afterReply);
    } else if (stalled && pingReply && then) {
      const call = then;
      then = undefined;
      call();
    }
  };
  onCleanup(() => {
    Socket.prototype.write = write;
    Connection.prototype.receive = receive;
  });
  return {
    /** Resolves once the stall is over. */
    stalled: stalledOnce,
    /** The next ping written from now on. */
    nextPing: () => new Promise<void>((resolve) => waiting.push(resolve)),
  };
}

// The C client's I/O does not run on the event loop's timers: this is the TypeScript transport's.
describe.skipIf(transportName === 'native')('a stalled event loop (session timeout 6 s)', () => {
  it('a 3.3 s stall right after a ping is written drops nothing', async () => {
    const client = await connectedClient({ sessionTimeoutMs: 6_000 });
    expect(client.sessionTimeoutMs).toBe(6_000);
    const root = await testRoot();
    await client.promises.create(`${root}/mine`, '', { mode: 'ephemeral' });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    const pings = stallAtPing({ afterWrite: 3_300 });
    await pings.stalled;
    // Nothing is sent here: the next ping shows the heartbeat ran after the stall. Had it
    // dropped the connection, `suspended` would come before it.
    await pings.nextPing();
    expect(statesOf(session)).toEqual(['connected']);
    expect(client.sessionId).toBe(sessionId);
    expect(await client.promises.getEphemerals(root)).toEqual([`${root}/mine`]);
  });

  it('a 4.5 s stall (past the 4 s read timeout) right after a ping reply is read drops nothing', async () => {
    const client = await connectedClient({ sessionTimeoutMs: 6_000 });
    const root = await testRoot();
    await client.promises.create(`${root}/mine`, '', { mode: 'ephemeral' });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    const pings = stallAtPing({ afterReply: 4_500 });
    await pings.stalled;
    // The server heard nothing from us for 4.5 s, and we sent nothing it could answer: the
    // silence was ours. A ping at once keeps the session, and the connection stays.
    await pings.nextPing();
    await pings.nextPing();
    expect(statesOf(session)).toEqual(['connected']);
    expect(client.sessionId).toBe(sessionId);
    expect(await client.promises.getEphemerals(root)).toEqual([`${root}/mine`]);
  });
});

describe.skipIf(transportName === 'native')(
  'a stall, then the server silent (session timeout 6 s)',
  () => {
    it('a stall before the last frame read earns no credit: suspended comes before the server could expire the session', async () => {
      // The client stalls 3.3 s right after a ping is written; the ping's reply waits in the
      // socket and is read as the stall ends; right then the server goes silent (no FIN). The
      // stall came before that frame: it must not be credited against the silence after it, and
      // the session's own clock (the server heard the ping when it was sent) keeps running. A
      // second client watches the first one's ephemeral node: the server deletes it when it
      // expires the session. The client must say `suspended` first.
      const proxy = await proxyTo();
      const client = await connectedClient({
        connect: proxy.connectString,
        sessionTimeoutMs: 6_000,
      });
      const observer = await connectedClient();
      const root = await testRoot();
      const node = `${root}/mine`;
      await client.promises.create(node, '', { mode: 'ephemeral' });
      const order: string[] = [];
      const gone = new Promise<void>((resolve) => {
        const subscription = observer.watchExists(node).subscribe((stat) => {
          if (stat !== null) return;
          order.push('node deleted by the server');
          subscription.unsubscribe();
          resolve();
        });
      });
      const suspended = new Promise<void>((resolve) => {
        const subscription = client.session$.subscribe(({ state }) => {
          if (state !== 'suspended') return;
          order.push('client suspended');
          subscription.unsubscribe();
          resolve();
        });
      });
      stallAtPing({ afterWrite: 3_300, thenAtReply: () => proxy.pause() });
      await Promise.all([suspended, gone]);
      expect(order).toEqual(['client suspended', 'node deleted by the server']);
      proxy.resume();
    });
  },
);
