// billing.ts — every instance schedules it, the leader runs it, once per minute.
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { LeaderOnly, leaderSignal } from '@zkrx/nestjs';

@Injectable()
export class Billing {
  charged = 0;

  @Cron('0 * * * * *')
  @LeaderOnly('/election/billing', { oncePerTick: { tickMs: 60_000 } })
  async chargeDueInvoices() {
    leaderSignal()?.throwIfAborted();
    this.charged += 1;
  }
}
