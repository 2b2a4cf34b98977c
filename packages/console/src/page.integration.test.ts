/**
 * The console in a real headless Chromium against a real ZooKeeper: a hand-over shows (its
 * event-to-render latency measured), a session's expiry marks its locks lost, a fleet join
 * shows its moves, a hostile node name is text, a read-only console offers no action and
 * refuses a forged one (403), a token console audits each action. Screenshots of each view go
 * to docs/. One browser for the file.
 */
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type ZkClient } from '@zkrx/core';
import { partition } from '@zkrx/fleet';
import { joinElection } from '@zkrx/leader';
import { acquire, acquireSemaphore, inspect, type Lease } from '@zkrx/lock';
import { acquireRead, acquireWrite } from '@zkrx/rwlock';
import { connectedClient, connectedClients, zooKeeper35 } from '@zkrx/test-support';
import { expireSession, mntr, startZooKeeper, testZooKeeper, uniqueRoot } from '@zkrx/testing';
import type { Page } from 'playwright-core';
import type { Subscription } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumMissing,
  launchBrowser,
  quoted,
  renderedAt,
  type TestBrowser,
} from '../test/browser';
import { recordMeasurement } from '../test/measurements';
import type { AuditEntry } from './handler';
import { type RunningConsole, startConsole } from './server';

// The README's screenshots: written to docs/ with ZKRX_CONSOLE_DOCS=1, else to a scratch folder.
const shots =
  process.env.ZKRX_CONSOLE_DOCS === '1'
    ? new URL('../docs/', import.meta.url)
    : new URL(`file://${mkdtempSync(join(tmpdir(), 'zkrx-console-shots-'))}/`);
if (!existsSync(shots)) mkdirSync(shots);
const screenshot = (page: Page, name: string) =>
  page.screenshot({ path: new URL(`${name}.png`, shots).pathname, fullPage: false });

let browser: TestBrowser;
let viewer: ZkClient;
let readOnly: RunningConsole;

beforeAll(async () => {
  if (!chromiumMissing) browser = await launchBrowser();
});

const pages: Page[] = [];
afterEach(async (context) => {
  if (context.task.result?.state === 'fail') {
    for (const page of pages)
      if (!page.isClosed())
        console.log('PAGE', page.url(), await page.locator('body').textContent());
  }
  pages.length = 0;
});

afterAll(async () => {
  await readOnly?.close();
  await viewer?.close();
  await browser?.close();
});

/** A read-only console on its own client (closed after the file). */
async function openReadOnly(): Promise<RunningConsole> {
  if (!readOnly) {
    // Its own client, not test-support's (those close after each test).
    viewer = createClient({ connect: (await testZooKeeper()).connectString });
    await viewer.connected();
    readOnly = await startConsole({ client: viewer });
  }
  return readOnly;
}

async function open(console: RunningConsole, path: string): Promise<Page> {
  const page = await browser.page();
  pages.push(page);
  await page.goto(new URL(path, console.url).href);
  return page;
}

describe.skipIf(chromiumMissing !== undefined)(
  `the console in a browser${chromiumMissing ? ` (skipped: ${chromiumMissing})` : ''}`,
  () => {
    it('shows a hand-over as it happens: holder, queue in order, tokens', async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const path = `${root}/orders`;
      const [a, b, c] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
      const first = await acquire(a, path, { data: 'web-1:4242' });
      // b queues before c (two sessions' creates race): b is next in line, whose lease the
      // hand-over below awaits — had c's node come first, b would wait for c, released after.
      const second = acquire(b, path, { data: 'web-2:4343' });
      await expect.poll(async () => (await inspect(a, path))?.waiters.length).toBe(1);
      const third = acquire(c, path, { data: 'worker-3:77' });
      const page = await open(console, `locks?path=${encodeURIComponent(root)}`);
      await page.waitForSelector(`tr.holder[data-node=${quoted(first.node)}]`);
      await page.waitForFunction(() => document.querySelectorAll('tr.waiter').length === 2);
      expect(await page.locator('tr.waiter td.role').allTextContents()).toEqual([
        'waits 1',
        'waits 2',
      ]);
      await screenshot(page, 'locks');

      // The hand-over: the time the release's reply came (the delete is applied by then) to the
      // time the page first shows the next holder.
      const waiterNodes = await page
        .locator('tr.waiter')
        .evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.node));
      // In the order the lock admits them: by sequence, b's then c's.
      expect(waiterNodes).toEqual((await inspect(a, path))?.waiters.map((each) => each.node));
      expect(await page.locator('tr.waiter .data').allTextContents()).toEqual([
        'web-2:4343',
        'worker-3:77',
      ]);
      const seen = await renderedAt(
        page,
        `tr.holder[data-node=${quoted(waiterNodes[0] as string)}]`,
      );
      await first.release();
      const released = Date.now();
      const rendered = await seen();
      const next = await second;
      expect(next.node).toBe(waiterNodes[0]);
      recordMeasurement(
        'hand-over event-to-render (zkrx mutex, 3 sessions)',
        rendered - released,
        'ms',
      );
      await page.waitForSelector('li.event[data-kind="handed-over"]');
      expect(await page.locator('.recent').textContent()).toContain('handed over');
      await next.release();
      await (await third).release();
      await page.close();
    });

    it("marks a session's locks lost when it expires", async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const [holder, other] = (await connectedClients(2)) as [ZkClient, ZkClient];
      const leases: Lease[] = [
        await acquire(holder, `${root}/billing`, { data: 'billing-7:901' }),
        await acquire(holder, `${root}/invoices`, { data: 'billing-7:901' }),
      ];
      const waiting = acquire(other, `${root}/billing`, { data: 'billing-8:902' });
      const page = await open(console, `locks?path=${encodeURIComponent(root)}`);
      for (const lease of leases)
        await page.waitForSelector(`tr.holder[data-node=${quoted(lease.node)}]`);
      await page.waitForSelector('tr.waiter');
      const lost = leases.map((lease) => lease.lost$);
      const losses = Promise.all(
        lost.map(
          (lost$) =>
            new Promise((resolve) =>
              lost$.subscribe({ next: resolve, complete: () => resolve(undefined) }),
            ),
        ),
      );
      const expiredSession = holder.sessionId as string;
      await expireSession(holder);
      await losses;
      // /billing went to the waiter, /invoices has nobody: both marked.
      await page.waitForFunction(
        () => document.querySelectorAll('h3 .alarm, ul.folders .alarm').length === 2,
      );
      await page.waitForFunction(() => document.querySelectorAll('li.event.lost').length === 2);
      expect(await page.locator('li.event.lost').first().textContent()).toContain(
        'session ended while holding',
      );
      (await waiting).release();

      // The session's own page says it ended.
      const sessionPage = await open(
        console,
        `sessions?id=${expiredSession}&in=${encodeURIComponent(`locks:${root}`)}`,
      );
      await sessionPage.waitForSelector('h2 .badge.alarm');
      await screenshot(sessionPage, 'sessions');
      await sessionPage.close();
      await page.close();
    });

    it('shows an election: the leader, candidates in line, the terms seen while open', async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const path = `${root}/scheduler`;
      const clients = await connectedClients(3);
      const elections = clients.map((client, index) =>
        joinElection(client, path, { id: `scheduler-${index + 1}` }),
      );
      await Promise.all(elections.map((election) => election.joined));
      const page = await open(console, `leaders?path=${encodeURIComponent(path)}`);
      await page.waitForFunction(() => document.querySelectorAll('tr.waiter').length === 2);
      // The leader leaves (the candidates joined at once: whichever was first leads).
      await expect.poll(() => elections.filter((election) => election.isLeader).length).toBe(1);
      const leader = elections.find((election) => election.isLeader) as (typeof elections)[number];
      await leader.leave();
      await page.waitForSelector('.terms li');
      await page.waitForFunction(() => document.querySelectorAll('tr.waiter').length === 1);
      await screenshot(page, 'leaders');
      for (const election of elections) if (election !== leader) await election.leave();
      await page.close();
    });

    it('shows a fleet join as its moves, and the items scroll and filter', async () => {
      const console = await openReadOnly();
      const path = `${uniqueRoot('console')}/shards`;
      const items = Array.from(
        { length: 12 },
        (_, index) => `shard-${String(index).padStart(2, '0')}`,
      );
      const clients = await connectedClients(3);
      const owned = new Map<string, readonly string[]>();
      const join = (client: ZkClient, id: string): Subscription =>
        partition(client, path, items, { id }).subscribe({
          next: (assignment) => owned.set(id, [...assignment.items]),
          error: () => {},
        });
      const members = [
        join(clients[0] as ZkClient, 'worker-a'),
        join(clients[1] as ZkClient, 'worker-b'),
      ];
      const settled = (count: number) =>
        [...owned.values()].flat().length === items.length &&
        [...owned.values()].every((list) => list.length === items.length / count) &&
        owned.size === count;
      await expect.poll(() => settled(2)).toBe(true);
      const page = await open(console, `partitions?path=${encodeURIComponent(path)}`);
      await page.waitForFunction(
        () => document.querySelector('.badge.ok')?.textContent === 'balanced',
      );
      await page.waitForFunction(
        () => document.querySelectorAll('.item-row[data-item]').length === 12,
      );
      members.push(join(clients[2] as ZkClient, 'worker-c'));
      await expect.poll(() => settled(3)).toBe(true);
      // Minimum moves: 12 items over 3 members is 4 each, so 4 items move, 2 from each.
      await page.waitForFunction(() => {
        const rows = [...document.querySelectorAll('.item-row[data-item] .c-owner')];
        return rows.filter((row) => row.textContent === 'worker-c').length === 4;
      });
      await page.waitForFunction(
        () => document.querySelector('.badge.ok')?.textContent === 'balanced',
      );
      await expect
        .poll(async () => page.locator('#fleet-recent li.event[data-kind="moved"]').count())
        .toBe(4);
      expect(await page.locator('#fleet-recent li.event[data-kind="joined"]').count()).toBe(1);
      await screenshot(page, 'partitions');
      const history = await open(console, 'history');
      await history.waitForSelector('#history-list li.event[data-kind="moved"]');
      await screenshot(history, 'history');
      await history.close();
      const group = await open(console, `members?path=${encodeURIComponent(path)}`);
      await group.waitForFunction(
        () => document.querySelectorAll('table.members tbody tr').length === 3,
      );
      await screenshot(group, 'members');
      await group.close();
      await page.fill('input[type=search]', 'worker-c');
      await page.waitForFunction(
        () => document.getElementById('shown')?.textContent === '4 of 12 items',
      );
      for (const member of members) member.unsubscribe();
      await page.close();
    });

    it('watches what is on screen: one watch a row of the page, none for the tree under them, none once closed', async () => {
      // A server of its own: its watch count (`mntr`) is this test's alone — on the file's
      // server, the watches an earlier test's pages let go are removed while this one counts.
      // (`wchs`/`wchc` leave one-shot child watches out on 3.8.)
      const server = await startZooKeeper({ tmpfs: true });
      const client = createClient({ connect: server.connectString });
      const watcher = createClient({ connect: server.connectString });
      let console: RunningConsole | undefined;
      try {
        await Promise.all([client.connected(), watcher.connected()]);
        console = await startConsole({ client: watcher });
        const root = uniqueRoot('console');
        const folders = Array.from(
          { length: 120 },
          (_, index) => `${root}/app-${String(index).padStart(3, '0')}`,
        );
        await client.promises.mkdirp(root);
        await Promise.all(folders.map((folder) => client.promises.create(folder)));
        await Promise.all(
          folders.flatMap((folder) =>
            Array.from({ length: 5 }, (_, index) =>
              client.promises.create(`${folder}/node-${index}`),
            ),
          ),
        );
        const watchCount = async () => Number((await mntr(server.connectString)).zk_watch_count);
        const added = async () => (await watchCount()) - before;
        const before = await watchCount();
        const rows = (page: Page, count: number) =>
          page.waitForFunction(
            (count) => document.querySelectorAll('ul.folders li').length === count,
            count,
          );
        const first = await open(console, `locks?path=${encodeURIComponent(root)}`);
        await rows(first, 50);
        // The root's listing and one child watch per folder row: 51, not one per node (720).
        await expect.poll(added).toBe(51);
        recordMeasurement(
          'server watches added by a page of 50 folders over 720 nodes',
          await added(),
          'watches',
        );
        // The rows that leave the screen let their watches go: the last page's 20 rows stay.
        await first.goto(
          new URL(`locks?path=${encodeURIComponent(root)}&page=2`, console.url).href,
        );
        await rows(first, 20);
        await expect.poll(added).toBe(21);
        // A second page shares the root's listing: the first page's rows again, 50 more.
        const second = await open(console, `locks?path=${encodeURIComponent(root)}`);
        await rows(second, 50);
        await expect.poll(added).toBe(71);
        // The first page closes: its 20 rows' watches go, the listing the second one needs stays
        // (a child made now shows there).
        await first.close();
        await expect.poll(added).toBe(51);
        await client.promises.create(`${root}/app-120`);
        await second.waitForFunction(() =>
          document.querySelector('nav.pages')?.textContent?.includes('(121 children)'),
        );
        expect(await added()).toBe(51);
        // The last page closes: the server has the watches it had before any.
        await second.close();
        await expect.poll(added).toBe(0);
      } finally {
        await console?.close();
        await Promise.all([client.close(), watcher.close()]);
        await server.close();
      }
    });

    it("shows a semaphore's holders and a read-write lock's queue in the order each admits", async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const semaphorePath = `${root}/exports`;
      const rwPath = `${root}/reports`;
      const [a, b, c] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
      // Two leases of two held, a third taker waits; a reader holds, a writer waits, and a
      // reader queued after the writer waits behind it.
      const leaseA = await acquireSemaphore(a, semaphorePath, { leases: 2, data: 'export-a:1' });
      const leaseB = await acquireSemaphore(b, semaphorePath, { leases: 2, data: 'export-b:2' });
      const leaseC = acquireSemaphore(c, semaphorePath, { leases: 2, data: 'export-c:3' });
      const reader = await acquireRead(a, rwPath, { data: 'reader-1' });
      const writer = acquireWrite(b, rwPath, { data: 'writer-2' });
      await expect.poll(async () => (await inspect(a, rwPath))?.waiters.length).toBe(1);
      const lateReader = acquireRead(c, rwPath, { data: 'reader-3' });
      await expect.poll(async () => (await inspect(a, rwPath))?.waiters.length).toBe(2);
      const page = await open(console, `locks?path=${encodeURIComponent(root)}`);
      const block = (path: string) => `section.lock[data-path=${quoted(path)}]`;
      const rows = (path: string, role: 'holder' | 'waiter') =>
        page
          .locator(`${block(path)} tr.${role}`)
          .evaluateAll((found) =>
            found.map((row) => [
              row.querySelector('td.role')?.textContent,
              row.querySelectorAll('td')[1]?.textContent,
              row.querySelector('.data')?.textContent,
            ]),
          );
      await page.waitForFunction(
        (selector) => document.querySelectorAll(`${selector} tr.holder`).length === 2,
        block(semaphorePath),
      );
      await page.waitForSelector(`${block(semaphorePath)} tr.waiter`);
      expect((await rows(semaphorePath, 'holder')).sort()).toEqual([
        ['holds', 'lease', 'export-a:1'],
        ['holds', 'lease', 'export-b:2'],
      ]);
      expect((await rows(semaphorePath, 'waiter'))[0]).toEqual([
        'waits 1',
        'exclusive',
        'export-c:3',
      ]);
      expect(await page.locator(`${block(semaphorePath)} h3`).textContent()).toContain(
        'semaphore · curator · 2 leases held',
      );
      await page.waitForFunction(
        (selector) => document.querySelectorAll(`${selector} tr.waiter`).length === 2,
        block(rwPath),
      );
      expect(await rows(rwPath, 'holder')).toEqual([['holds', 'read', 'reader-1']]);
      expect(await rows(rwPath, 'waiter')).toEqual([
        ['waits 1', 'write', 'writer-2'],
        ['waits 2', 'read', 'reader-3'],
      ]);
      await screenshot(page, 'semaphores');

      // A lease let go goes to the taker; the reader's release to the writer, then the reader.
      await leaseA.release();
      const third = await leaseC;
      await page.waitForSelector(
        `${block(semaphorePath)} tr.holder[data-node=${quoted(third.node)}]`,
      );
      expect(await page.locator(`${block(semaphorePath)} tr.waiter`).count()).toBe(0);
      await reader.release();
      const writing = await writer;
      await page.waitForSelector(`${block(rwPath)} tr.holder[data-node=${quoted(writing.node)}]`);
      expect(await rows(rwPath, 'waiter')).toEqual([['waits 1', 'read', 'reader-3']]);
      await writing.release();
      const reading = await lateReader;
      await page.waitForSelector(`${block(rwPath)} tr.holder[data-node=${quoted(reading.node)}]`);
      await Promise.all([leaseB.release(), third.release(), reading.release()]);
      await page.close();
    });

    it('without persistent watches (a 3.5 server): child watches, and a hand-over still shows', async () => {
      // The run's server behind a relay that answers as 3.5 does: an addWatch is Unimplemented
      // (and the connection closed). The console learns it once and watches with child watches.
      const server = await zooKeeper35((await testZooKeeper()).connectString);
      const client = await connectedClient({ connect: server.connectString });
      const running = await startConsole({ client });
      try {
        const root = uniqueRoot('console');
        const [a, b, c] = (await connectedClients(3)) as [ZkClient, ZkClient, ZkClient];
        const first = await acquire(a, `${root}/orders`, { data: 'old-holder:1' });
        const second = acquire(b, `${root}/orders`, { data: 'next-holder:2' });
        const lease = await acquireSemaphore(a, `${root}/exports`, { leases: 1 });
        const taker = acquireSemaphore(c, `${root}/exports`, { leases: 1, data: 'taker:3' });
        const page = await open(running, `locks?path=${encodeURIComponent(root)}`);
        await page.waitForSelector(`tr.holder[data-node=${quoted(first.node)}]`);
        await page.waitForFunction(() => document.querySelectorAll('tr.waiter').length >= 2);
        expect(server.addWatches).toBeGreaterThanOrEqual(1);
        const waiterNode = await page
          .locator(`section.lock[data-path=${quoted(`${root}/orders`)}] tr.waiter`)
          .getAttribute('data-node');
        const seen = await renderedAt(page, `tr.holder[data-node=${quoted(waiterNode as string)}]`);
        await first.release();
        await seen();
        expect((await second).node).toBe(waiterNode);
        // A semaphore: its `leases` and `locks` watched too; the lease goes to the taker.
        await lease.release();
        const took = await taker;
        await page.waitForSelector(`tr.holder[data-node=${quoted(took.node)}]`);
        // Learnt once: a lock shown from now on is watched with child watches at once.
        const asked = server.addWatches;
        const later = await acquire(a, `${root}/later`);
        await page.waitForSelector(`tr.holder[data-node=${quoted(later.node)}]`);
        expect(server.addWatches).toBe(asked);
        await later.release();
        expect(await page.locator('p.error').count()).toBe(0);
        await (await second).release();
        await took.release();
        await page.close();
      } finally {
        await running.close();
      }
    });

    it('renders a hostile node name and owner data as text', async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const hostile = `<img src=x onerror="window.__pwned=1">`;
      const client = await connectedClient();
      const lease = await acquire(client, `${root}/${hostile}`, {
        data: '<script>window.__pwned=2</script>',
      });
      const page = await open(console, `locks?path=${encodeURIComponent(root)}`);
      await page.waitForSelector(`tr.holder[data-node=${quoted(lease.node)}]`);
      expect(await page.locator('h3 a').first().textContent()).toBe(`${root}/${hostile}`);
      expect(await page.locator('tr.holder .data').textContent()).toBe(
        '<script>window.__pwned=2</script>',
      );
      expect(
        await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      expect(await page.locator('main img, main script').count()).toBe(0);
      await lease.release();
      await page.close();
    });

    it('read-only: offers no action, and refuses a forged one (403)', async () => {
      const console = await openReadOnly();
      const root = uniqueRoot('console');
      const client = await connectedClient();
      const lease = await acquire(client, `${root}/reports`);
      const page = await open(console, `locks?path=${encodeURIComponent(root)}`);
      await page.waitForSelector(`tr.holder[data-node=${quoted(lease.node)}]`);
      expect(await page.locator('button').count()).toBe(0);
      expect(await page.locator('#who').textContent()).toBe('read-only');
      const forged = await page.evaluate(async (node) => {
        const answers = [];
        for (const action of ['release', 'revoke']) {
          const response = await fetch(`api/actions/${action}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': 'guessed' },
            body: JSON.stringify({ node }),
          });
          answers.push(response.status);
        }
        return answers;
      }, lease.node);
      expect(forged).toEqual([403, 403]);
      const signIn = await fetch(new URL('api/sign-in', console.url), {
        method: 'POST',
        body: 'token=x',
      });
      expect(signIn.status).toBe(404);
      expect(lease.isHeld).toBe(true);
      expect(await client.promises.exists(lease.node)).not.toBeNull();
      await lease.release();
      await page.close();
    });

    it('with a token: signs in, confirms, acts, audits who, what and when; refuses without CSRF', async () => {
      const root = uniqueRoot('console');
      const token = 'correct-horse-battery-staple';
      const audit: AuditEntry[] = [];
      const client = await connectedClient();
      const acting = await startConsole({
        client,
        actions: true,
        token,
        audit: (entry) => audit.push(entry),
      });
      try {
        const [holder, waiter] = (await connectedClients(2)) as [ZkClient, ZkClient];
        const held = await acquire(holder, `${root}/stuck`, {
          data: 'hung-worker:13',
          revocable: true,
        });
        const queued = acquire(waiter, `${root}/stuck`, { data: 'next-worker:14' });
        const page = await open(acting, `locks?path=${encodeURIComponent(root)}`);
        await page.waitForSelector('form.sign-in input[name=token]');
        expect(await page.locator('button.danger').count()).toBe(0);
        await page.fill('form.sign-in input[name=token]', token);
        await Promise.all([page.waitForNavigation(), page.click('form.sign-in button')]);
        await page.waitForSelector(`tr.holder[data-node=${quoted(held.node)}] button.danger`);
        await screenshot(page, 'actions');

        // revoke: confirmed, written, audited.
        const revoked = new Promise((resolve) =>
          held.revoked$.subscribe({ next: resolve, error: resolve }),
        );
        page.once('dialog', (dialog) => void dialog.accept());
        await page.click(`tr.holder[data-node=${quoted(held.node)}] button:not(.danger)`);
        await revoked;
        await expect.poll(() => audit.length).toBe(1);
        // release --force: declined first (nothing happens), then confirmed.
        page.once('dialog', (dialog) => void dialog.dismiss());
        await page.click(`tr.holder[data-node=${quoted(held.node)}] button.danger`);
        page.once('dialog', (dialog) => void dialog.accept());
        await page.waitForSelector(
          `tr.holder[data-node=${quoted(held.node)}] td.data, tr.holder[data-node=${quoted(held.node)}] .warn`,
        );
        await page.click(`tr.holder[data-node=${quoted(held.node)}] button.danger`);
        const next = await queued;
        await page.waitForSelector(`tr.holder[data-node=${quoted(next.node)}]`);
        await expect.poll(() => audit.length).toBe(2);
        expect(audit).toMatchObject([
          {
            action: 'revoke',
            node: held.node,
            lock: `${root}/stuck`,
            session: holder.sessionId,
            data: 'hung-worker:13',
            result: 'done',
          },
          {
            action: 'release',
            node: held.node,
            lock: `${root}/stuck`,
            session: holder.sessionId,
            result: 'done',
          },
        ]);
        for (const entry of audit) {
          expect(entry.who).toMatch(/^token sign-in /);
          expect(Date.parse(entry.at)).toBeGreaterThan(0);
        }
        // Signed in but without the CSRF token, or from another origin: refused, nothing done.
        const forged = await page.evaluate(async (node) => {
          const response = await fetch('api/actions/release', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ node }),
          });
          return response.status;
        }, next.node);
        expect(forged).toBe(403);
        const anonymous = await fetch(new URL('api/actions/release', acting.url), {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ node: next.node }),
        });
        expect(anonymous.status).toBe(403);
        expect(audit).toHaveLength(2);
        expect(next.isHeld).toBe(true);
        await next.release();
        await page.close();
      } finally {
        await acting.close();
      }
    });
  },
);
