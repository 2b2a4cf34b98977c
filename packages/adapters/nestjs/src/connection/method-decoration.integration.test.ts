import { Injectable } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { lockPath } from '@zkrx/test-support';
import { describe, expect, it, vi } from 'vitest';
import { startApp } from '../../test/nest-apps';
import { currentLock, LeaderOnly, LeaderService, Locked } from '../index';

function scheduledJobs(path: string, election: string) {
  @Injectable()
  class Jobs {
    readonly runs: string[] = [];

    @Cron('* * * * * *', { name: 'cron-outside' })
    @Locked(path)
    async cronOutside(): Promise<void> {
      this.runs.push(`cron-outside ${currentLock()?.path}`);
    }

    @Locked(path)
    @Cron('* * * * * *', { name: 'cron-inside' })
    async cronInside(): Promise<void> {
      this.runs.push(`cron-inside ${currentLock()?.path}`);
    }

    @Interval('interval-outside', 50)
    @LeaderOnly(election)
    intervalOutside(): void {
      this.runs.push('interval-outside');
    }

    @LeaderOnly(election)
    @Interval('interval-inside', 50)
    intervalInside(): void {
      this.runs.push('interval-inside');
    }
  }
  return Jobs;
}

describe('@Locked and @LeaderOnly with @nestjs/schedule', () => {
  it('jobs register and run through the wrapper whichever order the decorators are written in', async () => {
    const path = lockPath();
    const election = lockPath('election');
    const Jobs = scheduledJobs(path, election);
    const app = await startApp({ providers: [Jobs], imports: [ScheduleModule.forRoot()] });
    const registry = app.get(SchedulerRegistry);
    expect(registry.getCronJobs().has('cron-outside')).toBe(true);
    expect(registry.getCronJobs().has('cron-inside')).toBe(true);
    expect(registry.getIntervals()).toEqual(
      expect.arrayContaining(['interval-outside', 'interval-inside']),
    );
    const jobs = app.get(Jobs);
    const ran = (what: string) => jobs.runs.includes(what);
    await vi.waitUntil(() => ran(`cron-outside ${path}`) && ran(`cron-inside ${path}`), {
      timeout: 3_000,
    });
    await vi.waitUntil(() => app.get(LeaderService).isLeader(election));
    await vi.waitUntil(() => ran('interval-outside') && ran('interval-inside'));
  });
});
