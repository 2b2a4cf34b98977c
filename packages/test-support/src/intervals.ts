/**
 * An overlap detector: holders report enter/exit, the detector fails on any overlap beyond
 * what the lock allows and keeps the holding order.
 */
export interface HoldRecord {
  readonly who: string;
  readonly token: number;
  readonly start: number;
  end: number;
}

export class IntervalLog {
  private inside = 0;
  maxInside = 0;
  readonly holds: HoldRecord[] = [];
  readonly violations: string[] = [];

  constructor(private readonly capacity = 1) {}

  enter(who: string, token = 0): HoldRecord {
    this.inside += 1;
    this.maxInside = Math.max(this.maxInside, this.inside);
    if (this.inside > this.capacity)
      this.violations.push(`${who} entered with ${this.inside - 1} inside`);
    const record = { who, token, start: performance.now(), end: Number.NaN };
    this.holds.push(record);
    return record;
  }

  exit(record: HoldRecord): void {
    this.inside -= 1;
    record.end = performance.now();
  }
}
