/**
 * A partition member's own nodes: its member node (stating its `data`, its item set and its
 * problems), its assignment node (made once it joined, watched: the coordinator writes its
 * share there), and its item set kept stored under `<path>/sets`. What the engine (partition.ts)
 * stands on; none of it decides who holds an item.
 */
import { isZkError, joinPath, type NodeData, type ZkClient, ZkErrorCode } from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { PartitionProblemError } from './errors';
import type { ItemSet } from './item-set';
import { type Joined, MemberNode } from './member-node';
import { encodeMemberRecord, type MemberProblem, problemOf } from './member-record';
import { assignmentsPath, membersPath } from './options';
import { SetKeeper } from './set-store';

/** What the member's nodes tell its engine. */
export interface PresenceEvents {
  /** In or out changed (`isIn`). */
  changed(): void;
  /** The assignment node's value, as the watch reads it (null: not there). */
  assignment(value: NodeData | null): void;
  /** A failure the member cannot go on through (a duplicate id, no access to its nodes). */
  failed(error: unknown): void;
  /** A problem it goes on through (the item set not stored...). */
  problem(error: PartitionProblemError): void;
}

const ignore = () => {};

export class MemberPresence {
  private readonly node: MemberNode;
  private readonly keeper: SetKeeper;
  private set: ItemSet | undefined;
  private joined: Joined | undefined;
  /** Our assignment node, once made on the current session. */
  private assignment: { readonly sessionId: string; readonly czxid: number } | undefined;
  private making = false;
  private watch: Subscription | undefined;
  /** What we go through now, by task and item (shown on our member node). */
  private readonly problems = new Map<string, MemberProblem>();
  private stopped = false;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    private readonly data: string,
    /** The failures of the membership before this attempt (`joinPartition`). */
    private readonly joinProblem: MemberProblem | undefined,
    private readonly events: PresenceEvents,
  ) {
    this.node = new MemberNode(client, membersPath(path), id, Buffer.alloc(0), {
      joined: (joined) => this.onJoined(joined),
      failed: (error) => events.failed(error),
    });
    this.keeper = new SetKeeper(client, path, (error) =>
      this.events.problem(problemError(path, 'store-set', error)),
    );
  }

  /** In: our member node is there, and our assignment node on its session (the coordinator writes there). */
  get isIn(): boolean {
    return (
      this.joined !== undefined &&
      this.assignment !== undefined &&
      this.assignment.sessionId === this.joined.sessionId
    );
  }

  /** Joins with `set` stated. */
  start(set: ItemSet): void {
    this.set = set;
    this.node.update(this.record());
    this.keeper.keep(set);
    this.watch = this.client.watchData(this.assignmentNode).subscribe({
      next: (value) => this.onAssignment(value),
      error: (error: unknown) => {
        if (isZkError(error, ZkErrorCode.ClientClosed) && this.client.isClosed) return;
        if (!this.stopped) this.events.failed(error);
      },
    });
    if (!this.stopped) this.node.start();
  }

  /** States `set` from now on. */
  setItems(set: ItemSet): void {
    this.set = set;
    this.keeper.keep(set);
    this.node.update(this.record());
  }

  /** A problem we go through: shown on our node until `resolve`d. */
  problem(error: PartitionProblemError): void {
    const key = `${error.task}\u0000${error.item ?? ''}`;
    const count = (this.problems.get(key)?.count ?? 0) + 1;
    this.problems.set(key, problemOf(error.task, error, count));
    this.node.update(this.record());
  }

  /** A problem is over (`key`: its task, or its task and item). */
  resolve(key: string): void {
    const full = key.includes('\u0000') ? key : `${key}\u0000`;
    if (this.problems.delete(full)) this.node.update(this.record());
  }

  /** Leaves: our nodes are removed (in the background, tracked by the client). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.watch?.unsubscribe();
    this.keeper.stop();
    this.node.leave();
    const assignment = this.assignment;
    this.assignment = undefined;
    if (assignment) removeOwnNode(this.client, this.assignmentNode, assignment);
  }

  private get assignmentNode(): string {
    return joinPath(assignmentsPath(this.path), this.id);
  }

  /** Our member node's data: our `data`, set, assignment node, problems (one a task). */
  private record(): Buffer {
    const byTask = new Map<string, MemberProblem>();
    for (const problem of this.problems.values()) {
      const seen = byTask.get(problem.task);
      byTask.set(problem.task, {
        ...(seen && seen.at > problem.at ? seen : problem),
        count: (seen?.count ?? 0) + 1,
      });
    }
    const problems = [...(this.joinProblem ? [this.joinProblem] : []), ...byTask.values()];
    const set = this.set ? { digest: this.set.digest, size: this.set.items.length } : undefined;
    const assignment =
      this.assignment && this.assignment.sessionId === this.joined?.sessionId
        ? this.assignment.czxid
        : undefined;
    return encodeMemberRecord({ data: this.data, set, assignment, problems });
  }

  private onJoined(joined: Joined | undefined): void {
    this.joined = joined;
    if (joined) void this.makeAssignmentNode();
    this.events.changed();
  }

  private onAssignment(value: NodeData | null): void {
    if (this.stopped) return;
    const ours = this.assignment;
    if (ours && (value === null || value.stat.czxid !== ours.czxid)) {
      // Gone (our session ended, or deleted by someone): made again once joined.
      this.assignment = undefined;
      this.node.update(this.record());
      this.events.changed();
      if (this.joined) void this.makeAssignmentNode();
    }
    this.events.assignment(value);
  }

  /**
   * Makes our assignment node (ephemeral, on our member node's session) and states it on our
   * member node. A node there of another session (deleted by hand from under a member of an
   * earlier session) is waited out.
   */
  private async makeAssignmentNode(): Promise<void> {
    if (this.making) return;
    this.making = true;
    try {
      for (;;) {
        const joined = this.joined;
        if (this.stopped || !joined || this.assignment?.sessionId === joined.sessionId) return;
        try {
          const created = await this.client.promises.create(this.assignmentNode, '', {
            mode: 'ephemeral',
            parents: 'container',
          });
          if (this.stopped || this.joined !== joined) {
            removeOwnNode(this.client, this.assignmentNode, {
              sessionId: created.stat.ephemeralOwner,
              czxid: created.stat.czxid,
            });
            continue;
          }
          this.assignment = { sessionId: created.stat.ephemeralOwner, czxid: created.stat.czxid };
          break;
        } catch (error) {
          if (this.stopped || isZkError(error, ZkErrorCode.ClientClosed)) return;
          if (isZkError(error, ZkErrorCode.NodeExists)) {
            const stat = await this.client.promises.exists(this.assignmentNode).catch(() => null);
            if (stat && stat.ephemeralOwner === joined.sessionId) {
              this.assignment = { sessionId: stat.ephemeralOwner, czxid: stat.czxid };
              break;
            }
            if (stat) await untilGone(this.client, this.assignmentNode, stat.czxid);
            continue;
          }
          if (isZkError(error) && error.isRetryable) {
            await this.client.connected().catch(ignore);
            continue;
          }
          this.events.failed(error);
          return;
        }
      }
      this.node.update(this.record());
      this.events.changed();
    } finally {
      this.making = false;
    }
  }
}

function problemError(path: string, task: 'store-set', error: unknown): PartitionProblemError {
  return new PartitionProblemError(path, task, undefined, { cause: error });
}

/** Resolves once the node made at `czxid` is gone (or the watch ends). */
function untilGone(client: ZkClient, node: string, czxid: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      queueMicrotask(() => subscription.unsubscribe());
      resolve();
    };
    const subscription = client.watchExists(node).subscribe({
      next: (stat) => {
        if (stat === null || stat.czxid !== czxid) finish();
      },
      error: finish,
      complete: finish,
    });
  });
}

/** Removes a node of ours (while its session is the client's), tracked by the client. */
function removeOwnNode(
  client: ZkClient,
  node: string,
  own: { readonly sessionId: string; readonly czxid: number },
): void {
  if (client.isClosed || client.sessionId !== own.sessionId) return;
  const work = (async () => {
    const stat = await client.promises.exists(node);
    if (stat && stat.czxid === own.czxid) await client.promises.delete(node, stat.version);
  })().catch(ignore);
  client.track(work);
}
