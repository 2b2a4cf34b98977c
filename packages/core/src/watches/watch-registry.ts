/**
 * Watch streams: one ZooKeeper watch per path and kind shared by every subscriber, re-armed by
 * the read that observes each change, kept across reconnects and re-read after session expiry,
 * and removed from the server (`removeWatches`) when the last subscriber of its path leaves.
 */
import { Observable, type Subscriber } from 'rxjs';
import { errorFromRc, isTransientRc, Rc, ZkError, ZkErrorCode } from '../errors/errors';
import type { NodeData, SessionHandle, WatchEventType } from '../transport/transport';
import { WatcherType } from '../wire/codes';
import type { Stat } from '../znode/stat';

/** The kind of a watch stream (`watchData`, `watchExists`, `watchChildren`). */
export type WatchKind = 'data' | 'exists' | 'children';

type ValueOf<K extends WatchKind> = K extends 'data'
  ? NodeData | null
  : K extends 'exists'
    ? Stat | null
    : readonly string[];

/** What the registry needs from its client. */
export interface WatchHost {
  /** The live handle, if any. */
  currentHandle(): SessionHandle | undefined;
  /** Calls back once calls can reach the server again; returns a cancel function. */
  whenConnected(callback: () => void): () => void;
  isClosed(): boolean;
}

interface Entry {
  readonly key: string;
  readonly kind: WatchKind;
  readonly path: string;
  readonly subscribers: Set<Subscriber<unknown>>;
  value: unknown;
  hasValue: boolean;
  reading: boolean;
  dead: boolean;
  cancelWait: (() => void) | undefined;
  /**
   * The one-shot watch this entry's last read left on the server, by ZooKeeper's WatcherType
   * (`children`; `data` for a get, an exists, or a missing node's existence watch); undefined
   * once its event consumed it, or before any.
   */
  armed: number | undefined;
}

// Which entry kinds a ZooKeeper event concerns: the server clears the matching registrations.
const kindsOfEvent: Record<WatchEventType, readonly WatchKind[]> = {
  created: ['data', 'exists', 'children'],
  deleted: ['data', 'exists', 'children'],
  changed: ['data', 'exists'],
  child: ['children'],
  notwatching: ['data', 'exists', 'children'],
};

/** What a stream of `kind` tells of a node that does not exist. */
function absentValue(kind: WatchKind): ValueOf<WatchKind> {
  return kind === 'children' ? [] : null;
}

function sameStat(a: Stat | null, b: Stat | null): boolean {
  if (a === null || b === null) return a === b;
  return a.czxid === b.czxid && a.mzxid === b.mzxid && a.pzxid === b.pzxid;
}

function sameValue(kind: WatchKind, a: unknown, b: unknown): boolean {
  if (kind === 'children') {
    const x = a as readonly string[];
    const y = b as readonly string[];
    return x.length === y.length && x.every((name, index) => name === y[index]);
  }
  if (kind === 'data') {
    const x = a as NodeData | null;
    const y = b as NodeData | null;
    return sameStat(x?.stat ?? null, y?.stat ?? null);
  }
  return sameStat(a as Stat | null, b as Stat | null);
}

/**
 * Defers a transport callback by one microtask, queued at once: a reply's processing keeps its
 * place among the promises resolved and the events read before and after it (wire order).
 */
export function inWireOrder<A extends unknown[]>(
  callback: (...args: A) => void,
): (...args: A) => void {
  return (...args) => queueMicrotask(() => callback(...args));
}

/** What every shared watch stream keeps of itself, as far as closing it goes. */
export interface ClosableEntry {
  readonly subscribers: ReadonlySet<{ complete(): void }>;
  dead: boolean;
  cancelWait: (() => void) | undefined;
}

/**
 * The client closed: empties `entries`, marks each dead, cancels its wait for a connection,
 * runs `stop` on it (what else it has under way), then completes its streams.
 */
export function closeEntries<E extends ClosableEntry>(
  entries: Map<string, E>,
  stop?: (entry: E) => void,
): void {
  const closing = [...entries.values()];
  entries.clear();
  for (const entry of closing) {
    entry.dead = true;
    entry.cancelWait?.();
    stop?.(entry);
    for (const subscriber of [...entry.subscribers]) subscriber.complete();
  }
}

/** The shared watch streams of one client. */
export class WatchRegistry {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly host: WatchHost) {}

  /** Number of paths and kinds currently watched. */
  get size(): number {
    return this.entries.size;
  }

  watch<K extends WatchKind>(kind: K, path: string): Observable<ValueOf<K>> {
    return new Observable<ValueOf<K>>((subscriber) => {
      if (this.host.isClosed()) {
        subscriber.error(
          new ZkError(ZkErrorCode.ClientClosed, `watch ${path}: the client is closed`),
        );
        return;
      }
      const key = `${kind}:${path}`;
      let entry = this.entries.get(key);
      const sink = subscriber as Subscriber<unknown>;
      if (entry) {
        entry.subscribers.add(sink);
        if (entry.hasValue) subscriber.next(entry.value as ValueOf<K>);
      } else {
        entry = {
          key,
          kind,
          path,
          subscribers: new Set([sink]),
          value: undefined,
          hasValue: false,
          reading: false,
          dead: false,
          cancelWait: undefined,
          armed: undefined,
        };
        this.entries.set(key, entry);
        this.read(entry, false);
      }
      const owned = entry;
      return () => {
        owned.subscribers.delete(sink);
        if (owned.subscribers.size === 0) {
          this.drop(owned);
          // A read in flight removes what it arms when its reply comes (the entry is dead).
          if (!owned.reading) this.unwatch(owned);
        }
      };
    });
  }

  /** A watch event from the client's handle. */
  onEvent(event: WatchEventType, path: string): void {
    for (const kind of kindsOfEvent[event]) {
      const entry = this.entries.get(`${kind}:${path}`);
      if (!entry) continue;
      entry.armed = undefined;
      const absent = event === 'deleted';
      // A deletion is final news: tell subscribers now, re-arm only if someone still listens.
      if (absent) this.emit(entry, absentValue(kind));
      if (!entry.dead && !entry.reading) this.read(entry, absent);
    }
  }

  /** A new session: every ZooKeeper watch is gone, so every stream reads again. */
  resync(): void {
    for (const entry of this.entries.values()) {
      entry.armed = undefined;
      entry.cancelWait?.();
      entry.cancelWait = undefined;
      if (!entry.reading) this.read(entry, false);
    }
  }

  /** The client closed: every stream completes. */
  close(): void {
    closeEntries(this.entries);
  }

  private drop(entry: Entry): void {
    entry.dead = true;
    entry.cancelWait?.();
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
  }

  /**
   * The last subscriber left: the entry's one-shot watch is removed from the server (it would
   * stay there until its node changed), unless another stream of the path may need it: a new
   * stream of the same key (its read, sent before this removal, set the same watch), or, for a
   * data watch, any stream of the path (one data watch serves `data`, `exists` and a missing
   * node's `children` alike). ZooKeeper answers a session in order, so a read sent after the
   * removal sets its watch again. Best effort: a
   * removal that fails (no connection, a server older than 3.5, the native transport) leaves the
   * watch to fire once, and the event finds no entry.
   */
  private unwatch(entry: Entry): void {
    const type = entry.armed;
    entry.armed = undefined;
    if (type === undefined || this.host.isClosed()) return;
    const kinds =
      type === WatcherType.data ? (['data', 'exists', 'children'] as const) : [entry.kind];
    if (kinds.some((kind) => this.entries.has(`${kind}:${entry.path}`))) return;
    const handle = this.host.currentHandle();
    handle?.call('removeWatches', { path: entry.path, type }, () => {});
  }

  private emit(entry: Entry, value: unknown): void {
    if (entry.dead) return;
    if (entry.hasValue && sameValue(entry.kind, entry.value, value)) return;
    entry.value = value;
    entry.hasValue = true;
    for (const subscriber of [...entry.subscribers]) subscriber.next(value);
  }

  private fail(entry: Entry, rc: number, cause?: Error): void {
    if (entry.dead) return;
    if (this.host.isClosed()) {
      this.drop(entry);
      for (const subscriber of [...entry.subscribers]) subscriber.complete();
      return;
    }
    if (isTransientRc(rc)) {
      entry.cancelWait = this.host.whenConnected(() => {
        entry.cancelWait = undefined;
        this.read(entry, false);
      });
      return;
    }
    this.drop(entry);
    const operation = `watch ${entry.kind}`;
    // A reply over maxFrameBytes: the stream ends with the reason, it is not read again.
    const error =
      rc === Rc.failedWithCause && ZkError.isInstance(cause)
        ? new ZkError(cause.code, `${operation} ${entry.path}: ${cause.message}`, {
            path: entry.path,
          })
        : errorFromRc(rc, operation, entry.path);
    for (const subscriber of [...entry.subscribers]) subscriber.error(error);
  }

  /**
   * Reads the entry's value with a watch. `knownAbsent` skips the read that would only
   * report NoNode and arms the existence watch straight away.
   */
  private read(entry: Entry, knownAbsent: boolean): void {
    if (entry.dead || entry.reading || entry.subscribers.size === 0) return;
    const handle = this.host.currentHandle();
    if (!handle) return this.fail(entry, Rc.closing);
    entry.reading = true;
    const { path } = entry;
    if (knownAbsent) return this.armExistence(entry, handle);
    const reply = inWireOrder((rc: number, value: unknown, cause?: Error) => {
      entry.reading = false;
      // What the read left on the server: a get or a listing only when the node is there, an
      // exists either way. A read whose stream ended meanwhile removes it at once.
      if (rc === Rc.ok || (rc === Rc.noNode && entry.kind === 'exists')) {
        entry.armed = entry.kind === 'children' ? WatcherType.children : WatcherType.data;
      }
      if (entry.dead) return this.unwatch(entry);
      if (rc === Rc.ok && value) return this.emit(entry, value);
      if (rc === Rc.noNode) {
        return entry.kind === 'exists' ? this.emit(entry, null) : this.absent(entry, handle);
      }
      this.fail(entry, rc, cause);
    });
    switch (entry.kind) {
      case 'data':
        return handle.call('get', { path, watch: true }, reply);
      case 'exists':
        return handle.call('exists', { path, watch: true }, reply);
      case 'children':
        return handle.call('children', { path, watch: true }, (rc, listing, cause) =>
          reply(rc, listing?.children.sort(), cause),
        );
    }
  }

  // The node is absent: report it, then (if anyone still listens) watch for its creation.
  private absent(entry: Entry, handle: SessionHandle): void {
    this.emit(entry, absentValue(entry.kind));
    if (entry.dead || entry.subscribers.size === 0) return;
    entry.reading = true;
    this.armExistence(entry, handle);
  }

  private armExistence(entry: Entry, handle: SessionHandle): void {
    handle.call(
      'exists',
      { path: entry.path, watch: true },
      inWireOrder((rc, stat) => {
        entry.reading = false;
        if (rc === Rc.ok || rc === Rc.noNode) entry.armed = WatcherType.data;
        if (entry.dead) return this.unwatch(entry);
        if (rc === Rc.ok && stat) {
          // Created meanwhile: read the real value (this also arms the proper watch).
          if (entry.kind === 'exists') return this.emit(entry, stat);
          return this.read(entry, false);
        }
        if (rc === Rc.noNode) return this.emit(entry, absentValue(entry.kind));
        this.fail(entry, rc);
      }),
    );
  }
}
