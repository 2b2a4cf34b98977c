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
  record,
  statesOf,
  testRoot,
  transportName,
} from '../test/support';
import { Connection } from './protocol/connection';

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
function stallAtPing(stall: { afterWrite?: number; afterReply?: number }) {
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
  Connection.prototype.receive = function patchedReceive(this: Connection, chunk: Buffer) {
    receive.call(this, chunk);
    if (
      !stalled &&
      stall.afterReply !== undefined &&
      chunk.subarray(0, PING_REPLY_HEAD.length).equals(PING_REPLY_HEAD)
    ) {
      stallNow(stall.afterReply);
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
