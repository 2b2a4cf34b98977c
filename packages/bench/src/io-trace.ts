/**
 * How a client uses its sockets, whatever the client: every TCP client socket this process opens
 * (`diagnostics_channel` 'net.client.socket') is counted — reads (calls of the handle's `onread`:
 * one per chunk libuv read, whether the socket streams or reads into a buffer of its own), bytes,
 * and writes handed to the handle (one libuv write each: a `writev` or a single buffer). Replies
 * per read and requests per write tell how a client batches.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';

/** The counters, summed over the traced sockets. */
export interface IoCounts {
  reads: number;
  bytesRead: number;
  writes: number;
  bytesWritten: number;
}

/** The handle methods that each start one write on the socket (Node's stream_wrap). */
const WRITE_METHODS = [
  'writev',
  'writeBuffer',
  'writeLatin1String',
  'writeUtf8String',
  'writeAsciiString',
  'writeUcs2String',
] as const;

/** The difference of two readings. */
export function ioDelta(before: IoCounts, after: IoCounts): IoCounts {
  return {
    reads: after.reads - before.reads,
    bytesRead: after.bytesRead - before.bytesRead,
    writes: after.writes - before.writes,
    bytesWritten: after.bytesWritten - before.bytesWritten,
  };
}

/**
 * The JSON fields of a phase's counts over `ops` requests (replies): how many requests one write
 * carried and replies one read brought, on average, and the bytes of a read.
 *
 * ## Example
 * ```ts
 * console.log(ioFields({ reads: 10, bytesRead: 5000, writes: 20, bytesWritten: 4000 }, 100));
 * // Output: { ops_per_read: 10, ops_per_write: 5, bytes_per_read: 500 }
 * ```
 */
export function ioFields(counts: IoCounts, ops: number): Record<string, number> {
  const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
  return {
    ops_per_read: ratio(ops, counts.reads),
    ops_per_write: ratio(ops, counts.writes),
    bytes_per_read: ratio(counts.bytesRead, counts.reads),
  };
}

/** Counts the client sockets opened from now on; `read()` sums them. */
export function traceClientSockets(): { read(): IoCounts } {
  const totals: IoCounts = { reads: 0, bytesRead: 0, writes: 0, bytesWritten: 0 };
  const sockets = new Set<Socket>();
  subscribe('net.client.socket', (message) => {
    const socket = (message as { socket: Socket }).socket;
    sockets.add(socket);
    socket.once('connect', () => {
      const handle = (socket as unknown as { _handle?: Record<string, unknown> })._handle;
      if (!handle) return;
      const onread = handle.onread;
      if (typeof onread === 'function') {
        handle.onread = function (this: unknown, ...args: unknown[]) {
          totals.reads += 1;
          return onread.apply(this, args);
        };
      }
      for (const name of WRITE_METHODS) {
        const original = handle[name];
        if (typeof original !== 'function') continue;
        handle[name] = function (this: unknown, ...args: unknown[]) {
          totals.writes += 1;
          return original.apply(this, args);
        };
      }
    });
    socket.once('close', () => {
      totals.bytesRead += socket.bytesRead;
      totals.bytesWritten += socket.bytesWritten;
      sockets.delete(socket);
    });
  });
  return {
    read() {
      let { bytesRead, bytesWritten } = totals;
      for (const socket of sockets) {
        bytesRead += socket.bytesRead;
        bytesWritten += socket.bytesWritten;
      }
      return { ...totals, bytesRead, bytesWritten };
    },
  };
}
