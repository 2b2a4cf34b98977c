/**
 * @zkrx/nestjs/fleet on real Nest applications, each with its own session: FleetService and
 * @ForEachOwnedItem share a partition's items between two applications, each item worked on by
 * one of them only; a shutdown hands an item over only after its run in flight settled.
 */
import { Injectable } from '@nestjs/common';
import type { OwnedItem } from '@zkrx/fleet';
import { childrenOf, connectedClient } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { closeApp, startApp } from '../../test/nest-apps';
import { FleetService, ForEachOwnedItem } from '../fleet';

const tenants = ['acme', 'globex', 'initech', 'umbrella'];

/** A job over the tenants: each call runs `sync` once per tenant this application owns. */
function tenantJob(path: string, gate?: Promise<void>) {
  @Injectable()
  class TenantJob {
    readonly ran: { tenant: string; token: number }[] = [];
    running = 0;

    @ForEachOwnedItem(path, { items: tenants })
    async sync(tenant: string, owned: OwnedItem): Promise<string> {
      this.running += 1;
      this.ran.push({ tenant, token: owned.fencingToken });
      await gate;
      this.running -= 1;
      return `${tenant}:${owned.signal.aborted ? 'aborted' : 'done'}`;
    }
  }
  return TenantJob;
}

/** Calls the job as a scheduler does, and lists the results (a Map by item). */
const callJob = async (job: { sync: Function }) => [
  ...(await (job.sync as () => Promise<Map<string, string>>)()).values(),
];

/** One application owning all 4 items of `path`, its tenant job's runs held until `finish()`. */
async function gatedOwner(path: string) {
  let finish: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const TenantJob = tenantJob(path, gate);
  const app = await startApp({ providers: [TenantJob, FleetService], zk: { id: 'a' } });
  const fleet = app.get(FleetService);
  await vi.waitUntil(() => fleet.assignment(path)?.items.length === 4);
  return { app, fleet, TenantJob, finish };
}

describe('@zkrx/nestjs/fleet', () => {
  it('@ForEachOwnedItem runs each tenant on exactly one application, with its token', async () => {
    const path = uniqueRoot('fleet');
    const TenantJob = tenantJob(path);
    // Two applications in one process: the default id (hostname:pid) would be the same.
    const a = await startApp({ providers: [TenantJob, FleetService], zk: { id: 'a' } });
    const b = await startApp({ providers: [TenantJob, FleetService], zk: { id: 'b' } });
    const fleetA = a?.get(FleetService) as FleetService;
    const fleetB = b?.get(FleetService) as FleetService;
    await vi.waitUntil(
      () =>
        fleetA.assignment(path)?.items.length === 2 && fleetB.assignment(path)?.items.length === 2,
    );
    const jobA = a?.get(TenantJob) as InstanceType<typeof TenantJob>;
    const jobB = b?.get(TenantJob) as InstanceType<typeof TenantJob>;
    const [fromA, fromB] = await Promise.all([callJob(jobA), callJob(jobB)]);
    expect([...(fromA ?? []), ...(fromB ?? [])].sort()).toEqual(
      tenants.map((tenant) => `${tenant}:done`).sort(),
    );
    expect(jobA.ran.map((run) => run.tenant)).toEqual(fleetA.assignment(path)?.items);
    for (const run of jobA.ran) {
      expect(run.token).toBe(fleetA.owned(path, run.tenant)?.fencingToken);
    }
    expect(fleetB.owned(path, jobA.ran[0]?.tenant as string)).toBeUndefined();
  });

  it('a shutdown aborts the runs in flight and hands their items over only once they settle', async () => {
    const path = uniqueRoot('fleet');
    const { app: a, fleet: fleetA, TenantJob, finish } = await gatedOwner(path);
    const jobA = a.get(TenantJob);
    const owned = fleetA.assignment(path)?.owned as ReadonlyMap<string, OwnedItem>;
    const running = callJob(jobA);
    await vi.waitUntil(() => jobA.running === 4);

    const b = await startApp({ providers: [TenantJob, FleetService], zk: { id: 'b' } });
    const fleetB = b.get(FleetService);
    // b is in (its first assignment comes once it is a member).
    await vi.waitUntil(() => fleetB.assignment(path) !== undefined);
    const closing = closeApp(a);
    await vi.waitUntil(() => [...owned.values()].every((item) => item.signal.aborted));
    // b waits: a's runs still hold every item.
    const observer = await connectedClient();
    await vi.waitUntil(async () => (await childrenOf(observer, `${path}/members`)).length === 1);
    expect(fleetB.assignment(path)?.items ?? []).toEqual([]);
    finish();
    expect((await running).sort()).toEqual(tenants.map((tenant) => `${tenant}:aborted`).sort());
    await closing;
    await vi.waitUntil(() => fleetB.assignment(path)?.items.length === 4);
    for (const [tenant, item] of owned) {
      expect(fleetB.owned(path, tenant)?.fencingToken).toBeGreaterThan(item.fencingToken);
    }
  });

  it('FleetService.join on its own; bad input and a second join with other items throw', async () => {
    const path = uniqueRoot('fleet');
    const app = await startApp({ providers: [FleetService] });
    const fleet = app.get(FleetService);
    const seen: number[] = [];
    await fleet.join(path, ['x', 'y'], { id: 'solo', data: 'here' });
    fleet.watchAssignment(path).subscribe((assignment) => seen.push(assignment.items.length));
    await vi.waitUntil(() => fleet.assignment(path)?.items.length === 2);
    expect(fleet.assignment(path)?.items).toEqual(['x', 'y']);
    await vi.waitUntil(() => seen.at(-1) === 2);
    await fleet.join(path, ['y', 'x']);
    expect(() => fleet.join(path, ['x'])).toThrow(
      expect.objectContaining({ code: 'BadArguments' }),
    );
    expect(() => fleet.join(`${path}-2`, ['a/b'])).toThrow(
      expect.objectContaining({ code: 'BadArguments' }),
    );
    expect(() => fleet.join('relative', ['a'])).toThrow(
      expect.objectContaining({ code: 'InvalidPath' }),
    );
    expect(() => ForEachOwnedItem(path, { items: ['x', 'x'] })).toThrow(
      expect.objectContaining({ code: 'BadArguments' }),
    );
    expect(await fleet.forEachOwned(`${path}-none`, () => 1)).toEqual(new Map());
  });

  it('FleetService.leave(path) gives every item up, waits for the runs in flight, and can join again', async () => {
    const path = uniqueRoot('fleet');
    const { app, fleet, TenantJob, finish } = await gatedOwner(path);
    const owned = fleet.assignment(path)?.owned as ReadonlyMap<string, OwnedItem>;
    let completed = false;
    fleet.watchAssignment(path).subscribe({ complete: () => (completed = true) });
    const job = app.get(TenantJob);
    const running = callJob(job);
    await vi.waitUntil(() => job.running === 4);

    let left = false;
    const leaving = fleet.leave(path).then(() => (left = true));
    expect([...owned.values()].every((item) => item.signal.aborted)).toBe(true);
    expect(fleet.assignment(path)).toBeUndefined();
    expect(completed).toBe(true);
    // Left only once the runs settled (each item released as its run ends).
    await Promise.resolve();
    expect(left).toBe(false);
    finish();
    expect((await running).sort()).toEqual(tenants.map((tenant) => `${tenant}:aborted`).sort());
    await leaving;
    const observer = await connectedClient();
    await vi.waitUntil(async () => (await childrenOf(observer, `${path}/members`)).length === 0);
    await fleet.join(path, tenants);
    await vi.waitUntil(() => fleet.assignment(path)?.items.length === 4);
  });
});
