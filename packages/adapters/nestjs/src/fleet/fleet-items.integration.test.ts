/**
 * @ForEachOwnedItem over items from a provider (a repository the class injects, read when the
 * application starts): at most `concurrency` items at once, no item beside its own previous
 * run, every failure reported.
 */
import { Injectable } from '@nestjs/common';
import type { OwnedItem } from '@zkrx/fleet';
import { deferred } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { startApp } from '../../test/nest-apps';
import { FleetService, ForEachOwnedItem, OwnedItemsError } from '../fleet';

const tenantIds = Array.from({ length: 12 }, (_, index) => `tenant-${index}`);

/** A repository of tenants, as an application would inject one. */
class TenantRepository {
  reads = 0;

  async activeIds(): Promise<string[]> {
    this.reads += 1;
    return tenantIds;
  }
}

function tenantSync(path: string) {
  @Injectable()
  class TenantSync {
    gate = deferred<void>();
    running = 0;
    mostAtOnce = 0;
    readonly runs: string[] = [];
    readonly failing = new Set<string>();

    constructor(readonly tenants: TenantRepository) {}

    @ForEachOwnedItem(path, (self: TenantSync) => ({
      items: () => self.tenants.activeIds(),
      concurrency: 3,
    }))
    async sync(tenant: string, owned: OwnedItem): Promise<string> {
      this.runs.push(tenant);
      this.running += 1;
      this.mostAtOnce = Math.max(this.mostAtOnce, this.running);
      try {
        await this.gate.promise;
        if (this.failing.has(tenant)) throw new Error(`${tenant} failed`);
        return `${tenant}@${owned.fencingToken}`;
      } finally {
        this.running -= 1;
      }
    }
  }
  return TenantSync;
}

describe('@ForEachOwnedItem with items from a provider', () => {
  it('joins with the items read at start, runs 3 at once, never an item beside itself, and reports every failure', async () => {
    const path = uniqueRoot('fleet');
    const TenantSync = tenantSync(path);
    const app = await startApp({
      providers: [TenantSync, TenantRepository, FleetService],
      zk: { id: 'a' },
    });
    const fleet = app.get(FleetService);
    const job = app.get(TenantSync);
    await vi.waitUntil(() => fleet.assignment(path)?.items.length === tenantIds.length);
    expect(job.tenants.reads).toBe(1);
    const call = () => (job.sync as unknown as () => Promise<Map<string, string>>)();

    const first = call();
    await vi.waitUntil(() => job.running === 3);
    // The next tick while the first still runs (or waits): every item is in flight, none runs.
    await expect(call()).resolves.toEqual(new Map());
    job.failing.add('tenant-2').add('tenant-7');
    job.gate.resolve();
    const error = await first.catch((caught: unknown) => caught);
    expect(OwnedItemsError.isInstance(error)).toBe(true);
    expect((error as OwnedItemsError).failures.map(({ item }) => item)).toEqual([
      'tenant-2',
      'tenant-7',
    ]);
    expect(job.mostAtOnce).toBe(3);
    expect([...job.runs].sort()).toEqual([...tenantIds].sort());

    // Free again: the next tick runs every item; the results by item, in item order.
    job.failing.clear();
    const results = await call();
    expect([...results.keys()]).toEqual(fleet.assignment(path)?.items);
  });
});
