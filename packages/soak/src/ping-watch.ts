/**
 * Sees the pings this process's ZooKeeper clients write, from their sockets' side: the worker
 * aims its stall fault at the moment right after a ping went out, without any hook in
 * `@zkrx/core`.
 */
import { Socket } from 'node:net';

/**
 * A ZooKeeper ping as a client writes it: the 12-byte frame of length 8 (the request header),
 * xid -2, opcode 11. `@zkrx/core` writes each frame with its own `socket.write`.
 */
export const PING_FRAME: Buffer = Buffer.from([0, 0, 0, 8, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 11]);

/**
 * Whether a chunk given to `socket.write` is exactly a ping frame.
 *
 * @param chunk What was written.
 * @return True for a ping.
 */
export function isPingFrame(chunk: unknown): boolean {
  return (
    chunk instanceof Uint8Array && chunk.length === PING_FRAME.length && PING_FRAME.equals(chunk)
  );
}

const listeners = new Set<() => void>();
let original: typeof Socket.prototype.write | undefined;

/**
 * Calls `onPing` right after every ping frame any socket of this process writes (inside the
 * write call: the frame is handed to the socket, and the caller's turn has not ended).
 *
 * @param onPing Called once per ping written.
 * @return Stops watching (the last one restores `Socket.prototype.write`).
 */
export function watchPingWrites(onPing: () => void): () => void {
  if (!original) {
    const write = Socket.prototype.write;
    original = write;
    Socket.prototype.write = function (this: Socket, ...args: Parameters<typeof write>) {
      const written = Reflect.apply(write, this, args) as boolean;
      if (isPingFrame(args[0])) for (const listener of [...listeners]) listener();
      return written;
    } as typeof write;
  }
  const listener = () => onPing();
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && original) {
      Socket.prototype.write = original;
      original = undefined;
    }
  };
}
