/**
 * An overlap detector for exclusive holds observed from the driver: a holder enters when its
 * acquire resolved and exits before its release is sent, so an observed overlap is a real one.
 */

export interface HoldRecord {
  readonly who: string;
  readonly node: string;
  readonly start: number;
  end: number;
}

export class HoldLog {
  private readonly inside = new Set<HoldRecord>();
  readonly holds: HoldRecord[] = [];
  readonly violations: string[] = [];

  enter(who: string, node: string): HoldRecord {
    for (const other of this.inside) {
      this.violations.push(`${who} (${node}) entered while ${other.who} (${other.node}) held`);
    }
    const record: HoldRecord = { who, node, start: performance.now(), end: Number.NaN };
    this.inside.add(record);
    this.holds.push(record);
    return record;
  }

  exit(record: HoldRecord): void {
    this.inside.delete(record);
    record.end = performance.now();
  }

  /** Pairs of recorded intervals that intersect (none for a working lock). */
  overlaps(): [HoldRecord, HoldRecord][] {
    const sorted = [...this.holds].sort((a, b) => a.start - b.start);
    const found: [HoldRecord, HoldRecord][] = [];
    let latest: HoldRecord | undefined; // the record that ends last among those seen
    for (const current of sorted) {
      if (latest && current.start < latest.end) found.push([latest, current]);
      if (!latest || current.end > latest.end) latest = current;
    }
    return found;
  }

  /** How many times the holder changed implementation (`who` prefix before the first `-`). */
  switches(): number {
    let count = 0;
    const kinds = this.holds.map((hold) => hold.who.split('-')[0]);
    for (let i = 1; i < kinds.length; i++) if (kinds[i] !== kinds[i - 1]) count++;
    return count;
  }
}
