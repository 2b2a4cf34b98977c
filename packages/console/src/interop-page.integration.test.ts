/**
 * The console in a browser with Curator (Java) and kazoo (Python) holders: their locks show
 * with their layouts, data and queue order beside zkrx's, a hand-over from each library to a
 * zkrx waiter shows (its event-to-render latency measured), and a Curator LeaderLatch shows as
 * the leader. Skipped where a peer cannot run (see @zkrx/interop).
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { type Peer, peerAvailability, startPeer } from '@zkrx/interop';
import { acquire } from '@zkrx/lock';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumMissing,
  launchBrowser,
  quoted,
  renderedAt,
  type TestBrowser,
} from '../test/browser';
import { recordMeasurement } from '../test/measurements';
import { type RunningConsole, startConsole } from './server';

const availability = peerAvailability();

for (const kind of ['curator', 'kazoo'] as const) {
  const support = availability[kind];
  const missing = support.available ? chromiumMissing : support.reason;
  describe.skipIf(missing !== undefined)(
    `the console with ${kind} holders${missing === undefined ? '' : ` (skipped: ${missing})`}`,
    () => {
      let browser: TestBrowser;
      let peer: Peer;
      let viewer: ZkClient;
      let waiter: ZkClient;
      let running: RunningConsole;

      beforeAll(async () => {
        const { connectString } = await testZooKeeper();
        const peerStarted = startPeer(kind, { connectString });
        browser = await launchBrowser();
        viewer = createClient({ connect: connectString });
        waiter = createClient({ connect: connectString });
        await Promise.all([viewer.connected(), waiter.connected()]);
        running = await startConsole({ client: viewer });
        peer = await peerStarted;
      }, 120_000);

      afterAll(async () => {
        await running?.close();
        await peer?.close();
        await browser?.close();
        await viewer?.close();
        await waiter?.close();
      });

      it(`shows ${kind}'s holder, a zkrx waiter behind it, and the hand-over`, async () => {
        const root = uniqueRoot('console');
        const path = `${root}/orders`;
        const hold = await peer.acquire('mutex', path, { participantId: `${kind}-worker` });
        const zkrxWaiting = acquire(waiter, path, { data: 'node-worker:1' });
        const page = await browser.page();
        await page.goto(new URL(`locks?path=${encodeURIComponent(root)}`, running.url).href);
        await page.waitForSelector(`tr.holder[data-node=${quoted(hold.node as string)}]`);
        await page.waitForSelector('tr.waiter');
        expect(await page.locator('h3').textContent()).toContain(
          kind === 'curator' ? 'curator' : 'mixed',
        );
        const data = await page.locator('tr.holder .data').textContent();
        // Curator writes its client's address; kazoo the identifier it was given.
        if (kind === 'kazoo') expect(data).toBe('kazoo-worker');
        else expect(data).toMatch(/^(\d{1,3}\.){3}\d{1,3}$|:/);
        const waiterNode = await page.locator('tr.waiter').getAttribute('data-node');
        const seen = await renderedAt(page, `tr.holder[data-node=${quoted(waiterNode as string)}]`);
        await peer.release(hold.id);
        const released = Date.now();
        const rendered = await seen();
        const lease = await zkrxWaiting;
        expect(lease.node).toBe(waiterNode);
        recordMeasurement(
          `hand-over event-to-render (${kind} holder to a zkrx waiter)`,
          rendered - released,
          'ms',
        );
        await lease.release();
        await page.close();
      });

      it.skipIf(kind !== 'curator')("shows a Curator LeaderLatch's leader", async () => {
        const path = `${uniqueRoot('console')}/latch`;
        const handle = await peer.latchStart(path, { participantId: 'java-leader' });
        expect(await peer.latchAwait(handle, 15_000)).toBe(true);
        const page = await browser.page();
        await page.goto(new URL(`leaders?path=${encodeURIComponent(path)}`, running.url).href);
        await page.waitForSelector('tr.holder');
        expect(await page.locator('tr.holder td.role').textContent()).toBe('leads');
        expect(await page.locator('tr.holder .data').textContent()).toBe('java-leader');
        await peer.latchClose(handle);
        await page.waitForSelector('tr.holder', { state: 'detached' });
        await page.close();
      });
    },
  );
}
