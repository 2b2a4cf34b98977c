import { SpanStatusCode } from '@opentelemetry/api';
import { op } from '@zkrx/core';
import {
  connectedClient,
  connectedClients,
  lockPath,
  recordTelemetry,
  type TelemetryRecorder,
} from '@zkrx/test-support';
import { expireSession } from '@zkrx/testing';
import { firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acquire,
  acquireAll,
  acquireSemaphore,
  LeaseReleasedError,
  LockTimeoutError,
  tryAcquire,
} from './index';

let telemetry: TelemetryRecorder;
beforeAll(() => {
  telemetry = recordTelemetry();
});
afterAll(async () => {
  await telemetry.stop();
});

let names = 0;
/** A lock name of this test alone: the metrics' totals under it start at zero. */
function uniqueName(): string {
  names += 1;
  return `telemetry-${process.pid}-${names}`;
}

describe('telemetry', () => {
  it('records an acquire (outcome acquired) and a hold (ended released), with a span', async () => {
    const client = await connectedClient();
    const name = uniqueName();
    const path = lockPath();
    const lease = await acquire(client, path, { name });
    const named = { 'zkrx.lock.kind': 'mutex', 'zkrx.lock.name': name, 'zkrx.lock.path': path };
    expect(await telemetry.total('zkrx.lock.holders', named)).toBe(1);
    expect(await telemetry.total('zkrx.lock.waiters', named)).toBe(0);
    await lease.release();

    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        ...named,
        'zkrx.lock.outcome': 'acquired',
      }),
    ).toBe(1);
    expect(
      await telemetry.total('zkrx.lock.hold.duration', {
        ...named,
        'zkrx.lock.hold.end': 'released',
      }),
    ).toBe(1);
    expect(await telemetry.total('zkrx.lock.holders', named)).toBe(0);
    const [point] = (await telemetry.points('zkrx.lock.acquire.duration')).filter(
      (entry) => entry.attributes['zkrx.lock.name'] === name,
    );
    expect(typeof point?.value === 'object' && point.value.count).toBe(1);

    const span = telemetry
      .spans('zkrx.lock.acquire')
      .find((entry) => entry.attributes['zkrx.lock.name'] === name);
    expect(span?.attributes).toMatchObject({ ...named, 'zkrx.lock.outcome': 'acquired' });
    expect(span?.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it('records outcome timeout, and a try-once that finds the lock taken as busy', async () => {
    const [a, b] = await connectedClients(2);
    const name = uniqueName();
    const path = lockPath();
    const held = await acquire(a!, path, { name });
    await expect(acquire(b!, path, { name, timeoutMs: 50 })).rejects.toBeInstanceOf(
      LockTimeoutError,
    );
    expect(await tryAcquire(b!, path, { name })).toBeNull();
    await held.release();

    const match = { 'zkrx.lock.name': name };
    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        ...match,
        'zkrx.lock.outcome': 'timeout',
      }),
    ).toBe(1);
    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        ...match,
        'zkrx.lock.outcome': 'busy',
      }),
    ).toBe(1);
    expect(await telemetry.total('zkrx.lock.waiters', match)).toBe(0);
    const timedOut = telemetry
      .spans('zkrx.lock.acquire')
      .find(
        (span) =>
          span.attributes['zkrx.lock.name'] === name &&
          span.attributes['zkrx.lock.outcome'] === 'timeout',
      );
    expect(timedOut?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('counts a waiter while it waits, then it holds; both return to 0', async () => {
    const [a, b] = await connectedClients(2);
    const name = uniqueName();
    const path = lockPath();
    const match = { 'zkrx.lock.name': name };
    const first = await acquire(a!, path, { name });
    let queued!: () => void;
    const isQueued = new Promise<void>((resolve) => {
      queued = resolve;
    });
    const second = acquire(b!, path, { name, onQueued: () => queued() });
    await isQueued;
    expect(await telemetry.total('zkrx.lock.waiters', match)).toBe(1);
    expect(await telemetry.total('zkrx.lock.holders', match)).toBe(1);
    await first.release();
    const next = await second;
    expect(await telemetry.total('zkrx.lock.waiters', match)).toBe(0);
    expect(await telemetry.total('zkrx.lock.holders', match)).toBe(1);
    await next.release();
    expect(await telemetry.total('zkrx.lock.holders', match)).toBe(0);
    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        ...match,
        'zkrx.lock.outcome': 'acquired',
      }),
    ).toBe(2);
  });

  it('records a loss by reason, and the hold as ended lost', async () => {
    const client = await connectedClient();
    const name = uniqueName();
    const lease = await acquire(client, lockPath(), { name });
    const lostFirst = firstValueFrom(lease.lost$);
    await expireSession(client);
    const lost = await lostFirst;
    const match = { 'zkrx.lock.name': name };
    expect(
      await telemetry.total('zkrx.lock.losses', { ...match, 'zkrx.lock.loss.reason': lost.reason }),
    ).toBe(1);
    expect(await telemetry.total('zkrx.lock.losses', match)).toBe(1);
    expect(
      await telemetry.total('zkrx.lock.hold.duration', { ...match, 'zkrx.lock.hold.end': 'lost' }),
    ).toBe(1);
    expect(await telemetry.total('zkrx.lock.holders', match)).toBe(0);
  });

  it('makes a span around each guarded write, with an error status when it fails', async () => {
    const client = await connectedClient();
    const name = uniqueName();
    const path = lockPath();
    const lease = await acquire(client, path, { name });
    await lease.guard([op.create(`${path}-data`, 'x'), op.delete(`${path}-data`)]);
    await lease.release();
    await expect(lease.guard([op.create(`${path}-data`, 'x')])).rejects.toBeInstanceOf(
      LeaseReleasedError,
    );
    const spans = telemetry
      .spans('zkrx.lock.guard')
      .filter((span) => span.attributes['zkrx.lock.name'] === name);
    expect(spans.map((span) => span.attributes['zkrx.lock.guard.ops'])).toEqual([2, 1]);
    expect(spans.map((span) => span.status.code)).toEqual([
      SpanStatusCode.UNSET,
      SpanStatusCode.ERROR,
    ]);
    expect(spans[1]?.attributes['error.type']).toBe('LeaseReleased');
    expect(spans[0]?.attributes['zkrx.lock.path']).toBe(path);
  });

  it('names the semaphore and the multi-lock by kind', async () => {
    const client = await connectedClient();
    const name = uniqueName();
    const slot = await acquireSemaphore(client, lockPath(), { leases: 2, name });
    const both = await acquireAll(client, [lockPath(), lockPath()], { name });
    await both.guard([op.check('/')]);
    await both.release();
    await slot.release();
    const acquired = async (kind: string) =>
      telemetry.total('zkrx.lock.acquire.duration', {
        'zkrx.lock.name': name,
        'zkrx.lock.kind': kind,
        'zkrx.lock.outcome': 'acquired',
      });
    expect(await acquired('semaphore')).toBe(1);
    expect(await acquired('multi')).toBe(1);
    expect(await acquired('mutex')).toBe(2);
    expect(await telemetry.total('zkrx.lock.holders', { 'zkrx.lock.name': name })).toBe(0);
    const guard = telemetry
      .spans('zkrx.lock.guard')
      .find((span) => span.attributes['zkrx.lock.name'] === name);
    expect(guard?.attributes['zkrx.lock.kind']).toBe('multi');
    // The multi-lock's own locks are acquired inside its span (where a context manager runs).
    expect(
      telemetry
        .spans('zkrx.lock.acquire')
        .filter((span) => span.attributes['zkrx.lock.name'] === name)
        .map((span) => span.attributes['zkrx.lock.kind'])
        .sort(),
    ).toEqual(['multi', 'mutex', 'mutex', 'semaphore']);
  });

  it('leaves the path out of every attribute unless the lock is named', async () => {
    const client = await connectedClient();
    const path = lockPath();
    const lease = await acquire(client, path);
    await lease.guard([op.check('/')]);
    await lease.release();
    for (const metric of [
      'zkrx.lock.acquire.duration',
      'zkrx.lock.hold.duration',
      'zkrx.lock.holders',
      'zkrx.lock.waiters',
    ]) {
      const points = await telemetry.points(metric);
      expect(points.length).toBeGreaterThan(0);
      for (const point of points) {
        if (point.attributes['zkrx.lock.name'] === undefined) {
          expect(point.attributes['zkrx.lock.path']).toBeUndefined();
        } else {
          expect(point.attributes['zkrx.lock.path']).toBeDefined();
        }
      }
    }
    const values = [...telemetry.spans('zkrx.lock.acquire'), ...telemetry.spans('zkrx.lock.guard')]
      .flatMap((span) => Object.values(span.attributes))
      .filter((value) => value === path);
    expect(values).toEqual([]);
    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        'zkrx.lock.kind': 'mutex',
        'zkrx.lock.outcome': 'acquired',
      }),
    ).toBeGreaterThan(0);
  });
});
