/**
 * What the demo and its workers share: the fleet's znode layout, the worker's settings and the
 * events a worker reports over IPC.
 */

export interface WorkerConfig {
  readonly id: string;
  readonly connect: string;
  readonly root: string;
  readonly sessionTimeoutMs: number;
  readonly jobs: number;
  readonly issueEveryMs: number;
  readonly jobMs: number;
}

export type FleetEvent =
  | { type: 'ready' | 'leader' | 'not-leader' | 'stopping' | 'stopped' }
  | { type: 'session'; state: string }
  | { type: 'issued'; job: string }
  | { type: 'ran'; job: string; token: number; ms: number }
  | { type: 'duplicate'; job: string }
  | { type: 'error'; message: string };

/** An event as the demo receives it. */
export type ReportedEvent = FleetEvent & { worker: string; at: number };

/** Where the fleet keeps its state under `root`. */
export function fleetPaths(root: string) {
  return {
    root,
    /** Leader election (LeaderSelector layout). */
    election: `${root}/election`,
    /** The next job number to issue. */
    cursor: `${root}/cursor`,
    /** Jobs issued and not yet done. */
    jobs: `${root}/jobs`,
    /** One marker per job done, written once. */
    done: `${root}/done`,
    /** One lock per job. */
    locks: `${root}/locks`,
  };
}

export function jobName(index: number): string {
  return `job-${String(index + 1).padStart(4, '0')}`;
}
