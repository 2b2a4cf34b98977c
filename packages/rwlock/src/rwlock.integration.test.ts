import { acquire } from '@zkrx/lock';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  sleep,
  untilEmpty,
} from '@zkrx/test-support';
import { expireSession, mntr, testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import {
  acquireRead,
  acquireWrite,
  type Lease,
  LockLostError,
  LockTimeoutError,
  LockUpgradeError,
  lockKinds,
  readLock,
  tryAcquireRead,
  tryAcquireWrite,
  writeLock,
} from './index';

/** Readers and writers on one log: a writer may never overlap anyone. */
class ReadWriteLog {
  readers = 0;
  writers = 0;
  maxReaders = 0;
  readonly violations: string[] = [];
  enter(kind: 'read' | 'write', who: string): void {
    if (kind === 'read') {
      this.readers += 1;
      this.maxReaders = Math.max(this.maxReaders, this.readers);
      if (this.writers > 0) this.violations.push(`${who} read while a writer held`);
    } else {
      this.writers += 1;
      if (this.writers > 1 || this.readers > 0)
        this.violations.push(`${who} wrote alongside others`);
    }
  }
  exit(kind: 'read' | 'write'): void {
    if (kind === 'read') this.readers -= 1;
    else this.writers -= 1;
  }
}

describe('read-write lock', () => {
  it('10 readers and 4 writers: no writer overlaps anyone, readers do overlap', async () => {
    const readers = await connectedClients(10);
    const writers = await connectedClients(4);
    const path = lockPath('rw');
    const log = new ReadWriteLog();
    let writes = 0;
    let reads = 0;
    const loop = async (
      client: (typeof readers)[number],
      kind: 'read' | 'write',
      who: string,
      rounds: number,
    ) => {
      for (let round = 0; round < rounds; round++) {
        const lease =
          kind === 'read' ? await acquireRead(client, path) : await acquireWrite(client, path);
        log.enter(kind, who);
        await sleep(kind === 'read' ? 3 : 1);
        log.exit(kind);
        if (kind === 'read') reads += 1;
        else writes += 1;
        await lease.release();
      }
    };
    // Readers share: two hold together before anyone writes (the mix below need not show it —
    // how often readers meet there is the machine's pace).
    const together = await Promise.all([
      acquireRead(readers[0]!, path),
      acquireRead(readers[1]!, path),
    ]);
    log.enter('read', 'r0');
    log.enter('read', 'r1');
    log.exit('read');
    log.exit('read');
    for (const lease of together) await lease.release();
    await Promise.all([
      ...readers.map((client, index) => loop(client, 'read', `r${index}`, 30)),
      ...writers.map((client, index) => loop(client, 'write', `w${index}`, 25)),
    ]);
    expect(log.violations).toEqual([]);
    expect(reads).toBe(300);
    expect(writes).toBe(100);
    expect(log.maxReaders).toBeGreaterThan(1);
    // The others' last releases finish in the background: this session's listing may come first.
    await untilEmpty(readers[0]!, path);
  });

  it('is fair: a writer queued behind readers gets in before readers queued after it', async () => {
    const [a, b, c] = await connectedClients(3);
    const path = lockPath('rw');
    const order: string[] = [];
    const firstReader = await acquireRead(a!, path);
    const writer = acquireWrite(b!, path).then((lease) => {
      order.push('writer');
      return lease;
    });
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    const lateReader = acquireRead(c!, path).then((lease) => {
      order.push('late reader');
      return lease;
    });
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 3);
    await sleep(100);
    expect(order).toEqual([]);
    await firstReader.release();
    const writeLease = await writer;
    await sleep(100);
    expect(order).toEqual(['writer']);
    await writeLease.release();
    await (await lateReader).release();
    expect(order).toEqual(['writer', 'late reader']);
  });

  it('a release wakes only the clients it lets in: the readers behind a writer, not the writers behind them', async () => {
    const { connectString } = await testZooKeeper();
    const holder = await connectedClient({ sessionTimeoutMs: 10_000 });
    const readers = await connectedClients(20, { sessionTimeoutMs: 10_000 });
    const writers = await connectedClients(2, { sessionTimeoutMs: 10_000 });
    const path = lockPath('rw');
    const first = await acquireWrite(holder, path);
    const readLeases: Lease[] = [];
    for (const reader of readers) {
      acquireRead(reader, path).then(
        (lease) => readLeases.push(lease),
        () => {},
      );
    }
    await vi.waitUntil(async () => (await childrenOf(holder, path)).length === 21, {
      timeout: 10_000,
    });
    const writeLeases: Lease[] = [];
    for (const writer of writers) {
      acquireWrite(writer, path).then(
        (lease) => writeLeases.push(lease),
        () => {},
      );
      await vi.waitUntil(
        async () =>
          (await childrenOf(holder, path)).length ===
          22 + writeLeases.length + writers.indexOf(writer),
      );
    }
    await vi.waitUntil(async () => Number((await mntr(connectString)).zk_watch_count) >= 22);
    const before = await mntr(connectString);
    await first.release();
    await vi.waitUntil(() => readLeases.length === 20);
    await sleep(50);
    const after = await mntr(connectString);
    // Every reader's watch fired (each could go in); the writers' watches are untouched (and
    // nobody listens to these leases' ends: no node is watched by its owner).
    expect(Number(before.zk_watch_count) - Number(after.zk_watch_count)).toBe(20);
    expect(writeLeases).toHaveLength(0);
    for (const lease of readLeases) await lease.release();
    await vi.waitUntil(() => writeLeases.length === 1);
    await writeLeases[0]!.release();
    await vi.waitUntil(() => writeLeases.length === 2);
    await writeLeases[1]!.release();
    await untilEmpty(holder, path);
  });

  it('signals LockLostError to a reader and to a writer whose session expires', async () => {
    const [reader, writer, other] = await connectedClients(3);
    const path = lockPath('rw');
    const readErrors: unknown[] = [];
    readLock(reader!, path).subscribe({ error: (error: unknown) => readErrors.push(error) });
    await vi.waitUntil(async () => (await childrenOf(other!, path)).length === 1);
    await expireSession(reader!);
    await vi.waitUntil(() => readErrors.length === 1);
    expect(readErrors[0]).toBeInstanceOf(LockLostError);

    const writeErrors: unknown[] = [];
    writeLock(writer!, path).subscribe({ error: (error: unknown) => writeErrors.push(error) });
    await vi.waitUntil(async () => (await childrenOf(other!, path)).length === 1);
    const next = acquireRead(other!, path);
    await expireSession(writer!);
    await vi.waitUntil(() => writeErrors.length === 1);
    expect(writeErrors[0]).toBeInstanceOf(LockLostError);
    await (await next).release();
  });

  it('adopts its own node after a connection loss during the create (one node, no double hold)', async () => {
    const { client: writer, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const reader = await connectedClient();
    const path = lockPath('rw');
    const blocker = await acquireRead(reader, path);
    proxy.holdReplies();
    const pending = acquireWrite(writer, path);
    // The write node is created on the server; its reply is lost with the connection.
    await vi.waitUntil(async () => (await childrenOf(reader, path)).length === 2);
    proxy.cut();
    proxy.holdReplies(false);
    await sleep(300);
    expect(await childrenOf(reader, path)).toHaveLength(2);
    await blocker.release();
    const lease = await pending;
    expect(await childrenOf(reader, path)).toEqual([lease.node.split('/').at(-1)]);
    expect(await tryAcquireRead(reader, path)).toBeNull();
    await lease.release();
    await untilEmpty(reader, path);
  });

  it('times out and unsubscribes leaving no node behind', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('rw');
    const writer = await acquireWrite(a!, path);
    await expect(acquireRead(b!, path, { timeoutMs: 200 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    await expect(acquireWrite(b!, path, { timeoutMs: 200 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    const waiting = readLock(b!, path).subscribe();
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    waiting.unsubscribe();
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 1);
    expect(await tryAcquireRead(b!, path)).toBeNull();
    expect(await tryAcquireWrite(b!, path)).toBeNull();
    expect(await childrenOf(a!, path)).toHaveLength(1);
    await writer.release();
  });

  it('downgrades: the write holder takes the read lock at once, and no writer slips in when it releases write', async () => {
    const [a, b, c] = await connectedClients(3);
    const path = lockPath('rw');
    const order: string[] = [];
    const write = await acquireWrite(a!, path);
    const queuedWriter = acquireWrite(b!, path).then((lease) => {
      order.push('writer');
      return lease;
    });
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    const queuedReader = acquireRead(c!, path).then((lease) => {
      order.push('reader');
      return lease;
    });
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 3);
    const read = await write.run(() => acquireRead(a!, path, { timeoutMs: 20_000 }));
    expect(read.node).not.toBe(write.node);
    await write.release();
    // The downgraded read still holds: the queued writer (and the reader behind it) wait.
    await sleep(200);
    expect(order).toEqual([]);
    await read.release();
    const writeLease = await queuedWriter;
    await sleep(100);
    expect(order).toEqual(['writer']);
    await writeLease.release();
    await (await queuedReader).release();
    expect(order).toEqual(['writer', 'reader']);
    await untilEmpty(a!, path);
  });

  it('refuses an upgrade at once with LockUpgradeError, creating nothing', async () => {
    const client = await connectedClient();
    const path = lockPath('rw');
    const read = await acquireRead(client, path);
    await read.run(async () => {
      await expect(acquireWrite(client, path)).rejects.toBeInstanceOf(LockUpgradeError);
      const errors: unknown[] = [];
      writeLock(client, path).subscribe({ error: (error: unknown) => errors.push(error) });
      await vi.waitUntil(() => errors.length === 1);
      expect(errors[0]).toBeInstanceOf(LockUpgradeError);
    });
    expect(await childrenOf(client, path)).toHaveLength(1);
    await read.release();
  });

  it('lockKinds are the locks of a path by kind: the same locks as their functions, re-entrant across forms', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('rw');
    const reader = await lockKinds.read.acquire(a!, path);
    // Readers share; the write lock and the mutex of the path wait for a reader.
    const other = await tryAcquireRead(b!, path);
    expect(other?.isHeld).toBe(true);
    expect(await lockKinds.write.tryAcquire(b!, path)).toBeNull();
    expect(await lockKinds.mutex.tryAcquire(b!, path)).toBeNull();
    await other!.release();
    await reader.release();
    // The mutex by kind is the mutex: taken again in a context holding it, it re-enters.
    const held = await acquire(a!, path);
    await held.run(async () => {
      const again = await lockKinds.mutex.acquire(a!, path);
      expect(again.node).toBe(held.node);
      await again.release();
    });
    await held.release();
    expect(Object.keys(lockKinds)).toEqual(['mutex', 'read', 'write']);
    await untilEmpty(a!, path);
  });
});
