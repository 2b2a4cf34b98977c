/**
 * One term of a partition's coordinator (while it holds `<path>/coordinator`): it watches the
 * members and the item set each states, reads the stored sets and the poison reports, computes
 * the assignment (assign.ts) and writes each member's assignment node whose share changed.
 * Advice only: who holds an item is decided by the item's lock (partition.ts), never here.
 */
import {
  isZkError,
  joinPath,
  type Stat,
  type ZkClient,
  ZkErrorCode,
  type ZkError as ZkErrorType,
} from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { assign } from './assign';
import { type AssignmentNode, decodeAssignmentNode, encodeAssignmentNode } from './assignment-node';
import { BurstClock } from './burst-clock';
import { PartitionProblemError, type PartitionTask } from './errors';
import { compareNames, type ItemSet } from './item-set';
import { keepWatching } from './kept-watch';
import { type WatchedMember, watchMemberRecords } from './membership-watch';
import { assignmentsPath, membersPath } from './options';
import { PoisonWatch } from './poison';
import { SetReader } from './set-store';

/** What a term tells its coordinator. */
export interface TermEvents {
  /** A failure the partition cannot go on through (the member leaves with it). */
  failed(error: unknown): void;
  problem(error: PartitionProblemError): void;
  resolved(task: PartitionTask): void;
}

/** A member's assignment node as this term knows it. */
interface NodeState {
  /** The node's czxid, as the member's record states it (the node this state is of). */
  readonly czxid: number;
  /** Its data version; undefined while it is being read (or it could not be). */
  version: number | undefined;
  data: Buffer;
  /** Its data was read into `targets` (once the set it is in was known). */
  learned: boolean;
}

const ignore = () => {};

/**
 * A coordinator's term. Inputs: the live members and the set each states (a children watch on
 * `<path>/members` and a data watch on each member's node), the sets (read once each), the
 * poison reports, and each member's assignment node (read once, then known from our writes).
 * Whenever one changes it computes the assignment and writes the nodes that differ — one round
 * at a time; changes meanwhile make one more.
 */
export class CoordinatorTerm {
  private members: ReadonlyMap<string, WatchedMember> | undefined;
  /** What the members state that the assignment depends on (ids and sets), to skip no-ops. */
  private inputsKey = '';
  private readonly nodes = new Map<string, NodeState>();
  /** Each item's owner-to-be, as last computed (or read from the nodes): stickiness. */
  private targets = new Map<string, string>();
  private readonly sets: SetReader;
  /** The poison reports. Nothing is written before they are known (or cannot be): a member's node written without its poison would have it try them all again. */
  private readonly poison: PoisonWatch;
  private membership: Subscription | undefined;
  private writing = false;
  private dirty = false;
  private stopped = false;
  /** Nothing written yet by any coordinator: the first write waits for the joins to calm. */
  private fresh = true;
  private readonly bursts = new BurstClock();
  private wait: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly ownSet: () => ItemSet | undefined,
    private readonly events: TermEvents,
  ) {
    this.poison = new PoisonWatch(client, path, {
      changed: () => this.schedule(),
      problem: (error) => events.problem(error),
      resolved: () => events.resolved('watch-poison'),
    });
    this.sets = new SetReader(
      client,
      path,
      () => this.schedule(),
      (error) =>
        events.problem(new PartitionProblemError(path, 'read-set', undefined, { cause: error })),
    );
  }

  start(): void {
    this.poison.start();
    this.membership = this.watchMembers();
  }

  /**
   * The membership, while the term lasts. A watch that fails (NoAuth on `<path>/members`, a
   * listing over the client's `maxFrameBytes`) is a problem, not the member's end — every
   * successor would fail the same, one after the other —: it is set again (kept-watch.ts), and
   * nothing new is assigned meanwhile (the members keep what they have).
   */
  private watchMembers(): Subscription {
    return keepWatching(() => watchMemberRecords(this.client, membersPath(this.path)), {
      next: (members) => {
        this.events.resolved('watch-members');
        this.onMembers(members);
      },
      failed: (error) =>
        this.events.problem(
          new PartitionProblemError(this.path, 'watch-members', undefined, { cause: error }),
        ),
    });
  }

  /** This member's own set changed (it is known without a read). */
  changed(): void {
    const own = this.ownSet();
    if (own) this.sets.add(own);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.wait);
    this.membership?.unsubscribe();
    this.poison.stop();
    this.nodes.clear();
    this.sets.stop();
  }

  private onMembers(members: ReadonlyMap<string, WatchedMember>): void {
    if (this.stopped) return;
    const before = this.members;
    this.members = members;
    const key = [...members.values()]
      .map(
        (member) =>
          `${member.id}\u0000${member.record.set?.digest ?? ''}\u0000${member.record.assignment}`,
      )
      .sort()
      .join('\u0001');
    // A member's assignment node is read once it states it (and again when it is made again).
    for (const id of [...this.nodes.keys()]) {
      if (members.get(id)?.record.assignment !== this.nodes.get(id)?.czxid) this.nodes.delete(id);
    }
    for (const member of members.values()) {
      const czxid = member.record.assignment;
      if (czxid !== undefined && !this.nodes.has(member.id)) this.readNode(member.id, czxid);
    }
    const own = this.ownSet();
    if (own) this.sets.add(own);
    const digests = new Set<string>();
    for (const member of members.values()) {
      if (member.record.set) digests.add(member.record.set.digest);
    }
    this.sets.need(digests, own);
    if (key === this.inputsKey && before !== undefined) return;
    this.inputsKey = key;
    const now = Date.now();
    // A member stating another set is a burst of its own: a set pushed to every member lands on
    // them within moments, and assigning from the first one's alone would move items twice.
    let newSet = false;
    for (const [id, member] of members) {
      const was = before?.get(id)?.record.set?.digest;
      if (was !== undefined && was !== member.record.set?.digest) newSet = true;
    }
    this.bursts.changed(now, newSet);
    this.schedule();
  }

  /** Reads a member's assignment node (once: then our writes keep it known). */
  private readNode(id: string, czxid: number): void {
    const state: NodeState = { czxid, version: undefined, data: Buffer.alloc(0), learned: false };
    this.nodes.set(id, state);
    const node = joinPath(assignmentsPath(this.path), id);
    this.client.promises.get(node).then(
      (value) => {
        if (this.nodes.get(id) !== state || this.stopped) return;
        // Another node than the one stated (made again since): the record's change brings it.
        if (value.stat.czxid !== czxid) return;
        state.version = value.stat.version;
        state.data = value.data;
        this.learn(id, state);
        this.schedule();
      },
      (error: unknown) => {
        if (this.nodes.get(id) !== state || this.stopped) return;
        // Gone: its member left or makes it again (its record says when).
        if (isZkError(error, ZkErrorCode.NoNode, ZkErrorCode.ClientClosed)) return;
        // Read again in a second (a lost connection).
        const again = setTimeout(() => {
          if (this.nodes.get(id) === state && !this.stopped) {
            this.nodes.delete(id);
            this.readNode(id, czxid);
          }
        }, 1_000);
        again.unref?.();
      },
    );
  }

  /**
   * What a node written by an earlier coordinator says, into `targets` (stickiness), once the
   * set its positions are in is known.
   */
  private learn(id: string, state: NodeState): void {
    if (state.learned) return;
    const decoded = decodeAssignmentNode(state.data);
    if (!decoded) {
      state.learned = true;
      return;
    }
    this.fresh = false;
    const set = this.sets.get(decoded.set);
    if (!set || set.items.length !== decoded.count) return;
    state.learned = true;
    for (const position of decoded.items) {
      const item = set.items[position] as string;
      if (!this.targets.has(item)) this.targets.set(item, id);
    }
  }

  /** Writes again soon: after the round in flight, or after this turn (a reply's inputs together). */
  private schedule(): void {
    if (this.stopped) return;
    this.dirty = true;
    if (this.writing) return;
    this.writing = true;
    setImmediate(() => void this.writeAll());
  }

  private async writeAll(): Promise<void> {
    try {
      do {
        this.dirty = false;
        if (this.stopped) return;
        const calm = this.bursts.waitMs(Date.now(), this.fresh);
        if (calm > 0) {
          await new Promise<void>((resolve) => {
            this.wait = setTimeout(resolve, calm);
          });
          this.dirty = true;
          continue;
        }
        await this.writeOnce();
      } while (this.dirty && !this.stopped);
    } finally {
      this.writing = false;
    }
  }

  /**
   * Computes the assignment from what is known and writes every member's node that differs.
   * Members whose set or node is not known yet are left as they are (their node untouched).
   */
  private async writeOnce(): Promise<void> {
    const members = this.members;
    if (!members || !this.poison.known) return;
    const ready: { id: string; set: ItemSet; state: NodeState }[] = [];
    /** Members whose set is not known yet: what they are given stays theirs meanwhile. */
    const waiting = new Set<string>();
    for (const member of members.values()) {
      const digest = member.record.set?.digest;
      const set = digest === undefined ? undefined : this.sets.get(digest);
      const state = this.nodes.get(member.id);
      if (state?.version !== undefined) this.learn(member.id, state);
      if (!set || state?.version === undefined) {
        waiting.add(member.id);
        continue;
      }
      ready.push({ id: member.id, set, state });
    }
    if (ready.length === 0) return;
    ready.sort((a, b) => compareNames(a.id, b.id));
    const reserved = new Map<string, string>();
    for (const [item, id] of this.targets) if (waiting.has(id)) reserved.set(item, id);
    const { items, lists } = this.universe(
      ready.map((member) => member.set),
      reserved,
    );
    const ids = ready.map((member) => member.id);
    const targets = assign({ members: ids, items, owners: this.targets, lists });
    for (const [item, id] of reserved) targets.set(item, id);
    // Each member's share and its poison items, as positions in its own set.
    const shares = new Map<string, number[]>(ids.map((id) => [id, []]));
    const setOf = new Map(ready.map((member) => [member.id, member.set]));
    for (const [item, id] of targets) {
      const position = setOf.get(id)?.indexOf(item) ?? -1;
      if (position >= 0) shares.get(id)?.push(position);
    }
    const poisonOf = new Map<string, number[]>();
    for (const [item, report] of this.poison.reports) {
      const position = setOf.get(report.member)?.indexOf(item) ?? -1;
      if (position < 0) continue;
      const list = poisonOf.get(report.member) ?? [];
      list.push(position);
      poisonOf.set(report.member, list);
    }
    const writes: Promise<void>[] = [];
    for (const { id, set, state } of ready) {
      const node: AssignmentNode = {
        set: set.digest,
        count: set.items.length,
        items: (shares.get(id) ?? []).sort((a, b) => a - b),
        poison: (poisonOf.get(id) ?? []).sort((a, b) => a - b),
      };
      const data = encodeAssignmentNode(node);
      if (data.equals(state.data)) continue;
      writes.push(this.write(id, state, data));
    }
    this.targets = targets;
    this.fresh = false;
    this.bursts.ended();
    await Promise.all(writes);
  }

  /** Writes one member's node, conditional on the version we know. */
  private async write(id: string, state: NodeState, data: Buffer): Promise<void> {
    const node = joinPath(assignmentsPath(this.path), id);
    let stat: Stat;
    try {
      stat = await this.client.promises.set(node, data, state.version);
    } catch (error) {
      if (this.stopped || this.nodes.get(id) !== state) return;
      // Written meanwhile (an earlier coordinator still writing): read it again, compute again.
      // Gone: the member left (the membership tells) or made it again (read it when it is).
      if (isZkError(error, ZkErrorCode.BadVersion)) {
        this.nodes.delete(id);
        this.readNode(id, state.czxid);
        return;
      }
      if (isZkError(error, ZkErrorCode.NoNode)) {
        state.version = undefined;
        return;
      }
      if (isZkError(error, ZkErrorCode.ClientClosed)) return;
      if (isZkError(error) && (error.isRetryable || error.code === ZkErrorCode.SessionExpired)) {
        await this.client.connected().catch(ignore);
        this.dirty = true;
        return;
      }
      this.events.problem(
        new PartitionProblemError(this.path, 'write-assignment', id, {
          cause: error as ZkErrorType,
        }),
      );
      this.dirty = true;
      return;
    }
    if (this.nodes.get(id) !== state) return;
    state.version = stat.version;
    state.data = data;
    this.events.resolved('write-assignment');
  }

  /**
   * The items some member lists, less the poison items and those kept for members whose set is
   * not known yet, sorted; and those only some members list, with the members that do
   * (positions in the ready members' id order).
   */
  private universe(
    sets: readonly ItemSet[],
    reserved: ReadonlyMap<string, string>,
  ): {
    items: string[];
    lists: Map<string, number[]>;
  } {
    const distinct = [...new Map(sets.map((set) => [set.digest, set])).values()];
    const lists = new Map<string, number[]>();
    const poisoned = (item: string) => this.poison.reports.has(item) || reserved.has(item);
    if (distinct.length === 1) {
      const only = distinct[0] as ItemSet;
      const items =
        this.poison.reports.size === 0 && reserved.size === 0
          ? only.items.slice()
          : only.items.filter((item) => !poisoned(item));
      return { items, lists };
    }
    // Which of the distinct sets hold each item (a key of their positions); the members of
    // each such combination once: O(n·d) for d distinct sets, not O(n·m).
    const holders = new Map<string, string>();
    for (const [at, set] of distinct.entries()) {
      for (const item of set.items) {
        const key = holders.get(item);
        holders.set(item, key === undefined ? `${at}` : `${key},${at}`);
      }
    }
    const all = distinct.map((_, at) => at).join(',');
    const membersOf = new Map<string, number[]>();
    const items: string[] = [];
    for (const [item, key] of holders) {
      if (poisoned(item)) continue;
      items.push(item);
      if (key === all) continue;
      let listers = membersOf.get(key);
      if (!listers) {
        const digests = new Set(key.split(',').map((at) => distinct[Number(at)]?.digest));
        listers = [];
        for (const [at, set] of sets.entries()) if (digests.has(set.digest)) listers.push(at);
        membersOf.set(key, listers);
      }
      lists.set(item, listers);
    }
    items.sort(compareNames);
    return { items, lists };
  }
}
