/**
 * The console's bench: a tree of 100,000 nodes, a fleet of 10,000 items over 100 members, and
 * 1,000 waiters on one lock, each opened in a real headless Chromium. Measures the first view
 * (navigation to the page's rows drawn), the update latency (a move's or a hand-over's write
 * acknowledged to the page drawing it: median, p99 and max of `--moves`), the console
 * process's memory (RSS, /proc), the server's watches (`wchs`, `mntr`) and packets (`mntr`) — for the tree, what its
 * first view cost; for the fleet and the lock, per change while open, minus the same changes
 * made with no console open.
 *
 * `pnpm --filter @zkrx/console bench [--tree 100000] [--items 10000] [--members 100]
 * [--waiters 1000] [--moves 20]` (`ZKRX_CONSOLE_CPU_PROF=<dir>`: the console process's CPU
 * profile written to `<dir>`). The page's own times (script running, first message in, drawn)
 * are read from the page, since the navigation began.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createClient, type ZkClient } from '@zkrx/core';
import { inspectFleet } from '@zkrx/fleet';
import { inspect } from '@zkrx/lock';
import { fourLetterWord, mntr, startZooKeeper } from '@zkrx/testing';
import { launchBrowser, renderedAt } from '../test/browser';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '10000' },
    members: { type: 'string', default: '100' },
    waiters: { type: 'string', default: '1000' },
    moves: { type: 'string', default: '20' },
    tree: { type: 'string', default: '100000' },
    'join-moves': { type: 'string', default: '10' },
  },
});
const TREE = Number(values.tree);
const ITEMS = Number(values.items);
const MEMBERS = Number(values.members);
const WAITERS = Number(values.waiters);
const MOVES = Number(values.moves);
/** Moves made each right after a member joins (the join's own reads under way). */
const JOIN_MOVES = Number(values['join-moves']);

/** The value at quantile q (0..1) of the samples, nearest rank. */
const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[
    Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1))
  ] as number;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const lockName = () => `_c_${randomUUID()}-lock-`;

const server = await startZooKeeper({ tmpfs: true, maxSessionTimeoutMs: 60_000 });
const hostPort = server.connectString;
const open = async () => {
  const client = createClient({ connect: hostPort, sessionTimeoutMs: 30_000 });
  await client.connected();
  return client;
};
const clients: ZkClient[] = [];
try {
  const admin = await open();
  clients.push(admin);
  const members: ZkClient[] = [];
  for (let index = 0; index < MEMBERS; index++) members.push(await open());
  clients.push(...members);

  // The layout of a @zkrx/fleet partition, written as its members write it: a member node per
  // session, an item's lock node owned by its member's session.
  const fleet = '/bench/fleet';
  await admin.promises.mkdirp(`${fleet}/members`);
  await admin.promises.mkdirp(`${fleet}/items`);
  const ids = members.map((_, index) => `member-${String(index).padStart(3, '0')}`);
  await Promise.all(
    members.map((client, index) =>
      client.promises.create(`${fleet}/members/${ids[index]}`, `host-${index}:1`, {
        mode: 'ephemeral',
      }),
    ),
  );
  const items = Array.from(
    { length: ITEMS },
    (_, index) => `item-${String(index).padStart(5, '0')}`,
  );
  const owners = new Map<string, { member: number; node: string }>();
  const startedLayout = Date.now();
  for (let at = 0; at < items.length; at += 500) {
    const batch = items.slice(at, at + 500);
    await Promise.all(
      batch.map((item) =>
        admin.promises.create(`${fleet}/items/${item}`, '', { mode: 'container' }),
      ),
    );
    await Promise.all(
      batch.map(async (item, offset) => {
        const member = (at + offset) % MEMBERS;
        const node = (
          await (members[member] as ZkClient).promises.create(
            `${fleet}/items/${item}/${lockName()}`,
            ids[member] as string,
            { mode: 'ephemeral', sequential: true },
          )
        ).path;
        owners.set(item, { member, node });
      }),
    );
  }
  // 1,000 waiters on one lock (and one more for each hand-over of the baseline), from 50 sessions.
  const lock = '/bench/locks/orders';
  await admin.promises.mkdirp(lock);
  const queue: { client: ZkClient; node: string }[] = [];
  const queued = WAITERS + MOVES;
  for (let at = 0; at < queued; at += 100) {
    const made = await Promise.all(
      Array.from({ length: Math.min(100, queued - at) }, async (_, offset) => {
        const client = members[(at + offset) % Math.min(50, MEMBERS)] as ZkClient;
        return {
          client,
          node: (
            await client.promises.create(`${lock}/${lockName()}`, `waiter-${at + offset}`, {
              mode: 'ephemeral',
              sequential: true,
            })
          ).path,
        };
      }),
    );
    queue.push(...made);
  }
  // In the order the lock admits them: by sequence (replies of 50 sessions come in any order).
  queue.sort((a, b) => Number(a.node.slice(-10)) - Number(b.node.slice(-10)));
  // A tree of TREE nodes: folders of 99 nodes each; the first 10 folders are locks (a holder and
  // two waiters of member sessions) among the plain ones.
  const tree = '/bench/tree';
  const folders = Array.from(
    { length: Math.max(1, Math.floor(TREE / 100)) },
    (_, index) => `${tree}/app-${String(index).padStart(4, '0')}`,
  );
  await admin.promises.mkdirp(tree);
  for (let at = 0; at < folders.length; at += 10) {
    const batch = folders.slice(at, at + 10);
    await Promise.all(batch.map((folder) => admin.promises.create(folder)));
    await Promise.all(
      batch.flatMap((folder, offset) =>
        at + offset < 10
          ? [0, 1, 2].map((n) =>
              (members[n] as ZkClient).promises.create(`${folder}/${lockName()}`, `tree-${n}`, {
                mode: 'ephemeral',
                sequential: true,
              }),
            )
          : Array.from({ length: 99 }, (_, n) =>
              admin.promises.create(`${folder}/node-${String(n).padStart(2, '0')}`),
            ),
      ),
    );
  }
  const treeNodes = 1 + folders.length + 10 * 3 + (folders.length - 10) * 99;
  console.log(
    `layout: a tree of ${treeNodes} nodes (${folders.length} folders), ${ITEMS} items × ${MEMBERS} members, ${WAITERS} waiters (${Date.now() - startedLayout} ms to write)`,
  );

  const packets = async () => {
    const stats = await mntr(hostPort);
    return Number(stats.zk_packets_received) + Number(stats.zk_packets_sent);
  };
  const watches = async () => (await fourLetterWord(hostPort, 'wchs')).trim().replace(/\s+/g, ' ');
  /** Since the navigation began: the script running, the user known, the first message in, drawn. */
  const pageTimes = () => ({
    script: Number(document.body.dataset.scriptMs),
    me: Number(document.body.dataset.meMs),
    messageIn: Number(document.body.dataset.firstMessageMs),
    drawn: Number(document.body.dataset.firstDrawMs),
  });
  const rssOf = (pid: number) =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;

  /** A move: the owner's node deleted and the next member's created. Resolves the write's time. */
  let moved = 0;
  const move = async () => {
    const item = items[(moved * 97) % items.length] as string;
    moved += 1;
    const owner = owners.get(item) as { member: number; node: string };
    const next = (owner.member + 1) % MEMBERS;
    await (members[owner.member] as ZkClient).promises.delete(owner.node);
    const node = (
      await (members[next] as ZkClient).promises.create(
        `${fleet}/items/${item}/${lockName()}`,
        ids[next] as string,
        { mode: 'ephemeral', sequential: true },
      )
    ).path;
    owners.set(item, { member: next, node });
    return { item, member: ids[next] as string, at: Date.now() };
  };
  const handOver = async () => {
    const first = queue.shift() as { client: ZkClient; node: string };
    await first.client.promises.delete(first.node);
    return { node: queue[0]?.node as string, at: Date.now() };
  };

  // What one read of the whole fleet costs, without the console.
  let readStarted = Date.now();
  await inspectFleet(admin, fleet);
  const inspectFleetMs = Date.now() - readStarted;
  readStarted = Date.now();
  await inspect(admin, lock);
  const inspectLockMs = Date.now() - readStarted;

  // Baseline: the same changes with no console open.
  const baseStart = await packets();
  const baseT = Date.now();
  for (let index = 0; index < MOVES; index++) {
    await move();
    await handOver();
    await sleep(500);
  }
  const basePerChange = ((await packets()) - baseStart) / (2 * MOVES);
  const baseMinutes = (Date.now() - baseT) / 60_000;

  const child = spawn(
    process.execPath,
    [
      // ZKRX_CONSOLE_CPU_PROF=<dir>: the console's CPU profile, written there when it stops.
      ...(process.env.ZKRX_CONSOLE_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.ZKRX_CONSOLE_CPU_PROF}`]
        : []),
      '--conditions=@zkrx/source',
      '--import',
      'tsx',
      new URL('./console-process.ts', import.meta.url).pathname,
      hostPort,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve) =>
    child.stdout.once('data', (chunk) => resolve(String(chunk).trim())),
  );
  const idleRss = rssOf(child.pid as number);
  const browser = await launchBrowser();
  try {
    // The tree: its first page (50 rows of 1,000 folders), and a folder opened, cost what the
    // page shows — never a walk of the 100,000 nodes.
    // A browser running already, as a user's is: one page of the console opened and closed
    // first (Chromium's first renderer, and the page's script fetched and compiled once), so a
    // first view below is the console's, not the browser's start. What that first page took is
    // reported beside (`browserWarmUp`).
    const warmUp = await browser.page();
    let started = Date.now();
    await warmUp.goto(new URL('history', url).href);
    await warmUp.waitForFunction(() => document.body.dataset.firstDrawMs !== undefined, undefined, {
      timeout: 120_000,
    });
    const browserWarmUp = { ms: Date.now() - started, ...(await warmUp.evaluate(pageTimes)) };
    await warmUp.close();
    const watchCount = async () => Number((await mntr(hostPort)).zk_watch_count);
    const treeWatchesBefore = await watchCount();
    const treePacketsBefore = await packets();
    const treePage = await browser.page();
    started = Date.now();
    await treePage.goto(new URL(`locks?path=${encodeURIComponent(tree)}`, url).href);
    await treePage.waitForFunction(
      (rows) =>
        document.querySelectorAll('ul.folders li').length +
          document.querySelectorAll('section.lock').length ===
          rows && !document.querySelector('ul.folders li .muted')?.textContent?.includes('…'),
      Math.min(50, folders.length),
      { timeout: 120_000 },
    );
    const treeFirstViewMs = Date.now() - started;
    const treeTimes = await treePage.evaluate(pageTimes);
    const treeWatchesOpen = (await watchCount()) - treeWatchesBefore;
    const treePacketsFirstView = (await packets()) - treePacketsBefore;
    const treeRss = rssOf(child.pid as number);
    started = Date.now();
    await treePage.goto(
      new URL(`locks?path=${encodeURIComponent(folders.at(-1) as string)}`, url).href,
    );
    await treePage.waitForFunction(
      () => document.querySelectorAll('ul.folders li').length === 50,
      undefined,
      { timeout: 120_000 },
    );
    const treeFolderViewMs = Date.now() - started;
    await treePage.close();
    // Let go with the page: the console's watches of the tree end, the one-shot child watches
    // removed from the server (waited for, up to 10 s).
    for (let waited = 0; waited < 10_000 && (await watchCount()) > treeWatchesBefore; waited += 100)
      await sleep(100);
    const treeWatchesAfterClose = (await watchCount()) - treeWatchesBefore;

    const watchesBefore = await watches();
    const fleetPage = await browser.page();
    started = Date.now();
    await fleetPage.goto(new URL(`partitions?path=${encodeURIComponent(fleet)}`, url).href);
    // The first screen: every item listed, the first rows with their owners.
    await fleetPage
      .waitForFunction(
        (count) =>
          document.getElementById('shown')?.textContent === `${count} of ${count} items` &&
          document
            .querySelector('.item-row[data-item] .c-owner')
            ?.textContent?.startsWith('member-') === true,
        ITEMS,
        { timeout: 120_000 },
      )
      .catch(async (error) => {
        console.log(((await fleetPage.locator('body').textContent()) ?? '').slice(0, 2000));
        throw error;
      });
    const fleetFirst = Date.now() - started;
    await fleetPage.waitForFunction(
      () => document.body.dataset.fleetComplete === 'true',
      undefined,
      {
        timeout: 300_000,
      },
    );
    const fleetComplete = Date.now() - started;
    const fleetNavigation = await fleetPage.evaluate(() => ({
      drawn: Number(document.body.dataset.firstDrawMs),
      // The console sent its first message (since the navigation began, this machine's clock).
      sent: Math.round(Number(document.body.dataset.firstFleetSentAt) - performance.timeOrigin),
      script: Number(document.body.dataset.scriptMs),
      me: Number(document.body.dataset.meMs),
      messageIn: Number(document.body.dataset.firstMessageMs),
      fetchStart: Math.round(performance.getEntriesByType('navigation')[0]?.startTime ?? 0),
      responseEnd: Math.round(
        (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming).responseEnd,
      ),
    }));
    // A second page of the same fleet: the console watches it already.
    const warmPage = await browser.page();
    started = Date.now();
    await warmPage.goto(new URL(`partitions?path=${encodeURIComponent(fleet)}`, url).href);
    await warmPage.waitForFunction(
      (count) => document.getElementById('shown')?.textContent === `${count} of ${count} items`,
      ITEMS,
      { timeout: 120_000 },
    );
    const fleetWarm = Date.now() - started;
    const fleetWarmFirstMessage = await warmPage.evaluate(pageTimes);
    await warmPage.close();
    const lockPage = await browser.page();
    started = Date.now();
    await lockPage.goto(new URL(`locks?path=${encodeURIComponent(lock)}`, url).href);
    // The first view: the holder, the rows in view of the queue, and the count of all.
    await lockPage
      .waitForFunction(
        ({ holder, count }) =>
          document.querySelector(`tr.holder[data-node="${holder}"]`) !== null &&
          document.querySelectorAll('tr.waiter').length >= 20 &&
          document.querySelector('section.lock h3')?.textContent?.includes(`${count} waiting`) ===
            true,
        { holder: queue[0]?.node as string, count: queue.length - 1 },
        { timeout: 120_000 },
      )
      .catch(async (error) => {
        console.log(((await lockPage.locator('body').textContent()) ?? '').slice(0, 3000));
        throw error;
      });
    const lockFirst = Date.now() - started;
    const lockTimes = await lockPage.evaluate(pageTimes);
    const openRss = rssOf(child.pid as number);
    const watchesOpen = await watches();

    // Let the console's catch-up reads end (the watch's walk, the fleet read again after it)
    // before the window: a settled console's packets are what is measured.
    for (let last = await packets(); ; ) {
      await sleep(2_000);
      const now = await packets();
      if (now - last < 100) break;
      last = now;
    }
    const openWatchCount = Number((await mntr(hostPort)).zk_watch_count);
    const moveLatency: number[] = [];
    const moveParts = { console: [] as number[], toPage: [] as number[], draw: [] as number[] };
    const handOverLatency: number[] = [];
    const openStart = await packets();
    const openT = Date.now();
    /** A move drawn on the fleet page: from the write's reply to the row drawn, and its parts. */
    const measureMove = async (before?: () => Promise<void>) => {
      const item = items[(moved * 97) % items.length] as string;
      await fleetPage.fill('input[type=search]', item);
      await fleetPage.waitForFunction(
        (name) => document.querySelector(`.item-row[data-item="${name}"]`) !== null,
        item,
      );
      const next = ids[((owners.get(item)?.member ?? 0) + 1) % MEMBERS] as string;
      const seenMove = await renderedAt(fleetPage, `.item-row[data-item="${item}"] .c-owner`, next);
      await before?.();
      const moveDone = await move();
      const drawnAt = await seenMove();
      return { latency: Math.max(0, drawnAt - moveDone.at), at: moveDone.at, drawnAt };
    };
    for (let index = 0; index < MOVES; index++) {
      const { latency, at, drawnAt } = await measureMove();
      moveLatency.push(latency);
      // Where the move's time went: the console's share (the write's reply to its message
      // sent), the message's way to the page, the page's draw.
      const { sentAt, inAt } = await fleetPage.evaluate(() => ({
        sentAt: Number(document.body.dataset.fleetSentAt),
        inAt: Number(document.body.dataset.fleetInAt),
      }));
      moveParts.console.push(Math.max(0, sentAt - at));
      moveParts.toPage.push(Math.max(0, inAt - sentAt));
      moveParts.draw.push(Math.max(0, drawnAt - inAt));
      const nextNode = queue[1]?.node as string;
      const seenHandOver = await renderedAt(lockPage, `tr.holder[data-node="${nextNode}"]`);
      const handed = await handOver();
      handOverLatency.push((await seenHandOver()) - handed.at);
      await sleep(500);
    }
    const openPerChange = ((await packets()) - openStart) / (2 * MOVES);
    const openMinutes = (Date.now() - openT) / 60_000;
    // A member joins (its node made) and an item moves at once: the join's reads are under way
    // while the move is drawn; then the member leaves again.
    const joinMoveLatency: number[] = [];
    const joinStart = await packets();
    for (let index = 0; index < JOIN_MOVES; index++) {
      const joiner = `${fleet}/members/joiner-${index}`;
      const { latency } = await measureMove(async () => {
        await admin.promises.create(joiner, `joiner-${index}:1`, { mode: 'ephemeral' });
      });
      joinMoveLatency.push(latency);
      await admin.promises.delete(joiner);
      await sleep(500);
    }
    // A join and a leave with a move each, less the move's share of a change measured above.
    const packetsPerJoin =
      JOIN_MOVES > 0 ? ((await packets()) - joinStart) / JOIN_MOVES - openPerChange : undefined;
    const busyRss = rssOf(child.pid as number);
    const latencies = (values: number[]) => ({
      median: quantile(values, 0.5),
      p99: quantile(values, 0.99),
      max: Math.max(...values),
      samples: values.length,
    });
    const results = {
      browserWarmUp,
      tree: {
        nodes: treeNodes,
        firstViewMs: treeFirstViewMs,
        pageTimings: treeTimes,
        folderViewMs: treeFolderViewMs,
        serverWatchesAdded: treeWatchesOpen,
        serverWatchesAfterClose: treeWatchesAfterClose,
        packetsForFirstView: treePacketsFirstView,
        consoleRssMiB: Math.round(treeRss),
      },
      items: ITEMS,
      members: MEMBERS,
      waiters: WAITERS,
      inspectFleetMs,
      inspectLockMs,
      fleetFirstViewMs: fleetFirst,
      fleetPageTimings: fleetNavigation,
      fleetAllOwnersMs: fleetComplete,
      fleetSecondPageMs: fleetWarm,
      fleetSecondPageTimings: fleetWarmFirstMessage,
      lockFirstViewMs: lockFirst,
      lockPageTimings: lockTimes,
      moveLatencyMs: latencies(moveLatency),
      moveLatencyPartsMs: {
        console: latencies(moveParts.console),
        toPage: latencies(moveParts.toPage),
        draw: latencies(moveParts.draw),
      },
      moveWhileJoiningLatencyMs: JOIN_MOVES > 0 ? latencies(joinMoveLatency) : undefined,
      // The server's packets for one member joining and leaving, with the console open.
      packetsPerJoinAndLeave: packetsPerJoin === undefined ? undefined : Math.round(packetsPerJoin),
      handOverLatencyMs: latencies(handOverLatency),
      consoleRssMiB: {
        idle: Math.round(idleRss),
        open: Math.round(openRss),
        afterUpdates: Math.round(busyRss),
      },
      serverWatches: { before: watchesBefore, open: watchesOpen, mntrWatchCount: openWatchCount },
      // The server's packets per change (a move, a hand-over: half each), without and with the
      // console open; the console's own, and per minute at this run's rate of changes.
      packetsPerChange: {
        withoutConsole: Math.round(basePerChange),
        withConsole: Math.round(openPerChange),
        console: Math.round(openPerChange - basePerChange),
      },
      changesPerMinute: Math.round((2 * MOVES) / openMinutes),
      consolePacketsPerMinute: Math.round(
        ((openPerChange - basePerChange) * 2 * MOVES) / openMinutes,
      ),
      baselineMinutes: Number(baseMinutes.toFixed(2)),
    };
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await browser.close();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    // Its CPU profile (if asked for) is written as it exits: before the server goes.
    await Promise.race([exited, sleep(10_000)]);
  }
} finally {
  await Promise.all(clients.map((client) => client.close()));
  await server.close();
}
