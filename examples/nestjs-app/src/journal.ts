/**
 * What the instances did, in order: payments, billing runs and tenant syncs with their start
 * and end times, so that the demo can show them and check that none overlapped.
 */

export type JournalKind = 'payment' | 'billing' | 'tenant';

export interface JournalEntry {
  /** The instance (A, B, C). */
  readonly instance: string;
  readonly kind: JournalKind;
  /** The order, the billing tick, the tenant. */
  readonly subject: string;
  readonly start: number;
  end: number;
  /** The order lock's fencing token, for payments. */
  readonly fencingToken?: number;
}

/** The entries of every instance of one demo (shared: the demo runs them in one process). */
export class Journal {
  readonly entries: JournalEntry[] = [];

  constructor(private readonly onEntry: (entry: JournalEntry) => void = () => {}) {}

  /** Records the start of a run; call the returned function at its end. */
  begin(instance: string, kind: JournalKind, subject: string, fencingToken?: number): () => void {
    const entry: JournalEntry = {
      instance,
      kind,
      subject,
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

  /** The entries of one kind (and one subject). */
  of(kind: JournalKind, subject?: string): JournalEntry[] {
    return this.entries.filter(
      (entry) => entry.kind === kind && (subject === undefined || entry.subject === subject),
    );
  }

  /** Pairs of entries of one kind and the same subject that overlapped in time. */
  overlapping(kind: JournalKind): [JournalEntry, JournalEntry][] {
    const runs = this.of(kind);
    const pairs: [JournalEntry, JournalEntry][] = [];
    for (const [index, run] of runs.entries()) {
      for (const other of runs.slice(index + 1)) {
        if (other.subject !== run.subject) continue;
        const runEnd = Number.isNaN(run.end) ? Number.POSITIVE_INFINITY : run.end;
        const otherEnd = Number.isNaN(other.end) ? Number.POSITIVE_INFINITY : other.end;
        if (run.start < otherEnd && other.start < runEnd) pairs.push([run, other]);
      }
    }
    return pairs;
  }
}
