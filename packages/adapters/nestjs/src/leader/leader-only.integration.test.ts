import { Injectable } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { watchLeader } from '@zkrx/leader';
import { acquire } from '@zkrx/lock';
import { childrenOf, connectedClient, IntervalLog, lockPath, sleep } from '@zkrx/test-support';
import { expireSession } from '@zkrx/testing';
import { filter, firstValueFrom } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { clientOf, closeApp, startApp, startApps } from '../../test/nest-apps';
import { LeaderOnly, LeaderService, Locked } from '../index';

/** A report job on a fast interval that only the leader runs, and a method to call by hand. */
function reportJob(path: string, log: IntervalLog, everyMs = 40) {
  @Injectable()
  class ReportJob {
    ticks = 0;
    calls = 0;

    @Interval(everyMs)
    @LeaderOnly(path)
    async tick(): Promise<void> {
      this.ticks += 1;
      const record = log.enter(String(this.ticks));
      await sleep(5);
      log.exit(record);
    }

    @LeaderOnly(path)
    report(): string {
      this.calls += 1;
      return 'reported';
    }
  }
  return ReportJob;
}

/** A leader-only run that lasts until the test lets it end. */
function gatedJob(path: string) {
  @Injectable()
  class GatedJob {
    started = 0;
    finish: () => void = () => {};

    @LeaderOnly(path)
    async run(): Promise<string> {
      this.started += 1;
      await new Promise<void>((resolve) => {
        this.finish = resolve;
      });
      return 'done';
    }
  }
  return GatedJob;
}

const leaders = (apps: { get: (type: typeof LeaderService) => LeaderService }[], path: string) =>
  apps.filter((app) => app.get(LeaderService).isLeader(path)).length;

/** Two applications running a gated leader-only job on `path`, once one of them leads. */
async function gatedPair(path: string) {
  const GatedJob = gatedJob(path);
  const watcher = await connectedClient();
  const apps = await startApps(2, { providers: [GatedJob] });
  await vi.waitUntil(() => leaders(apps, path) === 1);
  const leader = apps.find((app) => app.get(LeaderService).isLeader(path))!;
  const other = apps.find((app) => app !== leader)!;
  return { GatedJob, watcher, leader, other };
}

describe('@LeaderOnly', () => {
  it('runs on exactly one application and moves when that application closes', async () => {
    const path = lockPath('election');
    const ReportJob = reportJob(path, new IntervalLog(1), 60_000);
    const apps = await startApps(2, {
      providers: [ReportJob],
      imports: [ScheduleModule.forRoot()],
    });
    await vi.waitUntil(() => leaders(apps, path) === 1);
    const results = apps.map((app) => app.get(ReportJob).report());
    expect(results.filter((result) => result === 'reported')).toHaveLength(1);
    expect(results.filter((result) => result === undefined)).toHaveLength(1);
    const leaderIndex = results.indexOf('reported');
    const leader = apps[leaderIndex]!;
    const other = apps[1 - leaderIndex]!;
    expect(leader.get(ReportJob).calls).toBe(1);
    expect(other.get(ReportJob).calls).toBe(0);

    await closeApp(leader);
    await vi.waitUntil(() => other.get(LeaderService).isLeader(path));
    expect(other.get(ReportJob).report()).toBe('reported');
  });

  it('a fast @Interval runs on one application at a time, and on the other after it closes', async () => {
    const path = lockPath('election');
    const log = new IntervalLog(1);
    const ReportJob = reportJob(path, log);
    const [a, b] = await startApps(2, {
      providers: [ReportJob],
      imports: [ScheduleModule.forRoot()],
    });
    await vi.waitUntil(() => a!.get(ReportJob).ticks + b!.get(ReportJob).ticks >= 5);
    const [leader, other] = a!.get(ReportJob).ticks > 0 ? [a!, b!] : [b!, a!];
    await sleep(200);
    expect(other.get(ReportJob).ticks).toBe(0);
    const leaderTicks = leader.get(ReportJob).ticks;
    expect(leaderTicks).toBeGreaterThanOrEqual(5);

    await closeApp(leader);
    await vi.waitUntil(() => other.get(ReportJob).ticks >= 3);
    expect(leader.get(ReportJob).ticks).toBe(leaderTicks);
    expect(log.violations).toEqual([]);
  });

  it('shutdown waits for the run in flight before handing leadership over', async () => {
    const path = lockPath('election');
    const { GatedJob, watcher, leader, other } = await gatedPair(path);
    const running = leader.get(GatedJob).run();
    expect(leader.get(GatedJob).started).toBe(1);
    const signal = leader.get(LeaderService).signal(path);

    const closing = closeApp(leader);
    await vi.waitUntil(() => signal.aborted);
    // Stepping down: no new run starts here, and nobody else leads while the run goes on.
    expect(leader.get(LeaderService).isLeader(path)).toBe(false);
    expect(leader.get(GatedJob).run()).toBeUndefined();
    // The leader's node is still there (the proof nobody else can lead); the sleep only gives a
    // wrongly elected other a chance to show itself — an absence no event can prove sooner.
    await sleep(300);
    expect(other.get(LeaderService).isLeader(path)).toBe(false);
    expect(await childrenOf(watcher, path)).toHaveLength(2);

    leader.get(GatedJob).finish();
    await expect(running).resolves.toBe('done');
    await closing;
    await vi.waitUntil(() => other.get(LeaderService).isLeader(path));
    expect(await childrenOf(watcher, path)).toHaveLength(1);
    expect(leader.get(GatedJob).started).toBe(1);
  });

  it('shutdown does not wait on a leader-only run that waits for a lock held elsewhere', async () => {
    const path = lockPath('election');
    const guarded = lockPath();
    @Injectable()
    class LockingJob {
      @LeaderOnly(path)
      async run(): Promise<string> {
        return this.underLock();
      }

      @Locked(guarded)
      async underLock(): Promise<string> {
        return 'ran';
      }
    }
    const holder = await connectedClient();
    const lease = await acquire(holder, guarded);
    const app = await startApp({ providers: [LockingJob] });
    await vi.waitUntil(() => app.get(LeaderService).isLeader(path));
    const running = app
      .get(LockingJob)
      .run()
      .catch((caught: unknown) => caught);
    await vi.waitUntil(async () => (await childrenOf(holder, guarded)).length === 2);
    await closeApp(app);
    expect(isZkError(await running, ZkErrorCode.ClientClosed)).toBe(true);
    expect(await childrenOf(holder, guarded)).toHaveLength(1);
    await lease.release();
  });

  it('joins each election once per application, at boot, and leaves it on shutdown', async () => {
    const path = lockPath('election');
    const ReportJob = reportJob(path, new IntervalLog(1), 60_000);
    const watcher = await connectedClient();
    const app = await startApp({ providers: [ReportJob] });
    // Two @LeaderOnly methods, one candidate: queued before the application finished booting.
    expect(await childrenOf(watcher, path)).toHaveLength(1);
    await vi.waitUntil(() => app.get(LeaderService).isLeader(path));
    await closeApp(app);
    expect(await childrenOf(watcher, path)).toEqual([]);
  });

  it('steps down when the session expires and stands again', async () => {
    const path = lockPath('election');
    const ReportJob = reportJob(path, new IntervalLog(1), 60_000);
    const app = await startApp({ providers: [ReportJob] });
    const service = app.get(LeaderService);
    await vi.waitUntil(() => service.isLeader(path));
    const term = service.signal(path);
    const states: boolean[] = [];
    service.watchLeadership(path).subscribe((leading) => states.push(leading));
    await expireSession(clientOf(app));
    expect(term.aborted).toBe(true);
    await vi.waitUntil(() => service.isLeader(path), { timeout: 5_000 });
    expect(states).toEqual([true, false, true]);
    expect(app.get(ReportJob).report()).toBe('reported');
  });
});

describe('LeaderService', () => {
  it('watchLeadership and whenLeader follow the election; the id is the module id', async () => {
    const path = lockPath('election');
    const watcher = await connectedClient();
    const [a, b] = await Promise.all([
      startApp({ zk: { id: 'app-a' } }),
      startApp({ zk: { id: 'app-b' } }),
    ]);
    const first = a!.get(LeaderService);
    const second = b!.get(LeaderService);
    const states: boolean[] = [];
    // Reading never joins: false, and whenLeader waits, until the path is joined.
    first.watchLeadership(path).subscribe((leading) => states.push(leading));
    const leads = first.whenLeader(path);
    expect([first.isLeader(path), first.signal(path).aborted, states]).toEqual([
      false,
      true,
      [false],
    ]);
    expect(await childrenOf(watcher, path)).toEqual([]);
    await first.join(path);
    const signal = await leads;
    expect(first.isLeader(path)).toBe(true);
    await second.join(path);
    expect(second.isLeader(path)).toBe(false);
    const info = await firstValueFrom(
      watchLeader(watcher, path).pipe(filter((current) => current.participants.length === 2)),
    );
    expect(info.leaderId).toBe('app-a');

    const secondLeads = second.whenLeader(path);
    await closeApp(a!);
    expect(signal.aborted).toBe(true);
    expect(states).toEqual([false, true, false]);
    await expect(secondLeads).resolves.toBeInstanceOf(AbortSignal);
    expect(second.isLeader(path)).toBe(true);
  });

  it('leave(path) steps down, waits for the run in flight, then hands over; join(path) stands again', async () => {
    const path = lockPath('election');
    const { GatedJob, watcher, leader, other } = await gatedPair(path);
    const service = leader.get(LeaderService);
    const states: boolean[] = [];
    service.watchLeadership(path).subscribe({
      next: (leading) => states.push(leading),
      complete: () => states.push(false),
    });
    const running = leader.get(GatedJob).run();
    const signal = service.signal(path);

    const leaving = service.leave(path);
    expect(signal.aborted).toBe(true);
    expect(leader.get(GatedJob).run()).toBeUndefined();
    // The node stays while the run goes on: the other application cannot lead yet.
    expect(await childrenOf(watcher, path)).toHaveLength(2);
    leader.get(GatedJob).finish();
    await expect(running).resolves.toBe('done');
    await leaving;
    expect(states).toEqual([true, false, false]);
    await vi.waitUntil(() => other.get(LeaderService).isLeader(path));
    expect(await childrenOf(watcher, path)).toHaveLength(1);
    // Left until joined again: the job skips, and join(path) queues behind the new leader.
    expect(leader.get(GatedJob).run()).toBeUndefined();
    expect(await childrenOf(watcher, path)).toHaveLength(1);
    await service.join(path);
    expect(await childrenOf(watcher, path)).toHaveLength(2);
    expect(service.isLeader(path)).toBe(false);
  });

  it('after shutdown a new election cannot be joined', async () => {
    const app = await startApp();
    const service = app.get(LeaderService);
    await closeApp(app);
    const error = await service.join(lockPath('election')).catch((caught: unknown) => caught);
    expect(isZkError(error, ZkErrorCode.ClientClosed)).toBe(true);
  });
});
