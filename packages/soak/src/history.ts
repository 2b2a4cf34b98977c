/**
 * What a run recorded, on the coordinator's clock: the holds the workers believed and the faults
 * the nemesis made. The checker (checker.ts) and the fleet rules (partition-check.ts) judge them.
 */
import type { HoldKind } from './protocol';

/** One hold, on the coordinator's clock. */
export interface CheckedHold {
  readonly holdId: string;
  readonly group: string;
  readonly worker: number;
  readonly resource: string;
  readonly kind: HoldKind;
  readonly node: string | undefined;
  readonly token: number | undefined;
  readonly sessionId: string | undefined;
  readonly attemptAt: number;
  readonly acquiredAt: number;
  /** Undefined when the worker never said (it crashed). */
  readonly endedAt: number | undefined;
  readonly end: 'released' | 'lost' | undefined;
  readonly reason: string | undefined;
  /**
   * The API handed the lease over already lost (its signal aborted): the worker never believed
   * it held. Counted, not judged.
   */
  readonly lostOnArrival?: boolean;
  /** Uncertainty of the worker's times on the coordinator's clock (ms). */
  readonly uncertainty: number;
}

/** What the nemesis did, on the coordinator's clock. */
export interface FaultRecord {
  readonly id: number;
  readonly kind: FaultKind;
  /** The worker it was aimed at; undefined: the whole fleet (server faults). */
  readonly target: number | undefined;
  readonly start: number;
  /** When it was healed (the proxy resumed, the server back); undefined if never applied. */
  readonly healedAt: number | undefined;
  /** The time losses are measured from: the start, or the end of a stall. */
  readonly lossReference: number;
  readonly detail: string;
}

export type FaultKind =
  | 'expire'
  | 'cut'
  | 'reply-lost'
  | 'blackhole'
  | 'server-restart'
  | 'leader-stop'
  | 'quorum-loss'
  | 'reconfig'
  | 'idle-gap'
  | 'stall'
  /**
   * `boot-fleet`: every server down from before the fleet's first joins until they are all up
   * again (a whole stack starting at once). Not planned by the nemesis: the run does it.
   */
  | 'boot';

export const FAULT_KINDS: readonly FaultKind[] = [
  'expire',
  'cut',
  'reply-lost',
  'blackhole',
  'server-restart',
  'leader-stop',
  'quorum-loss',
  'reconfig',
  'idle-gap',
  'stall',
  'boot',
];
