import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isPingFrame, PING_FRAME, watchPingWrites } from './ping-watch';

describe('isPingFrame', () => {
  it('knows a ping (length 8, xid -2, opcode 11) and nothing else', () => {
    expect(isPingFrame(PING_FRAME)).toBe(true);
    expect(isPingFrame(new Uint8Array(PING_FRAME))).toBe(true);
    // closeSession: the same header-only frame, xid 1, opcode -11.
    const close = Buffer.from([0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf5]);
    expect(isPingFrame(close)).toBe(false);
    // A ping inside a longer chunk is not a ping write (@zkrx/core writes frame by frame).
    expect(isPingFrame(Buffer.concat([PING_FRAME, PING_FRAME]))).toBe(false);
    expect(isPingFrame('ping')).toBe(false);
  });

  it('puts Socket.prototype.write back when the last watcher stops', () => {
    const write = Socket.prototype.write;
    const stopA = watchPingWrites(() => {});
    const stopB = watchPingWrites(() => {});
    expect(Socket.prototype.write).not.toBe(write);
    stopA();
    expect(Socket.prototype.write).not.toBe(write);
    stopB();
    expect(Socket.prototype.write).toBe(write);
  });
});
