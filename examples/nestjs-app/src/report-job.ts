/**
 * The report job: every instance schedules it, only the elected leader runs it.
 */
import { Inject, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { LeaderOnly } from '@zkrx/nestjs';
import { INSTANCE_NAME, Journal } from './journal';
import { REPORT_ELECTION, REPORT_EVERY_MS } from './settings';

@Injectable()
export class ReportJob {
  constructor(
    @Inject(INSTANCE_NAME) private readonly instance: string,
    private readonly journal: Journal,
  ) {}

  /** Builds the report: here, a short pause standing for the work. */
  @Interval(REPORT_EVERY_MS)
  @LeaderOnly(REPORT_ELECTION)
  async report(): Promise<void> {
    const end = this.journal.begin(this.instance, 'report');
    await new Promise((resolve) => setTimeout(resolve, 20));
    end();
  }
}
