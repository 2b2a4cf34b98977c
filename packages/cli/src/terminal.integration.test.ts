/**
 * `zkrx` in a real terminal, used as a person uses it: tmux runs the command, the test types keys
 * and reads the screen, while zkrx clients take, hand over and lose locks on a real ZooKeeper.
 */
import type { ZkClient } from '@zkrx/core';
import { acquire, type Lease } from '@zkrx/lock';
import { connectedClients } from '@zkrx/test-support';
import { expireSession, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { Terminal, tmuxAvailability, zkrxFromSource } from '../test/terminal';

const tmux = tmuxAvailability();

/** Queues `client` on `path` with `data`; resolves the pending acquire once its node waits. */
async function queue(client: ZkClient, path: string, data: string) {
  let node: string | undefined;
  const lease = acquire(client, path, {
    data,
    onQueued: (queued) => {
      node = queued;
    },
  });
  await vi.waitUntil(() => node !== undefined);
  return { node: node as string, lease };
}

const session = (client: ZkClient) => `0x${client.sessionId}`;

describe.skipIf(!tmux.available)(
  `zkrx in a terminal (tmux)${tmux.available ? '' : ` (skipped: ${tmux.reason})`}`,
  () => {
    it('locks --watch: a queue, a hand-over, hold times ticking, a lost lease highlighted; q quits', async () => {
      const { connectString } = await testZooKeeper();
      const root = uniqueRoot('cli');
      const [a, b, c, d] = (await connectedClients(4)) as [ZkClient, ZkClient, ZkClient, ZkClient];
      using terminal = Terminal.start(
        zkrxFromSource(['locks', root, '--watch', '--connect', connectString]),
      );
      await terminal.until((screen) => screen.includes(`No locks under ${root}`), 'the empty view');

      // Taken, then a queue.
      const first = await acquire(a, `${root}/orders`, { data: 'worker-a:101' });
      await terminal.until(
        (screen) =>
          /holds +exclusive +0x\w+ +worker-a:101 +held/.test(screen) &&
          screen.includes(`taken: ${session(a)} (worker-a:101) holds`),
        'worker-a holding',
      );
      const waiting = await queue(b, `${root}/orders`, 'worker-b:202');
      await terminal.until(
        (screen) => /waits 1 +exclusive +0x\w+ +worker-b:202 +waiting/.test(screen),
        'worker-b waiting',
      );

      // A hand-over.
      await first.release();
      const second = await waiting.lease;
      await terminal.until(
        (screen) =>
          screen.includes(
            `handed over: ${session(a)} (worker-a:101) → ${session(b)} (worker-b:202)`,
          ) && /holds +exclusive +0x\w+ +worker-b:202 +held \d/.test(screen),
        'the hand-over to worker-b',
      );

      // The hold time ticks with nothing changing in ZooKeeper (the 1 s redraw).
      const heldFor = (screen: string) => /worker-b:202 +held (\S+)/.exec(screen)?.[1];
      const shown = heldFor(terminal.screen());
      await terminal.until(
        (screen) => heldFor(screen) !== undefined && heldFor(screen) !== shown,
        `worker-b's hold time moving on from ${shown}`,
      );

      // A lost lease: worker-c holds two locks, worker-d waits on both; worker-c's session expires.
      const payments = await acquire(c, `${root}/payments`, { data: 'worker-c:303' });
      const refunds = await acquire(c, `${root}/refunds`, { data: 'worker-c:303' });
      const next = await queue(d, `${root}/payments`, 'worker-d:404');
      const nextToo = await queue(d, `${root}/refunds`, 'worker-d:404');
      await terminal.until(
        (screen) => screen.match(/waits 1 +exclusive +0x\w+ +worker-d:404/g)?.length === 2,
        'worker-d waiting behind worker-c twice',
      );
      const expired = session(c);
      await expireSession(c);
      const afterLoss = await terminal.until(
        (screen) =>
          screen.includes(`LOST  ${expired} (worker-c:303): session ended while holding (held `) &&
          screen.includes(`now ${session(d)} (worker-d:404) holds`) &&
          /payments .*LOST a lease/.test(screen),
        "worker-c's lost leases",
      );
      expect(afterLoss).not.toContain('worker-c:303  held');
      expect(payments.isHeld).toBe(false);
      expect(refunds.isHeld).toBe(false);
      if (process.env.ZKRX_PRINT_SCREEN) console.log(afterLoss);

      // q quits, with exit code 0.
      terminal.keys('q');
      await terminal.until((screen) => screen.includes('[exited 0]'), 'zkrx exiting 0');
      await second.release();
      await (await next.lease).release();
      await (await nextToo.lease).release();
    });

    it('release --force shows the holder and asks; "y" deletes its node, and the holder learns it', async () => {
      const { connectString } = await testZooKeeper();
      const root = uniqueRoot('cli');
      const [holder] = (await connectedClients(1)) as [ZkClient];
      const lease: Lease = await acquire(holder, `${root}/stuck`, { data: 'stuck-host:7' });
      using terminal = Terminal.start(
        zkrxFromSource(['release', lease.node, '--force', '--connect', connectString]),
      );
      const asked = await terminal.until(
        (screen) => screen.includes('Delete this lock node? [y/N]'),
        'the confirmation prompt',
      );
      expect(asked).toContain(`session  ${session(holder)}`);
      expect(asked).toContain('data     stuck-host:7');
      expect(asked).toMatch(/role +exclusive: holds it/);
      const lost = new Promise((resolve) => lease.lost$.subscribe(resolve));
      terminal.keys('y', 'Enter');
      await terminal.until(
        (screen) =>
          screen.includes(`released: ${lease.node} deleted`) && screen.includes('[exited 0]'),
        'the release',
      );
      expect(await lost).toMatchObject({ name: 'LockLostError', reason: 'node-deleted' });
    });

    it('release --force: any answer but "y" leaves the node, exit code 1', async () => {
      const { connectString } = await testZooKeeper();
      const root = uniqueRoot('cli');
      const [holder] = (await connectedClients(1)) as [ZkClient];
      const lease = await acquire(holder, `${root}/kept`);
      using terminal = Terminal.start(
        zkrxFromSource(['release', lease.node, '--force', '--connect', connectString]),
      );
      await terminal.until((screen) => screen.includes('[y/N]'), 'the confirmation prompt');
      terminal.keys('n', 'Enter');
      await terminal.until(
        (screen) => screen.includes('zkrx: not released') && screen.includes('[exited 1]'),
        'the refusal',
      );
      expect(lease.isHeld).toBe(true);
      expect(await holder.promises.exists(lease.node)).not.toBeNull();
      await lease.release();
    });
  },
);
