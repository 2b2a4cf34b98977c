/**
 * A relay to a ZooKeeper server that reads the frames crossing it and lets a test answer some of
 * them itself: to play a server of another version or mode (a 3.5 server that knows no
 * multiRead, a read-only server) in front of the run's real one.
 */
import { connect, createServer, type Socket } from 'node:net';
import { afterEach } from 'vitest';

/** One client connection through the relay, as a hook sees it. */
export interface RelayLink {
  /** The connection's number through this relay: 0 for the first, 1 for the next… */
  readonly index: number;
  /** Writes a frame to the client (its body; the length is added). */
  answer(body: Buffer): void;
  /** Closes the connection (the client reads what was written, then the end), both sides. */
  close(): void;
}

export interface RelayHooks {
  /**
   * A four-letter word a client sent (a connection whose first bytes are four lowercase
   * letters): the text to answer instead of the server (the connection then closes), or
   * undefined to relay it.
   */
  fourLetterWord?(word: string): string | undefined;
  /**
   * A request frame's body (xid, type, record), the ConnectRequest excepted: return true when
   * the hook answered it (it is not relayed).
   */
  request?(body: Buffer, link: RelayLink): boolean | undefined;
  /**
   * A frame's body from the server (the ConnectResponse is frame 0 of a connection): the body
   * to pass on, changed or not.
   */
  reply?(body: Buffer, link: RelayLink, frame: number): Buffer;
}

const open = new Set<{ close(): Promise<void> }>();

afterEach(async () => {
  const relays = [...open];
  open.clear();
  await Promise.all(relays.map((relay) => relay.close()));
});

/** Splits a stream into frames (4-byte length, then the body). */
function framer(onFrame: (body: Buffer) => void): (chunk: Buffer) => void {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
      const length = pending.readInt32BE(0);
      const body = Buffer.from(pending.subarray(4, 4 + length));
      pending = pending.subarray(4 + length);
      onFrame(body);
    }
  };
}

function framed(body: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeInt32BE(body.length, 0);
  return Buffer.concat([length, body]);
}

/**
 * Starts a relay to `target` (`host:port`) with `hooks`; closed after the test.
 *
 * ## Example
 * ```ts
 * // A server that says it is read-only on every reconnection.
 * const relay = await frameRelay(target, {
 *   reply: (body, link, frame) => (link.index > 0 && frame === 0 ? readOnlyResponse(body) : body),
 * });
 * createClient({ connect: relay.connectString, canBeReadOnly: true });
 * ```
 */
export async function frameRelay(
  target: string,
  hooks: RelayHooks,
): Promise<{ connectString: string; cut(): void; close(): Promise<void> }> {
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at);
  const port = Number(target.slice(at + 1));
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    const upstream = connect({ host, port });
    sockets.add(client).add(upstream);
    const link: RelayLink = {
      index: connections++,
      answer: (body) => client.write(framed(body)),
      close: () => {
        client.end();
        upstream.destroy();
      },
    };
    let started = false;
    let requests = 0;
    const toServer = framer((body) => {
      const first = requests++ === 0;
      if (!first && hooks.request?.(body, link) === true) return;
      upstream.write(framed(body));
    });
    client.on('data', (chunk: Buffer) => {
      if (!started) {
        started = true;
        const word = chunk.subarray(0, 4).toString('latin1');
        if (/^[a-z]{4}$/.test(word)) {
          const answer = hooks.fourLetterWord?.(word);
          if (answer === undefined) {
            upstream.write(chunk);
            client.removeAllListeners('data');
            client.on('data', (more: Buffer) => upstream.write(more));
            upstream.on('data', (more: Buffer) => client.write(more));
            return;
          }
          client.end(answer);
          upstream.destroy();
          return;
        }
      }
      toServer(chunk);
    });
    let frames = 0;
    const toClient = framer((body) => {
      const passed = hooks.reply ? hooks.reply(body, link, frames) : body;
      frames += 1;
      client.write(framed(passed));
    });
    upstream.on('data', (chunk: Buffer) => {
      if (started) toClient(chunk);
    });
    for (const [one, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      one.on('error', () => other.destroy());
      one.on('close', () => {
        sockets.delete(one);
        other.end();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relay = {
    connectString: `127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Destroys every connection through the relay, both sides: the clients lose theirs. */
    cut: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      open.delete(relay);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  open.add(relay);
  return relay;
}

/** The `srvr` answer of a ZooKeeper 3.5 server. */
export const SRVR_3_5 = [
  'Zookeeper version: 3.5.10-c2f6d6c3, built on 05/24/2022 12:18 GMT',
  'Latency min/avg/max: 0/0.0/0',
  'Received: 1',
  'Sent: 0',
  'Connections: 1',
  'Outstanding: 0',
  'Zxid: 0x0',
  'Mode: standalone',
  'Node count: 5',
  '',
].join('\n');

/**
 * A relay to `target` that answers as a ZooKeeper 3.5 server does where 3.5 and 3.6+ differ
 * for zkrx: `srvr` says 3.5, and a multiRead or an addWatch (opcodes 22 and 106, new in 3.6:
 * no persistent watches) is answered `Unimplemented` — then the connection is closed, as 3.5's
 * UnimplementedRequestProcessor does. `multiReads` and `addWatches` count those it answered.
 */
export async function zooKeeper35(
  target: string,
): Promise<{ connectString: string; readonly multiReads: number; readonly addWatches: number }> {
  let multiReads = 0;
  let addWatches = 0;
  const relay = await frameRelay(target, {
    fourLetterWord: (word) => (word === 'srvr' ? SRVR_3_5 : undefined),
    request: (body, link) => {
      const type = body.readInt32BE(4);
      if (type === 22) multiReads += 1;
      else if (type === 106) addWatches += 1;
      else return undefined;
      const header = Buffer.alloc(16);
      header.writeInt32BE(body.readInt32BE(0), 0); // xid
      header.writeBigInt64BE(0n, 4); // zxid
      header.writeInt32BE(-6, 12); // Unimplemented
      link.answer(header);
      link.close();
      return true;
    },
  });
  return {
    connectString: relay.connectString,
    get multiReads() {
      return multiReads;
    },
    get addWatches() {
      return addWatches;
    },
  };
}

/**
 * A relay to `target` whose reconnections say they reach a read-only server: the ConnectResponse
 * of every connection but the first has its `readOnly` flag set (its last byte). The server
 * behind it is read-write all the same: what a client makes of that flag is what is tested.
 */
export async function readOnlyOnReconnect(
  target: string,
): Promise<{ connectString: string; cut(): void }> {
  const relay = await frameRelay(target, {
    reply: (body, link, frame) => {
      if (link.index === 0 || frame !== 0) return body;
      const changed = Buffer.from(body);
      changed[changed.length - 1] = 1;
      return changed;
    },
  });
  return relay;
}
