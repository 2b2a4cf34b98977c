/**
 * One member's view of its assignment: its assignment node as last read, and what that gives it
 * for its current item set — the target (the items to own) and the poison items the coordinator
 * counts for it. The engine (partition.ts) reads this view; it keeps none of it in its own
 * fields.
 */
import type { NodeData } from '@zkrx/core';
import { type AssignmentNode, decodeAssignmentNode } from './assignment-node';
import type { ItemSet } from './item-set';

const none: ReadonlySet<string> = new Set();

export class AssignmentView {
  /** The node as last read (null: not there), and its decoded share. */
  private node: { readonly value: NodeData; readonly decoded: AssignmentNode | undefined } | null =
    null;
  private set: ItemSet | undefined;
  /** What the node gives for `set`, computed once per read or set. */
  private given:
    | { readonly target: ReadonlySet<string> | undefined; readonly poison: ReadonlySet<string> }
    | undefined;

  /** The node's value as read (by the member's watch on it). */
  read(value: NodeData | null): void {
    this.node = value ? { value, decoded: decodeAssignmentNode(value.data) } : null;
    this.given = undefined;
  }

  /** The member's item set from now on. */
  setItems(set: ItemSet): void {
    this.set = set;
    this.given = undefined;
  }

  /** The node's session and czxid, when it is there. */
  get made(): { readonly sessionId: string; readonly czxid: number } | undefined {
    const stat = this.node?.value.stat;
    return stat ? { sessionId: stat.ephemeralOwner, czxid: stat.czxid } : undefined;
  }

  /**
   * The items the coordinator gives this member, when the node was written for its current set;
   * undefined otherwise (nothing written yet, or its set changed a moment ago): keep what it
   * has, take nothing new.
   */
  get target(): ReadonlySet<string> | undefined {
    return this.compute().target;
  }

  /** The poison items of this member the coordinator counts (its reports it has read). */
  get poison(): ReadonlySet<string> {
    return this.compute().poison;
  }

  private compute() {
    if (this.given) return this.given;
    const decoded = this.node?.decoded;
    const set = this.set;
    if (!decoded || !set || decoded.set !== set.digest || decoded.count !== set.items.length) {
      this.given = { target: undefined, poison: none };
      return this.given;
    }
    const items = set.items;
    this.given = {
      target: new Set(decoded.items.map((position) => items[position] as string)),
      poison:
        decoded.poison.length === 0
          ? none
          : new Set(decoded.poison.map((position) => items[position] as string)),
    };
    return this.given;
  }
}
