/**
 * The console in a browser with Curator (Java) and kazoo (Python) holders: their locks show
 * with their layouts, data and queue order beside zkrx's, a hand-over from each library to a
 * zkrx waiter shows (its event-to-render latency measured), and a Curator LeaderLatch shows as
 * the leader. Skipped where a peer cannot run (see @zkrx/interop).
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { type Peer, peerAvailability, startPeer } from '@zkrx/interop';
import { acquire, acquireSemaphore } from '@zkrx/lock';
import { acquireRead } from '@zkrx/rwlock';
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

      it(`shows ${kind}'s semaphore and read-write lock in the order each admits, and a lease handed on`, async () => {
        const root = uniqueRoot('console');
        const semaphorePath = `${root}/exports`;
        const rwPath = `${root}/reports`;
        const holds: string[] = [];
        const waiting: AbortController[] = [];
        const waitInPeer = (...args: Parameters<Peer['acquire']>) => {
          const controller = new AbortController();
          waiting.push(controller);
          return peer
            .acquire(args[0], args[1], { ...args[2], signal: controller.signal })
            .then((hold) => {
              holds.push(hold.id);
              return hold;
            });
        };
        const page = await browser.page();
        try {
          const first = await peer.acquire('semaphore', semaphorePath, {
            leases: 2,
            participantId: 'lease-1',
          });
          holds.push(first.id);
          // kazoo's semaphore layout is its own (zkrx shares Curator's): two peer holders there.
          const zkrxLease =
            kind === 'curator'
              ? await acquireSemaphore(waiter, semaphorePath, { leases: 2, data: 'lease-2' })
              : undefined;
          if (kind === 'kazoo') {
            const second = await peer.acquire('semaphore', semaphorePath, {
              leases: 2,
              session: 'other',
              participantId: 'lease-2',
            });
            holds.push(second.id);
          }
          const taker = waitInPeer('semaphore', semaphorePath, {
            leases: 2,
            session: 'third',
            participantId: 'taker',
          });
          const thirdSession = (await peer.sessionCredentials('third')).sessionId;
          const reader = await peer.acquire('read', rwPath, { participantId: 'reader' });
          holds.push(reader.id);
          const zkrxReader = await acquireRead(waiter, rwPath, { data: 'zkrx-reader' });
          void waitInPeer('write', rwPath, { session: 'other', participantId: 'writer' }).catch(
            () => {},
          );

          await page.goto(new URL(`locks?path=${encodeURIComponent(root)}`, running.url).href);
          const block = (path: string) => `section.lock[data-path=${quoted(path)}]`;
          const modes = (path: string, role: 'holder' | 'waiter') =>
            page
              .locator(`${block(path)} tr.${role}`)
              .evaluateAll((rows) => rows.map((row) => row.querySelectorAll('td')[1]?.textContent));
          // Curator's taker heads `locks` and has made its lease node; kazoo's queues on the
          // kazoo Lock `<path>-__lock__` (the console watches that sibling too).
          const takerRows = kind === 'curator' ? 2 : 1;
          await page.waitForFunction(
            ({ selector, count }) =>
              document.querySelectorAll(`${selector} tr.holder`).length === 2 &&
              document.querySelectorAll(`${selector} tr.waiter`).length === count,
            { selector: block(semaphorePath), count: takerRows },
          );
          expect(await modes(semaphorePath, 'holder')).toEqual(['lease', 'lease']);
          expect(await modes(semaphorePath, 'waiter')).toEqual(
            kind === 'curator' ? ['exclusive', 'lease'] : ['exclusive'],
          );
          expect(
            await page
              .locator(`${block(semaphorePath)} tr.waiter td .session`)
              .first()
              .textContent(),
          ).toBe(`0x${thirdSession}`);
          expect(await page.locator(`${block(semaphorePath)} h3`).textContent()).toContain(
            kind === 'curator'
              ? 'semaphore · curator · 2 leases held'
              : 'semaphore · kazoo · 2 of 2 leases held',
          );
          await page.waitForFunction(
            (selector) => document.querySelectorAll(`${selector} tr.waiter`).length === 1,
            block(rwPath),
          );
          expect(await modes(rwPath, 'holder')).toEqual(['read', 'read']);
          expect(await modes(rwPath, 'waiter')).toEqual(['write']);
          expect(
            await page
              .locator(`${block(rwPath)} tr.holder .data`)
              .nth(1)
              .textContent(),
          ).toBe('zkrx-reader');

          // The first lease let go: the taker holds one, and the page shows it.
          await peer.release(first.id);
          holds.splice(holds.indexOf(first.id), 1);
          await taker;
          await page.waitForFunction(
            ({ selector, session }) =>
              [...document.querySelectorAll(`${selector} tr.holder .session`)].some(
                (cell) => cell.textContent === session,
              ) && document.querySelectorAll(`${selector} tr.waiter`).length === 0,
            { selector: block(semaphorePath), session: `0x${thirdSession}` },
          );
          await zkrxLease?.release();
          await zkrxReader.release();
        } finally {
          for (const controller of waiting) controller.abort();
          for (const id of holds) await peer.release(id).catch(() => {});
          await page.close();
        }
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
