/**
 * Overlap detectors for holds observed from the driver: a holder enters when its acquire
 * resolved and exits before its release is sent, so an observed overlap is a real one.
 */

export interface HoldRecord {
  readonly who: string;
  readonly node: string;
  readonly start: number;
  end: number;
}

/**
 * Holds of a lock that admits `capacity` holders at once (1: a mutex, n: an n-lease semaphore).
 * Entering while `capacity` others are inside is a violation.
 */
export class HoldLog {
  private readonly inside = new Set<HoldRecord>();
  readonly holds: HoldRecord[] = [];
  readonly violations: string[] = [];

  constructor(readonly capacity = 1) {}

  enter(who: string, node: string): HoldRecord {
    if (this.inside.size >= this.capacity) {
      const others = [...this.inside].map((other) => `${other.who} (${other.node})`).join(', ');
      this.violations.push(
        `${who} (${node}) entered while ${this.inside.size} held (capacity ${this.capacity}): ${others}`,
      );
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

  /** The most holds recorded inside at one instant (from the intervals). */
  maxConcurrent(): number {
    return maxConcurrent(this.holds);
  }

  /** Pairs of recorded intervals that intersect (none for a working mutex). */
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

/** The most intervals that intersect at one instant (an end at t does not meet a start at t). */
function maxConcurrent(records: readonly HoldRecord[]): number {
  const edges = records.flatMap((record) => [
    { at: record.start, step: 1 },
    { at: record.end, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let inside = 0;
  let most = 0;
  for (const edge of edges) {
    inside += edge.step;
    most = Math.max(most, inside);
  }
  return most;
}

export type HoldMode = 'read' | 'write';

export interface ReadWriteRecord extends HoldRecord {
  readonly mode: HoldMode;
}

/**
 * Holds of a read-write lock: readers may share, a writer overlaps nobody. A writer entering
 * while anyone is inside, or a reader entering while a writer is, is a violation.
 */
export class ReadWriteLog {
  private readonly inside = new Set<ReadWriteRecord>();
  readonly holds: ReadWriteRecord[] = [];
  readonly violations: string[] = [];
  /** Readers of different libraries (`who` prefix) seen inside together. */
  crossLibraryReads = 0;

  enter(who: string, mode: HoldMode, node: string): ReadWriteRecord {
    for (const other of this.inside) {
      if (mode === 'write' || other.mode === 'write') {
        this.violations.push(
          `${who} (${mode}, ${node}) entered while ${other.who} (${other.mode}, ${other.node}) held`,
        );
      } else if (libraryOf(other.who) !== libraryOf(who)) {
        this.crossLibraryReads++;
      }
    }
    const record: ReadWriteRecord = { who, mode, node, start: performance.now(), end: Number.NaN };
    this.inside.add(record);
    this.holds.push(record);
    return record;
  }

  exit(record: ReadWriteRecord): void {
    this.inside.delete(record);
    record.end = performance.now();
  }

  /** Pairs of intersecting intervals where one is a write (none for a working lock). */
  writerOverlaps(): [ReadWriteRecord, ReadWriteRecord][] {
    const found: [ReadWriteRecord, ReadWriteRecord][] = [];
    const sorted = [...this.holds].sort((a, b) => a.start - b.start);
    for (let i = 0; i < sorted.length; i++) {
      const first = sorted[i] as ReadWriteRecord;
      for (let j = i + 1; j < sorted.length; j++) {
        const second = sorted[j] as ReadWriteRecord;
        if (second.start >= first.end) break;
        if (first.mode === 'write' || second.mode === 'write') found.push([first, second]);
      }
    }
    return found;
  }

  /** The most readers recorded inside at one instant. */
  maxReaders(): number {
    return maxConcurrent(this.holds.filter((hold) => hold.mode === 'read'));
  }
}

function libraryOf(who: string): string {
  return who.split('-')[0] as string;
}
