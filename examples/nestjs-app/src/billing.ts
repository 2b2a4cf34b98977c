/**
 * Job 2 — a @Cron job on exactly one instance: every instance schedules it, the leader runs it,
 * at most once per tick across the fleet (oncePerTick), never beside its own previous run.
 */
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Cron, CronExpression } from '@nestjs/schedule';
import { LeaderOnly, leaderSignal } from '@zkrx/nestjs';
import { Journal } from './journal';
import { type AppConfig, PATHS } from './settings';

/** The schedule's period: the ticks `oncePerTick` counts. */
export const BILLING_TICK_MS = 1_000;

@Injectable()
export class Billing {
  /** Ticks this instance's scheduler fired (led or not). */
  fired = 0;
  /** The ticks whose call has not settled yet (claiming the tick, or running). */
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly journal: Journal,
  ) {}

  @Cron(CronExpression.EVERY_SECOND)
  tick(): Promise<void> | undefined {
    this.fired += 1;
    // The tick this firing belongs to, as oncePerTick reckons it (in the same instant).
    const tick = Math.round(Date.now() / BILLING_TICK_MS) * BILLING_TICK_MS;
    const call = this.chargeDueInvoices(tick);
    if (call) {
      const settled = call.then(
        () => {},
        () => {},
      );
      this.pending.add(settled);
      void settled.then(() => this.pending.delete(settled));
    }
    return call;
  }

  /** True when no tick's call is in flight: `fired` and the runs made agree. */
  get quiet(): boolean {
    return this.pending.size === 0;
  }

  @LeaderOnly(PATHS.billing, { oncePerTick: { tickMs: BILLING_TICK_MS } })
  async chargeDueInvoices(tick: number): Promise<void> {
    const instance = this.config.get('INSTANCE_ID');
    const end = this.journal.begin(instance, 'billing', String(tick));
    try {
      // The work: stops if the leadership ends (another instance may lead now).
      await new Promise((resolve) => setTimeout(resolve, 20));
      leaderSignal()?.throwIfAborted();
    } finally {
      end();
    }
  }
}
