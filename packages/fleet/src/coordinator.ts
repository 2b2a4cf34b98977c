/**
 * The coordinator of a partition: every member queues on the mutex at `<path>/coordinator`; its
 * holder runs a term (coordinator-term.ts) that computes the assignment and writes each member's
 * share. Advice only: who holds an item is decided by the item's lock (partition.ts), never here.
 */
import { isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';
import { LockLostError, mutex } from '@zkrx/lock';
import type { Subscription } from 'rxjs';
import { CoordinatorTerm, type TermEvents } from './coordinator-term';
import type { ItemSet } from './item-set';
import { coordinatorPath } from './options';

/**
 * This member's place in the coordinator's queue, and its term while it holds the mutex. The
 * role is kept through a suspended connection (it is advice: nothing to make safe), and the
 * member queues again after a loss — once connected, through any number of connect timeouts
 * (ZooKeeper may come up long after the members: a whole stack starting at once).
 */
export class Coordinator {
  private stopped = false;
  private lease: Subscription | undefined;
  private term: CoordinatorTerm | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    private readonly id: string,
    /** This member's item set (known to its term without a read). */
    private readonly ownSet: () => ItemSet | undefined,
    private readonly events: TermEvents,
  ) {}

  /** True while this member holds the coordinator's mutex. */
  get isCoordinator(): boolean {
    return this.term !== undefined;
  }

  start(): void {
    this.queue();
  }

  /** This member's item set changed. */
  changed(): void {
    this.term?.changed();
  }

  stop(): void {
    this.stopped = true;
    this.endTerm();
    this.lease?.unsubscribe();
    this.lease = undefined;
  }

  private endTerm(): void {
    this.term?.stop();
    this.term = undefined;
  }

  /** Queues on the coordinator's mutex (again after a loss), until stopped. */
  private queue(): void {
    if (this.stopped) return;
    const again = () => {
      this.lease = undefined;
      if (this.stopped || this.client.isClosed) return;
      this.client.connected().then(
        () => this.queue(),
        (error: unknown) => {
          if (isZkError(error, ZkErrorCode.ConnectTimeout)) again();
        },
      );
    };
    this.lease = mutex(this.client, coordinatorPath(this.path), {
      data: this.id,
      onSuspended: 'continue',
      reentrant: false,
    }).subscribe({
      next: () => {
        // A new term: what an earlier one knew may be gone (the nodes written again since).
        this.endTerm();
        this.term = new CoordinatorTerm(this.client, this.path, this.ownSet, this.events);
        this.term.start();
      },
      error: (error: unknown) => {
        this.endTerm();
        if (this.stopped || this.client.isClosed) return;
        if (
          LockLostError.isInstance(error) ||
          (isZkError(error) &&
            (error.isRetryable ||
              error.code === ZkErrorCode.SessionExpired ||
              error.code === ZkErrorCode.ConnectTimeout))
        ) {
          again();
          return;
        }
        if (isZkError(error, ZkErrorCode.ClientClosed)) return;
        this.events.failed(error);
      },
      complete: () => this.endTerm(),
    });
  }
}
