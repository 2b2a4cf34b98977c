/**
 * Traps of the `zookeeper` native binding that @zkrx/core cannot guard against from JavaScript,
 * fixed by zkrx's patch of the binding (patches/zookeeper@7.3.0.patch).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectedClient } from '../test/support';

describe('binding: known issues', () => {
  // The C client opens its sockets without SOCK_CLOEXEC: a child process spawned while a client
  // is connected would inherit the socket. Once the client closed it, the socket stayed open in
  // the child, and the epoll registration of the parent's event loop outlived it: later sockets
  // reusing the descriptor number got spurious wake-ups (the binding spun, then reported its
  // session expired). zkrx's patch of the binding sets FD_CLOEXEC on each new socket.
  it.runIf(process.platform === 'linux')(
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
