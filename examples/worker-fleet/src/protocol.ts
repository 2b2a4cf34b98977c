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
  /** How many shards the jobs are spread over (a partition of the fleet). */
  readonly shards: number;
  readonly issueEveryMs: number;
  readonly jobMs: number;
}

export type FleetEvent =
  | { type: 'ready' | 'leader' | 'not-leader' | 'stopping' | 'stopped' }
  | { type: 'session'; state: string }
  | { type: 'issued'; job: string }
  | { type: 'ran'; job: string; shard: string; token: number; ms: number }
  | { type: 'interrupted'; job: string; shard: string; reason: string }
  | { type: 'duplicate'; job: string }
  /** The worker's shards changed: what it owns now, what came and went, each new shard's token. */
  | {
      type: 'shards';
      items: string[];
      added: string[];
      removed: string[];
      tokens: Record<string, number>;
      reasons: Record<string, string>;
    }
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
    /** The partition of the shards: its members and one lock per shard (@zkrx/fleet). */
    shards: `${root}/shards`,
  };
}

export function shardName(index: number): string {
  return `shard-${index}`;
}

/** The shard a job belongs to: its number modulo the shard count. */
export function shardOf(job: string, shards: number): string {
  return shardName((Number(job.replace(/\D/g, '')) - 1) % shards);
}

export function jobName(index: number): string {
  return `job-${String(index + 1).padStart(4, '0')}`;
}
