/**
 * ZkTestingModule, without ZooKeeper: locks granted in memory, leadership and items as the test
 * decides, every loss at its call — what a user's unit tests rely on.
 */
import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { isZkError, op, ZkErrorCode } from '@zkrx/core';
import type { OwnedItem } from '@zkrx/fleet';
import { LockLostError, LockTimeoutError } from '@zkrx/lock';
import { afterEach, describe, expect, it } from 'vitest';
import { FleetService, ForEachOwnedItem } from '../fleet';
import {
  currentLock,
  LeaderOnly,
  LeaderService,
  Locked,
  leaderSignal,
  lockSignal,
  ZK_CLIENT,
} from '../index';
import { ZkTesting, ZkTestingModule } from '../testing';

@Injectable()
class Orders {
  readonly signals: AbortSignal[] = [];
  release: () => void = () => {};
  gate: Promise<void> = Promise.resolve();

  @Locked((orderId: string) => `/locks/orders/${orderId}`, { timeoutMs: 20 })
  async ship(_orderId: string): Promise<number> {
    return currentLock()!.fencingToken;
  }

  @Locked('/locks/reindex', { mode: 'skip' })
  async reindex(): Promise<string> {
    return 'reindexed';
  }

  @Locked('/locks/ledger')
  async post(): Promise<void> {
    this.signals.push(lockSignal()!);
    await new Promise<void>((resolve) => {
      this.release = resolve;
    });
  }

  @LeaderOnly('/election/reports')
  report(): AbortSignal | undefined {
    return leaderSignal();
  }

  @ForEachOwnedItem('/fleet/tenants', { items: ['acme', 'globex', 'initech'] })
  async sync(tenant: string, owned: OwnedItem): Promise<string> {
    await this.gate;
    owned.signal.throwIfAborted(); // moved away meanwhile: stop
    await owned.guard([op.set(`/tenants/${tenant}`, 'synced')]);
    return `${tenant}@${owned.fencingToken}`;
  }
}

let app: TestingModule | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(
  options: Parameters<typeof ZkTestingModule.forRoot>[0] = {},
): Promise<{ orders: Orders; testing: ZkTesting; app: TestingModule }> {
  app = await Test.createTestingModule({
    imports: [ZkTestingModule.forRoot(options)],
    providers: [Orders, FleetService],
  }).compile();
  await app.init();
  return { orders: app.get(Orders), testing: app.get(ZkTesting), app };
}

describe('ZkTestingModule', () => {
  it('grants locks at once; a lock taken elsewhere waits, skips or times out', async () => {
    const { orders, testing } = await start();
    expect(await orders.ship('42')).toBeGreaterThan(0);
    const release = testing.takeLock('/locks/orders/42');
    await expect(orders.ship('42')).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await orders.ship('43')).toBeGreaterThan(0);
    const releaseReindex = testing.takeLock('/locks/reindex');
    expect(await orders.reindex()).toBeUndefined();
    releaseReindex();
    expect(await orders.reindex()).toBe('reindexed');
    release();
    expect(await orders.ship('42')).toBeGreaterThan(0);
  });

  it('loses a lock, or the connection, when the test says', async () => {
    const { orders, testing } = await start();
    const posting = orders.post();
    await new Promise((resolve) => setImmediate(resolve));
    expect(testing.heldLocks()).toEqual(['/locks/ledger']);
    testing.loseLock('/locks/ledger');
    await expect(posting).rejects.toBeInstanceOf(LockLostError);
    expect(orders.signals[0]?.reason).toBeInstanceOf(LockLostError);
    orders.release();

    testing.disconnect();
    await expect(orders.ship('42')).rejects.toSatisfy((error: unknown) =>
      isZkError(error, ZkErrorCode.ConnectionLoss),
    );
    testing.reconnect();
    expect(await orders.ship('42')).toBeGreaterThan(0);
  });

  it('leads by default; leadership lost and back as the test says', async () => {
    const { orders, testing, app } = await start();
    const leaders = app.get(LeaderService);
    expect(leaders.isLeader('/election/reports')).toBe(true);
    const signal = orders.report();
    expect(signal?.aborted).toBe(false);
    testing.loseLeadership('/election/reports');
    expect(signal?.aborted).toBe(true);
    expect(orders.report()).toBeUndefined();
    testing.lead('/election/reports');
    expect(orders.report()?.aborted).toBe(false);
  });

  it("with leading: false, waits as @zkrx/leader's election does: whenLeader once the test leads, leave() after the runs", async () => {
    const { testing, app } = await start({ leading: false });
    const leaders = app.get(LeaderService);
    const path = '/election/reports';
    const leads = leaders.whenLeader(path);
    let led = false;
    void leads.then(() => {
      led = true;
    });
    await Promise.resolve();
    expect(led).toBe(false);
    testing.lead(path);
    const term = await leads;
    expect(term.aborted).toBe(false);
    // A run in flight holds the leaving back; the term's signal aborts at once.
    let finish: () => void = () => {};
    const running = leaders.runIfLeader(
      path,
      () => new Promise<void>((resolve) => (finish = resolve)),
    );
    let left = false;
    const leaving = leaders.leave(path).then(() => {
      left = true;
    });
    expect(term.aborted).toBe(true);
    await Promise.resolve();
    expect(left).toBe(false);
    finish();
    await running;
    await leaving;
    expect(left).toBe(true);
    expect(leaders.isLeader(path)).toBe(false);
  });

  it('owns every item by default; items assigned and moved as the test says', async () => {
    const { orders, testing } = await start();
    const run = () => (orders.sync as unknown as () => Promise<Map<string, string>>)();
    expect([...(await run()).keys()]).toEqual(['acme', 'globex', 'initech']);
    testing.assign('/fleet/tenants', ['globex']);
    expect([...(await run()).keys()]).toEqual(['globex']);
    testing.loseItem('/fleet/tenants', 'globex');
    expect(await run()).toEqual(new Map());
    expect(testing.guarded.map(({ path }) => path)).toEqual([
      '/fleet/tenants/items/acme',
      '/fleet/tenants/items/globex',
      '/fleet/tenants/items/initech',
      '/fleet/tenants/items/globex',
    ]);
  });

  it('a run that stops because its item moved away is not a failure', async () => {
    const { orders, testing } = await start();
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    orders.gate = stopped;
    const run = (orders.sync as unknown as () => Promise<Map<string, string>>)();
    await new Promise((resolve) => setImmediate(resolve));
    testing.loseItem('/fleet/tenants', 'globex');
    stop();
    expect([...(await run).keys()]).toEqual(['acme', 'initech']);
  });

  it('has no ZooKeeper client: using one says so', async () => {
    const { app } = await start();
    const client = app.get(ZK_CLIENT);
    expect(() => client.promises).toThrow(/ZkTestingModule has no ZooKeeper/);
  });
});
