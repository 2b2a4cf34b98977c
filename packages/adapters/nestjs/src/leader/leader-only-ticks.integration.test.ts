/**
 * What @LeaderOnly promises per tick: no run beside itself on the leader (by default), at most
 * one run per tick across the fleet with `oncePerTick` (the fenced tick marker, tick-marker.ts),
 * and `leaderSignal()` in the run's context.
 */
import { Injectable } from '@nestjs/common';
import { LeaseReleasedError } from '@zkrx/lock';
import { connectedClient, deferred, lockPath } from '@zkrx/test-support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeApp, startApp, startApps } from '../../test/nest-apps';
import { tickMarkerPath } from '../connection/tick-marker';
import { LeaderOnly, LeaderService, leaderSignal } from '../index';

afterEach(() => {
  vi.restoreAllMocks();
});

const hourMs = 3_600_000;

describe('@LeaderOnly per tick', () => {
  it('skips a call while its previous run is in flight; overlap: allow runs both', async () => {
    const path = lockPath('election');
    const gate = deferred<void>();
    @Injectable()
    class Job {
      runs = 0;
      signals: (AbortSignal | undefined)[] = [];

      @LeaderOnly(path)
      async slow(): Promise<string> {
        this.runs += 1;
        this.signals.push(leaderSignal());
        await gate.promise;
        return 'done';
      }

      @LeaderOnly(path, { overlap: 'allow' })
      async overlapping(): Promise<string> {
        this.runs += 1;
        await gate.promise;
        return 'done';
      }
    }
    const app = await startApp({ providers: [Job] });
    await app.get(LeaderService).whenLeader(path);
    const job = app.get(Job);

    const first = job.slow();
    expect(job.slow()).toBeUndefined(); // the previous tick still runs: skipped
    expect(job.runs).toBe(1);
    const [a, b] = [job.overlapping(), job.overlapping()];
    expect(job.runs).toBe(3);
    // leaderSignal(): the term's, live while leading, aborted when the application leaves.
    const signal = job.signals[0]!;
    expect(signal.aborted).toBe(false);
    const leaving = app.get(LeaderService).leave(path);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseReleasedError);
    gate.resolve();
    await expect(Promise.all([first, a, b])).resolves.toEqual(['done', 'done', 'done']);
    await leaving;
    expect(leaderSignal()).toBeUndefined();
  });

  it('oncePerTick: at most one run per tick across three applications, and exactly one while the leader is steady', async () => {
    const path = lockPath('election');
    const runs: { app: number; tick: number }[] = [];
    let tick = Math.round(Date.now() / hourMs) * hourMs;
    vi.spyOn(Date, 'now').mockImplementation(() => tick);
    @Injectable()
    class Digest {
      app = -1;

      @LeaderOnly(path, { oncePerTick: { tickMs: hourMs } })
      async send(): Promise<string> {
        runs.push({ app: this.app, tick });
        return 'sent';
      }
    }
    const apps = await startApps(3, { providers: [Digest] });
    apps.forEach((app, index) => {
      app.get(Digest).app = index;
    });
    await Promise.all(apps.map((app) => app.get(LeaderService).join(path)));
    await vi.waitUntil(() => apps.some((app) => app.get(LeaderService).isLeader(path)));
    const leader = apps.findIndex((app) => app.get(LeaderService).isLeader(path));
    /** Every application's scheduler fires the tick, twice over (a late duplicate). */
    const fire = async (on: typeof apps) => {
      for (let round = 0; round < 2; round += 1) {
        await Promise.all(on.map((app) => app.get(Digest).send()));
      }
    };

    await fire(apps);
    tick += hourMs;
    await fire(apps);
    expect(runs).toEqual([
      { app: leader, tick: tick - hourMs },
      { app: leader, tick },
    ]);

    // A graceful hand-over, the next leader's clock behind: its ticks were run already.
    const rest = apps.filter((_, index) => index !== leader);
    await closeApp(apps[leader]!);
    await vi.waitUntil(() => rest.some((app) => app.get(LeaderService).isLeader(path)));
    await fire(rest);
    tick -= hourMs;
    await fire(rest);
    expect(runs).toHaveLength(2);

    // The next tick runs once, on the new leader.
    tick += 2 * hourMs;
    await fire(rest);
    const next = apps.findIndex((app) => app.get(LeaderService).isLeader(path));
    expect(runs.slice(2)).toEqual([{ app: next, tick }]);

    // The marker is persistent (it outlives the election's container): removed by hand.
    const client = await connectedClient();
    const marker = tickMarkerPath(path, 'Digest.send');
    expect(Number((await client.promises.get(marker)).data.toString())).toBe(tick);
    await client.promises.delete(marker);
    await client.promises.delete(marker.slice(0, marker.lastIndexOf('/')));
  });
});
