import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { ProtocolError } from '../wire/jute';
import { Connection, coalescePauseMs, versionOf } from './connection';
import { FrameReader } from './frames';

function framed(...bodies: Buffer[]): Buffer {
  return Buffer.concat(
    bodies.flatMap((body) => {
      const length = Buffer.alloc(4);
      length.writeInt32BE(body.length);
      return [length, body];
    }),
  );
}

const body = (size: number, fill: number) => Buffer.alloc(size, fill);

describe('FrameReader', () => {
  it('splits frames wherever the chunks are cut, the length prefix included', () => {
    const bodies = [body(16, 1), body(40, 2), body(17, 3)];
    const stream = framed(...bodies);
    for (let first = 0; first <= stream.length; first++) {
      for (const second of [first, Math.min(stream.length, first + 3), stream.length]) {
        const frames: Buffer[] = [];
        const reader = new FrameReader(1_024);
        for (const chunk of [
          stream.subarray(0, first),
          stream.subarray(first, second),
          stream.subarray(second),
        ]) {
          reader.push(chunk, (frame) => {
            frames.push(Buffer.from(frame));
            return true;
          });
        }
        expect(frames).toEqual(bodies);
        expect(reader.buffered).toBe(0);
      }
    }
  });

  it('hands out a frame that fits in one chunk as a view of it, without a copy', () => {
    const chunk = framed(body(20, 7));
    let seen: Buffer | undefined;
    new FrameReader(1_024).push(chunk, (frame) => {
      seen = frame;
      return true;
    });
    expect(seen?.buffer).toBe(chunk.buffer);
  });

  it('stops when the handler says the connection is gone', () => {
    const frames: Buffer[] = [];
    new FrameReader(1_024).push(framed(body(16, 1), body(16, 2)), (frame) => {
      frames.push(frame);
      return false;
    });
    expect(frames).toHaveLength(1);
  });

  it.each([
    ['larger than the limit', 1_025],
    ['smaller than a reply header', 15],
    ['negative', -1],
  ])('refuses a frame length %s before buffering it', (_name, length) => {
    const header = Buffer.alloc(4);
    header.writeInt32BE(length);
    const reader = new FrameReader(1_024);
    expect(() => reader.push(header, () => true)).toThrow(ProtocolError);
    expect(reader.buffered).toBe(0);
  });

  it('holds at most one frame, however the bytes arrive', () => {
    const reader = new FrameReader(100);
    const stream = framed(body(100, 1), body(100, 2), body(100, 3));
    let most = 0;
    for (let offset = 0; offset < stream.length; offset += 7) {
      reader.push(stream.subarray(offset, offset + 7), () => true);
      most = Math.max(most, reader.buffered);
    }
    expect(most).toBeLessThanOrEqual(100);
  });
});

describe('coalescePauseMs', () => {
  it('pauses 1 ms per 64 replies awaited, from 64 on, at most 4 ms', () => {
    expect([0, 1, 63, 64, 127, 128, 200, 255, 256, 1_000, 100_000].map(coalescePauseMs)).toEqual([
      0, 0, 0, 1, 1, 2, 3, 3, 4, 4, 4,
    ]);
  });

  it('never pauses longer than the awaited replies take at 64 per ms', () => {
    for (let awaiting = 0; awaiting <= 2_000; awaiting++) {
      expect(coalescePauseMs(awaiting) * 64).toBeLessThanOrEqual(awaiting);
    }
  });
});

describe('FrameReader, a frame over the limit', () => {
  /** A reply frame: ReplyHeader (xid, zxid 7, err 0) and a body of `size` bytes. */
  const reply = (xid: number, size: number, fill: number) => {
    const header = Buffer.alloc(16);
    header.writeInt32BE(xid, 0);
    header.writeBigInt64BE(7n, 4);
    return Buffer.concat([header, body(size, fill)]);
  };

  it('hands its ReplyHeader to onOversized, drops the rest unheld, and reads on', () => {
    const frames = [reply(1, 20, 1), reply(2, 5_000, 2), reply(3, 30, 3)];
    const stream = framed(...frames);
    for (const step of [1, 7, 64, 4_096, stream.length]) {
      const reader = new FrameReader(1_024);
      const seen: string[] = [];
      let most = 0;
      for (let offset = 0; offset < stream.length; offset += step) {
        reader.push(
          stream.subarray(offset, offset + step),
          (frame) => {
            seen.push(`frame ${frame.readInt32BE(0)} ${frame.length}`);
            return true;
          },
          (header, length) => {
            seen.push(`oversized ${header.readInt32BE(0)} ${length} ${header.readBigInt64BE(4)}`);
            return true;
          },
        );
        most = Math.max(most, reader.buffered);
      }
      expect(seen).toEqual(['frame 1 36', 'oversized 2 5016 7', 'frame 3 46']);
      expect(most).toBeLessThanOrEqual(1_024);
      expect(reader.buffered).toBe(0);
    }
  });

  it('stops when onOversized says the connection is gone', () => {
    const seen: number[] = [];
    new FrameReader(1_024).push(
      framed(reply(2, 2_000, 2), reply(3, 30, 3)),
      (frame) => {
        seen.push(frame.readInt32BE(0));
        return true;
      },
      () => false,
    );
    expect(seen).toEqual([]);
  });
});

describe('Connection', () => {
  /** A socket that records what the connection does with it. */
  function fakeSocket() {
    const calls: string[] = [];
    let resumed: () => void = () => {};
    const socket = Object.assign(new EventEmitter(), {
      setNoDelay: () => calls.push('setNoDelay'),
      cork: () => calls.push('cork'),
      uncork: () => calls.push('uncork'),
      write: (frame: Buffer) =>
        calls.push(`write ${frame.length > 64 ? `${frame.length} bytes` : frame.toString()}`),
      destroy: () => calls.push('destroy'),
      end: () => calls.push('end'),
      pause: () => calls.push('pause'),
      resume: () => {
        calls.push('resume');
        resumed();
      },
    });
    /** Resolves at the next `resume()`. */
    const nextResume = () =>
      new Promise<void>((resolve) => {
        resumed = resolve;
      });
    return { socket: socket as unknown as Socket, calls, nextResume };
  }
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

  it('writes what one turn of the event loop sent in one write, the next turn in another', async () => {
    const { socket, calls } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    connection.send(Buffer.from('a'));
    connection.send(Buffer.from('b'));
    await Promise.resolve();
    connection.send(Buffer.from('c')); // a promise continuation of the same turn
    expect(calls.filter((call) => call.startsWith('write'))).toEqual([]);
    await nextTurn();
    connection.send(Buffer.from('d'));
    await nextTurn();
    expect(calls.slice(1)).toEqual(['write abc', 'write d']);
  });

  it('tells handlers attached after its close that it closed (a move target the server dropped)', async () => {
    const { socket } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    // Closed by the server before anyone attached (a planned move's target, idle).
    socket.emit('end');
    const closes: string[] = [];
    connection.attach({ onFrame: () => {}, onClose: (reason) => closes.push(reason.message) });
    await Promise.resolve();
    expect(closes).toEqual(['h:1 closed the connection']);
    // Replaced handlers before the close is told: only the last ones hear it, once.
    const late: string[] = [];
    connection.attach({ onFrame: () => {}, onClose: () => late.push('first') });
    connection.attach({ onFrame: () => {}, onClose: () => late.push('second') });
    await Promise.resolve();
    expect(late).toEqual(['second']);
  });

  it('writes a batch of large frames as they are, in one corked write (no copy)', async () => {
    const { socket, calls } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    connection.send(Buffer.alloc(40_000));
    connection.send(Buffer.alloc(40_000));
    await nextTurn();
    expect(calls.slice(1)).toEqual(['cork', 'write 40000 bytes', 'write 40000 bytes', 'uncork']);
  });

  it('pauses reading briefly while a deep pipeline awaits its replies, and only then', async () => {
    const { socket, calls, nextResume } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    const frames: Buffer[] = [];
    connection.attach({ onFrame: (frame) => frames.push(Buffer.from(frame)), onClose: () => {} });
    let awaiting = 63;
    connection.awaiting = () => awaiting;
    socket.emit('data', framed(body(16, 1)));
    expect(calls).not.toContain('pause');
    awaiting = 64;
    const resumed = nextResume();
    socket.emit('data', framed(body(16, 2), body(16, 3)));
    // Every frame of the read was delivered before the pause.
    expect(frames).toEqual([body(16, 1), body(16, 2), body(16, 3)]);
    expect(calls.filter((call) => call === 'pause')).toEqual(['pause']);
    // A read arriving meanwhile (already in flight in a stream) is delivered, not paused again.
    socket.emit('data', framed(body(16, 4)));
    expect(frames).toHaveLength(4);
    expect(calls.filter((call) => call === 'pause')).toEqual(['pause']);
    await resumed;
    expect(calls.at(-1)).toBe('resume');
  });

  it('reads on at once after a large read, however deep the pipeline', () => {
    const { socket, calls } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 64 * 1_024);
    let frames = 0;
    connection.attach({ onFrame: () => frames++, onClose: () => {} });
    connection.awaiting = () => 1_000;
    socket.emit('data', framed(body(16 * 1_024, 1)));
    expect(frames).toBe(1);
    expect(calls).not.toContain('pause');
  });

  it('drops a pause with the connection: nothing resumes a closed socket', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const { socket, calls } = fakeSocket();
      const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
      connection.attach({ onFrame: () => {}, onClose: () => {} });
      connection.awaiting = () => 100;
      socket.emit('data', framed(body(16, 1)));
      expect(calls).toContain('pause');
      connection.destroy();
      expect(vi.getTimerCount()).toBe(0);
      vi.runAllTimers();
      expect(calls).not.toContain('resume');
      expect(calls).toContain('destroy');
    } finally {
      vi.useRealTimers();
    }
  });

  it('drops the connection with MarshallingError on a frame it refuses, and tells its owner once', () => {
    const { socket, calls } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    const reasons: string[] = [];
    connection.attach({ onFrame: () => {}, onClose: (reason) => reasons.push(reason.code) });
    const header = Buffer.alloc(4);
    header.writeInt32BE(1_000_000);
    socket.emit('data', header);
    socket.emit('close');
    expect(reasons).toEqual(['MarshallingError']);
    expect(calls).toContain('destroy');
    expect(connection.isClosed).toBe(true);
  });
  it('tells its owner of a frame over the limit and stays open', () => {
    const { socket } = fakeSocket();
    const connection = new Connection(socket, { host: 'h', port: 1 }, 1_024);
    const seen: string[] = [];
    connection.attach({
      onFrame: (frame) => seen.push(`frame ${frame.length}`),
      onOversizedFrame: (header, length) =>
        seen.push(`oversized ${header.readInt32BE(0)} ${length}`),
      onClose: (reason) => seen.push(`close ${reason.code}`),
    });
    const big = Buffer.alloc(4 + 2_000);
    big.writeInt32BE(2_000, 0);
    big.writeInt32BE(9, 4);
    socket.emit('data', big);
    socket.emit('data', framed(body(16, 1)));
    expect(seen).toEqual(['oversized 9 2000', 'frame 16']);
    expect(connection.isClosed).toBe(false);
  });
});

describe('versionOf', () => {
  it('reads the major and minor version from a srvr answer, and nothing from a refusal', () => {
    expect(
      versionOf(
        'Zookeeper version: 3.8.4-9316c2a, built on 2024-02-12 22:16 UTC\nMode: standalone\n',
      ),
    ).toEqual([3, 8]);
    expect(
      versionOf('Zookeeper version: 3.5.10-c2f6d6c3, built on 05/24/2022 12:18 GMT\n'),
    ).toEqual([3, 5]);
    expect(versionOf('srvr is not executed because it is not in the whitelist.\n')).toBeUndefined();
    expect(versionOf('')).toBeUndefined();
  });
});
