/**
 * The item sets members state, stored once each under `<path>/sets`: a member keeps its set
 * there while it states it (the first to claim it writes it; another takes over when that one
 * goes), and the coordinator reads each set once. Ephemeral nodes: a set goes with its writer.
 *
 *   <path>/sets/<digest>      EPHEMERAL, the claim: {"v":1,"count":n,"chunks":k,"ready":bool}
 *   <path>/sets/<digest>.<i>  EPHEMERAL, chunk i of the sorted names, deflated (same session)
 */
import { isZkError, type NodeData, type ZkClient, ZkErrorCode } from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { type ItemSet, setChunks, setFromChunks } from './item-set';
import { readRecord } from './json-record';

const VERSION = 1;

/** Where the sets of a partition are stored. */
export function setsPath(path: string): string {
  return `${path}/sets`;
}

function headPath(path: string, digest: string): string {
  return `${setsPath(path)}/${digest}`;
}

function chunkPath(path: string, digest: string, index: number): string {
  return `${setsPath(path)}/${digest}.${index}`;
}

interface Head {
  readonly count: number;
  readonly chunks: number;
  readonly ready: boolean;
}

function encodeHead(head: Head): Buffer {
  return Buffer.from(JSON.stringify({ v: VERSION, ...head }), 'utf8');
}

function decodeHead(data: Buffer): Head | undefined {
  const head = readRecord(data, {
    v: 'number',
    count: 'number',
    chunks: 'number',
    ready: 'boolean',
  });
  return head?.v === VERSION
    ? { count: head.count, chunks: head.chunks, ready: head.ready }
    : undefined;
}

const ignore = () => {};

/**
 * Keeps one member's item set stored while it states it: watches the set's claim; when there
 * is none, claims it (an ephemeral create: one member wins) and writes the chunks, then marks
 * it ready. Writes nothing when the set is there already. `failed` hears what it could not do
 * (it tries again when the claim next changes, or after `retryMs`).
 */
export class SetKeeper {
  private watch: Subscription | undefined;
  private set: ItemSet | undefined;
  /**
   * Our claim, while we hold one or may (its create's reply lost with the connection): its
   * session.
   */
  private claim: { readonly digest: string; readonly sessionId: string } | undefined;
  /** The digest we stored whole (our claim marked ready). */
  private stored: string | undefined;
  private writing = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly failed: (error: unknown) => void,
    private readonly retryMs = 1_000,
  ) {}

  /** States `set` from now on (the previous one is let go: written by us, it is removed). */
  keep(set: ItemSet): void {
    if (this.stopped || this.set?.digest === set.digest) return;
    this.letGo();
    this.set = set;
    const digest = set.digest;
    this.watch = this.client.watchData(headPath(this.path, digest)).subscribe({
      next: (value) => this.onHead(digest, value),
      error: (error: unknown) => {
        if (this.set?.digest !== digest || this.stopped) return;
        this.watch = undefined;
        if (!isZkError(error, ZkErrorCode.ClientClosed)) this.failed(error);
        this.later(() => {
          if (this.set?.digest === digest) {
            this.set = undefined;
            this.keep(set);
          }
        });
      },
    });
  }

  stop(): void {
    this.stopped = true;
    this.letGo();
  }

  private letGo(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    this.watch?.unsubscribe();
    this.watch = undefined;
    const claim = this.claim;
    this.claim = undefined;
    if (claim && this.set) removeSet(this.client, this.path, claim, this.set);
    this.set = undefined;
    this.stored = undefined;
  }

  private later(action: () => void): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.stopped) action();
    }, this.retryMs);
    this.retry.unref?.();
  }

  private onHead(digest: string, value: NodeData | null): void {
    if (this.stopped || this.set?.digest !== digest) return;
    if (value !== null) {
      // Claimed: by us (our session), or another member stores it.
      if (this.claim && value.stat.ephemeralOwner !== this.claim.sessionId) this.claim = undefined;
      return;
    }
    this.claim = undefined;
    this.stored = undefined;
    void this.write(digest);
  }

  /**
   * Claims the set and writes it; NodeExists: another member did first (its claim is watched),
   * or we did on this session and its reply was lost (then we write it on). Tried again until
   * stored: a claim left unready would keep the set from every reader while our session lives.
   */
  private async write(digest: string): Promise<void> {
    const set = this.set;
    if (this.writing || !set || set.digest !== digest) return;
    this.writing = true;
    const client = this.client;
    const chunks = setChunks(set);
    try {
      await client.connected();
      const sessionId = client.sessionId as string;
      const head = { count: set.items.length, chunks: chunks.length };
      try {
        await client.promises.create(
          headPath(this.path, digest),
          encodeHead({ ...head, ready: false }),
          { mode: 'ephemeral', parents: 'container' },
        );
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NodeExists)) {
          // Another member's claim — one of another session, or another keeper's of this
          // client (watched: we write when it goes) — or gone meanwhile (the watch brings that
          // too). Ours (this keeper's create, its reply lost on this session): written on.
          const ours = this.claim?.digest === digest && this.claim.sessionId === sessionId;
          if (!ours) return;
          const stat = await client.promises.exists(headPath(this.path, digest));
          if (stat?.ephemeralOwner !== sessionId) return;
        } else {
          // It may have been applied: ours until we know (removed when we let go).
          if (isZkError(error) && error.isRetryable) {
            const claim = { digest, sessionId };
            if (this.set?.digest !== digest || this.stopped)
              removeSet(client, this.path, claim, set);
            else this.claim = claim;
          }
          throw error;
        }
      }
      if (this.set?.digest !== digest || this.stopped) {
        removeSet(client, this.path, { digest, sessionId }, set);
        return;
      }
      this.claim = { digest, sessionId };
      for (const [index, chunk] of chunks.entries()) {
        const node = chunkPath(this.path, digest, index);
        try {
          await client.promises.create(node, chunk, { mode: 'ephemeral' });
        } catch (error) {
          // Left over by an earlier claim of this session (our head was deleted by hand): ours.
          if (!isZkError(error, ZkErrorCode.NodeExists)) throw error;
          await client.promises.set(node, chunk);
        }
      }
      await client.promises.set(headPath(this.path, digest), encodeHead({ ...head, ready: true }));
      this.stored = digest;
    } catch (error) {
      if (this.stopped || isZkError(error, ZkErrorCode.ClientClosed)) return;
      this.failed(error);
      // Tried again: the claim's watch tells when it goes (a lost session); else after a while.
      this.later(() => {
        if (this.set?.digest === digest && this.stored !== digest) void this.write(digest);
      });
    } finally {
      this.writing = false;
    }
  }
}

/** Removes a set we stored (while our session is the client's): its chunks, then its claim. */
function removeSet(
  client: ZkClient,
  path: string,
  claim: { readonly digest: string; readonly sessionId: string },
  set: ItemSet,
): void {
  const work = (async () => {
    const head = headPath(path, claim.digest);
    // Retried across disconnections (a member that leaves while the servers are away).
    for (;;) {
      if (client.isClosed || client.sessionId !== claim.sessionId) return;
      try {
        const stat = await client.promises.exists(head);
        if (!stat || stat.ephemeralOwner !== claim.sessionId) return;
        for (let index = 0; index < setChunks(set).length; index++) {
          await client.promises.delete(chunkPath(path, claim.digest, index)).catch((error) => {
            if (!isZkError(error, ZkErrorCode.NoNode)) throw error;
          });
        }
        await client.promises.delete(head);
        return;
      } catch (error) {
        if (isZkError(error, ZkErrorCode.NoNode)) return;
        if (!isZkError(error) || !error.isRetryable) return;
      }
      await client.connected().catch(ignore);
    }
  })().catch(ignore);
  client.track(work);
}

/**
 * Reads the stored sets the coordinator needs, each once: watches a set's claim until it is
 * ready, then reads its chunks (one at a time: a reply of several chunks could pass the
 * client's `maxFrameBytes`) and checks them against the digest. Sets no longer needed are let
 * go.
 */
export class SetReader {
  private readonly known = new Map<string, ItemSet>();
  private readonly watching = new Map<string, Subscription>();
  private readonly reading = new Set<string>();

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    /** A set became known. */
    private readonly found: () => void,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** The set of `digest`, if known. */
  get(digest: string): ItemSet | undefined {
    return this.known.get(digest);
  }

  /** Adds a set known without reading it (the coordinator's own). */
  add(set: ItemSet): void {
    if (this.known.has(set.digest)) return;
    this.known.set(set.digest, set);
    this.watching.get(set.digest)?.unsubscribe();
    this.watching.delete(set.digest);
  }

  /** The sets needed now: those not known are watched and read; the others let go. */
  need(digests: ReadonlySet<string>, keep?: ItemSet): void {
    for (const digest of [...this.known.keys()]) {
      if (!digests.has(digest) && digest !== keep?.digest) this.known.delete(digest);
    }
    for (const [digest, watch] of this.watching) {
      if (digests.has(digest)) continue;
      watch.unsubscribe();
      this.watching.delete(digest);
    }
    for (const digest of digests) {
      if (this.known.has(digest) || this.watching.has(digest)) continue;
      const watch = this.client.watchData(headPath(this.path, digest)).subscribe({
        next: (value) => {
          const head = value ? decodeHead(value.data) : undefined;
          if (head?.ready) void this.read(digest);
        },
        error: (error: unknown) => {
          this.watching.delete(digest);
          if (!isZkError(error, ZkErrorCode.ClientClosed)) this.failed(error);
        },
      });
      if (!watch.closed) this.watching.set(digest, watch);
    }
  }

  stop(): void {
    for (const watch of this.watching.values()) watch.unsubscribe();
    this.watching.clear();
    this.known.clear();
  }

  private async read(digest: string): Promise<void> {
    if (this.reading.has(digest) || this.known.has(digest)) return;
    this.reading.add(digest);
    try {
      const set = await readStoredSet(this.client, this.path, digest);
      // Gone meanwhile (its writer left): the claim's watch brings the next one.
      if (!set || !this.watching.has(digest)) return;
      this.known.set(digest, set);
      this.watching.get(digest)?.unsubscribe();
      this.watching.delete(digest);
      this.found();
    } catch (error) {
      if (isZkError(error, ZkErrorCode.ClientClosed)) return;
      // Not the set of its digest, or a lost connection: told, and read again in a second.
      this.failed(error);
      const again = setTimeout(() => {
        if (this.watching.has(digest)) void this.read(digest);
      }, 1_000);
      again.unref?.();
    } finally {
      this.reading.delete(digest);
    }
  }
}

/**
 * Reads the set of `digest` stored under `<path>/sets` once (its chunks one at a time: a reply
 * of several could pass the client's `maxFrameBytes`); undefined when it is not there, or not
 * ready. Throws when the chunks are not that set.
 */
export async function readStoredSet(
  client: ZkClient,
  path: string,
  digest: string,
): Promise<ItemSet | undefined> {
  try {
    const head = decodeHead((await client.promises.get(headPath(path, digest))).data);
    if (!head?.ready) return undefined;
    const chunks: Buffer[] = [];
    for (let index = 0; index < head.chunks; index++) {
      chunks.push((await client.promises.get(chunkPath(path, digest, index))).data);
    }
    const set = setFromChunks(chunks, head.count, digest);
    if (!set) throw new Error(`the stored item set ${digest} does not match its digest`);
    return set;
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode)) return undefined;
    throw error;
  }
}
