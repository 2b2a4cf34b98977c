/**
 * What the console saw happen while it was open — hand-overs, losses, leaders' terms, fleet
 * joins and moves — newest last, the last 1,000 kept, each numbered so a page asks only for
 * what it has not seen.
 */

/** One change the console saw. */
export interface HistoryEntry {
  /** Its number: increasing, never reused while the console runs. */
  readonly id: number;
  /** When the console saw it (ms since the epoch). */
  readonly at: number;
  /** `lock`: a lock or election's holders changed; `fleet`: a member or an item's owner. */
  readonly scope: 'lock' | 'fleet';
  /** `taken`, `handed-over`, `ended` (locks); `joined`, `left`, `taken`, `moved`, `freed` (fleets). */
  readonly kind: string;
  /** The lock path, or the fleet's path. */
  readonly path: string;
  /** The kind of lock (`mutex`, `election`...), for a lock's entry. */
  readonly lockKind?: string;
  /** A fleet's item, or a member's id for joined / left. */
  readonly item?: string;
  /** Who held (the lock node's session, or a member id). */
  readonly from?: string;
  readonly fromData?: string;
  readonly to?: string;
  readonly toData?: string;
  /** How long `from` held (ms); `exact` false: at most that. */
  readonly heldMs?: number;
  readonly exact?: boolean;
  /** The hold ended with its session (proven: see LiveState's `sessionEnded`). */
  readonly lost?: boolean;
  /** A fleet item's new fencing token. */
  readonly token?: number;
}

/** How many entries are kept. */
export const KEPT_HISTORY = 1_000;

export class History {
  private readonly entries: HistoryEntry[] = [];
  private next = 1;
  private readonly listeners = new Set<(added: readonly HistoryEntry[]) => void>();

  /** Adds entries (without their ids); tells the listeners which. */
  add(entries: readonly Omit<HistoryEntry, 'id'>[]): void {
    if (entries.length === 0) return;
    const added = entries.map((entry) => ({ ...entry, id: this.next++ }));
    this.entries.push(...added);
    this.entries.splice(0, Math.max(0, this.entries.length - KEPT_HISTORY));
    for (const listener of this.listeners) listener(added);
  }

  /** The entries kept, oldest first, optionally only those after `afterId`. */
  list(afterId = 0): readonly HistoryEntry[] {
    if (afterId <= 0) return this.entries;
    const index = this.entries.findIndex((entry) => entry.id > afterId);
    return index < 0 ? [] : this.entries.slice(index);
  }

  /** Calls `listener` with each addition's entries; returns a function that stops it. */
  onChange(listener: (added: readonly HistoryEntry[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
