/**
 * What an instance did, in order: report runs and restocks with their start and end times, so
 * the demo can show them and check that none overlapped.
 */

export interface JournalEntry {
  /** The instance (A, B). */
  readonly instance: string;
  readonly kind: 'report' | 'restock';
  readonly start: number;
  end: number;
  /** The inventory lock's fencing token, for restocks. */
  readonly fencingToken?: number;
}

/** The entries of every instance of one demo (shared: the demo runs them in one process). */
export class Journal {
  readonly entries: JournalEntry[] = [];

  constructor(private readonly onEntry: (entry: JournalEntry) => void = () => {}) {}

  /** Records the start of a run; call the returned function at its end. */
  begin(instance: string, kind: JournalEntry['kind'], fencingToken?: number): () => void {
    const entry: JournalEntry = {
      instance,
      kind,
      start: performance.now(),
      end: Number.NaN,
      fencingToken,
    };
    this.entries.push(entry);
    this.onEntry(entry);
    return () => {
      entry.end = performance.now();
    };
  }

  /** The entries of one kind. */
  of(kind: JournalEntry['kind']): JournalEntry[] {
    return this.entries.filter((entry) => entry.kind === kind);
  }

  /** Pairs of entries of one kind that overlapped in time. */
  overlaps(kind: JournalEntry['kind']): number {
    return this.overlapping(kind).length;
  }

  /** The pairs of entries of one kind that overlapped in time (a run still going ends never). */
  overlapping(kind: JournalEntry['kind']): [JournalEntry, JournalEntry][] {
    const runs = this.of(kind);
    const pairs: [JournalEntry, JournalEntry][] = [];
    for (const [index, run] of runs.entries()) {
      for (const other of runs.slice(index + 1)) {
        const runEnd = Number.isNaN(run.end) ? Number.POSITIVE_INFINITY : run.end;
        const otherEnd = Number.isNaN(other.end) ? Number.POSITIVE_INFINITY : other.end;
        if (run.start < otherEnd && other.start < runEnd) pairs.push([run, other]);
      }
    }
    return pairs;
  }
}

/** The injection token of the instance's name. */
export const INSTANCE_NAME = 'INSTANCE_NAME';
