/**
 * Job 3 — tenants from a database spread over the instances: each instance syncs the tenants
 * it owns, 3 at once, a tenant never beside itself, each on one instance at a time.
 */
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Interval } from '@nestjs/schedule';
import type { OwnedItem } from '@zkrx/fleet';
import { ForEachOwnedItem } from '@zkrx/nestjs/fleet';
import { Journal } from './journal';
import { type AppConfig, PATHS } from './settings';

/** The tenants' table (here in memory): read by every instance when it starts. */
@Injectable()
export class TenantRepository {
  async activeIds(): Promise<string[]> {
    return Array.from({ length: 12 }, (_, index) => `tenant-${String(index + 1).padStart(2, '0')}`);
  }
}

/** How often each instance syncs its tenants (read when the class is defined: a decorator). */
const syncEveryMs = Number(process.env.TENANT_SYNC_EVERY_MS ?? 300);

@Injectable()
export class TenantSync {
  constructor(
    private readonly tenants: TenantRepository,
    private readonly config: ConfigService<AppConfig, true>,
    private readonly journal: Journal,
  ) {}

  @Interval(syncEveryMs)
  @ForEachOwnedItem(PATHS.tenants, (self: TenantSync) => ({
    items: () => self.tenants.activeIds(),
    concurrency: 3,
  }))
  async sync(tenant: string, owned: OwnedItem): Promise<void> {
    const end = this.journal.begin(this.config.get('INSTANCE_ID'), 'tenant', tenant);
    try {
      await new Promise((resolve) => setTimeout(resolve, 30));
      owned.signal.throwIfAborted(); // moved to another instance meanwhile: stop
    } finally {
      end();
    }
  }
}
