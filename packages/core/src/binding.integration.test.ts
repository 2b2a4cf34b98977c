/**
 * Known traps of the `zookeeper` native binding that @zkrx/core cannot guard against from
 * JavaScript, pinned so that a fixed binding shows up here.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectedClient } from '../test/support';

describe('binding: known issues', () => {
  // The C client opens its sockets without SOCK_CLOEXEC: a child process spawned while a client
  // is connected inherits the socket. Once the client closes it, the socket stays open in the
  // child, and the epoll registration of the parent's event loop outlives it: later sockets
  // that reuse the descriptor number get spurious wake-ups (the binding spins, then reports its
  // session expired). Needs a fix in the binding (SOCK_CLOEXEC or fcntl FD_CLOEXEC).
  it.runIf(process.platform === 'linux').fails(
    'a child process spawned while connected does not inherit the client socket',
    async () => {
      await connectedClient();
      const child = spawn('sleep', ['5'], { stdio: 'ignore' });
      try {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const inherited = readdirSync(`/proc/${child.pid}/fd`)
          .map((fd) => readlinkSync(`/proc/${child.pid}/fd/${fd}`))
          .filter((target) => target.startsWith('socket:'));
        expect(inherited).toEqual([]);
      } finally {
        child.kill('SIGKILL');
      }
    },
  );
});
