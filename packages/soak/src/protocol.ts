/**
 * What the coordinator and its worker processes say to each other over the IPC channel, and
 * the records a run keeps. Worker times are on the worker's monotonic clock (see clock.ts).
 */

/** What a worker process runs. */
export type WorkerMode =
  | 'mutex'
  /** Several mutex loops on the worker's one client: waiters of one client on one path. */
  | 'one-client'
  | 'rwlock'
  | 'semaphore'
  | 'multi-lock'
  | 'leader'
  | 'curator'
  /** Positive control: "acquires" by creating its node and going ahead without waiting. */
  | 'broken'
  /** Positive control: a mutex holder that hears of its loss a session timeout late. */
  | 'deaf'
  /** A member of a `@zkrx/fleet` partition, joining and leaving when the coordinator says. */
  | 'fleet'
  /** Positive control: a partition member that keeps each item a while after giving it up. */
  | 'broken-fleet'
  /** Positive control: a partition member that begins to work on each item it is given late. */
  | 'slow-fleet'
  /**
   * Positive control (one worker of `stale-fleet`): a partition member that ignores the set its
   * replacement in a rolling deploy is given, and goes on stating the one it had.
   */
  | 'stale-fleet';

/** What one hold is, for the checker's rules. */
export type HoldKind = 'exclusive' | 'read' | 'write' | 'lease' | 'leader';

/** How a worker holds and uses a lock. */
export interface HoldProfile {
  /** Register writes of a short hold: between 1 and this. */
  readonly writesMax: number;
  /** Pause between two writes of a short hold: 0 to this (ms). */
  readonly workMsMax: number;
  /** Chance that a hold is long: writes every 50 ms for `longHoldMs`. */
  readonly longHoldChance: number;
  readonly longHoldMs: number;
  /** Pause between a release and the next acquire: 0 to this (ms). */
  readonly thinkMsMax: number;
  /** Chance that an acquire is given a timeout (between 200 ms and 2 session timeouts). */
  readonly timeoutChance: number;
  /** The timeouts' range (ms), when not 200 ms to 2 session timeouts. */
  readonly timeoutMs?: readonly [number, number];
}

/** A worker's whole configuration (passed in the environment as JSON). */
export interface WorkerConfig {
  readonly index: number;
  readonly mode: WorkerMode;
  /** The worker's own fault proxies, one a server. */
  readonly connect: string;
  /**
   * Each server's client address (`host:port`, as the ensemble's configuration writes it) to
   * the worker's proxy in front of it: what its client follows the configuration through
   * (`followEnsemble.address`). Servers added later come in `routes` messages.
   */
  readonly routes: Readonly<Record<string, string>>;
  /** The servers themselves (a Curator worker reads its nodes' czxid through it). */
  readonly directConnect: string;
  readonly sessionTimeoutMs: number;
  readonly seed: number;
  /** Lock paths this worker picks from. */
  readonly resources: readonly string[];
  /** Semaphore: the number of leases. */
  readonly leases: number;
  /** Multi-lock: how many of the paths one acquisition takes (at most). */
  readonly multiCount: number;
  readonly onSuspended: 'release' | 'continue';
  readonly profile: HoldProfile;
  /** The client's connect timeout (ms; default 60 s): `boot-fleet` makes it short. */
  readonly connectTimeoutMs?: number;
  /** Fleet modes: the partition, and the item set a member starts with. */
  readonly fleet?: FleetWorkerConfig;
}

/** What a fleet-mode worker needs: its partition, its id, the first item set. */
export interface FleetWorkerConfig {
  /** The partition's path (`<path>/members`, `<path>/items/<item>`). */
  readonly path: string;
  /** This worker's member id (`member-<index>`). */
  readonly id: string;
  readonly items: readonly string[];
  /** `broken-fleet`: how long the member keeps believing it owns an item it gave up (ms). */
  readonly lateMs?: number;
  /** `slow-fleet`: how long after it is given an item the member begins to own it (ms). */
  readonly slowMs?: number;
  /** `stale-fleet`: ignores the set a rolling deploy gives it (states the one it had). */
  readonly stale?: boolean;
}

/** The identity of one hold as the worker reports it. */
export interface HoldStart {
  readonly holdId: string;
  /** Holds taken together (a multi-lock) share a group. */
  readonly group: string;
  readonly resource: string;
  readonly kind: HoldKind;
  /** The lock node (full path) when the worker knows it. */
  readonly node: string | undefined;
  /** The fencing token (the lock node's czxid) when the worker knows it. */
  readonly token: number | undefined;
  /** The session that holds (hex). */
  readonly sessionId: string | undefined;
  /** When acquire resolved (worker clock). */
  readonly at: number;
  /** When the attempt began (worker clock). */
  readonly attemptAt: number;
}

/** One write to the fenced register of a resource. */
export interface WriteRequest {
  readonly holdId: string;
  readonly resource: string;
  readonly token: number;
}

export type CoordinatorMessage =
  | { readonly type: 'ping'; readonly id: number }
  | { readonly type: 'start' }
  | { readonly type: 'stall'; readonly ms: number; readonly faultId: number }
  /**
   * Drop a stall that has not struck yet (fleet modes, at the end of each storm); answered with
   * `disarmed`, which a stall under way delays until it is over.
   */
  | { readonly type: 'disarm' }
  /** Make the next hold a long one (the nemesis will strike during it); 0 takes it back. */
  | { readonly type: 'linger'; readonly ms: number }
  | { readonly type: 'idle'; readonly on: boolean; readonly delayMs?: number }
  | { readonly type: 'stop' }
  /** Fleet modes: subscribe to the partition (join), unsubscribe (leave), a new item set. */
  | { readonly type: 'join' }
  | { readonly type: 'leave' }
  /** `deploy`: the set of this worker's replacement in a rolling deploy. */
  | { readonly type: 'items'; readonly items: readonly string[]; readonly deploy?: boolean }
  | { readonly type: 'write-reply'; readonly id: number; readonly accepted: readonly boolean[] }
  /** A server added (the `reconfig` fault): its client address, and this worker's proxy to it. */
  | { readonly type: 'routes'; readonly routes: Readonly<Record<string, string>> };

/** Counters a worker keeps and reports when it stops. */
export interface WorkerCounters {
  acquisitions: number;
  attemptsFailed: number;
  timeouts: number;
  writes: number;
  rejectedWrites: number;
}

export type WorkerMessage =
  | { readonly type: 'ready'; readonly pid: number; readonly at: number }
  | { readonly type: 'pong'; readonly id: number; readonly at: number }
  | {
      readonly type: 'session';
      readonly state: string;
      readonly sessionId: string | undefined;
      readonly password: string | undefined;
      readonly at: number;
    }
  | ({ readonly type: 'acquired' } & HoldStart)
  | {
      readonly type: 'ended';
      readonly holdId: string;
      readonly at: number;
      readonly how: 'released' | 'lost';
      /** Lost: what the signal said (`LockLostError:session-expired`, ...). */
      readonly reason?: string;
      /** The lease was already lost when the API handed it over (never believed held). */
      readonly onArrival?: boolean;
    }
  | {
      readonly type: 'release-done';
      readonly holdId: string;
      readonly ms: number;
      readonly error?: string;
    }
  | {
      readonly type: 'write';
      readonly id: number;
      readonly at: number;
      readonly writes: readonly WriteRequest[];
    }
  | {
      readonly type: 'attempt-failed';
      readonly at: number;
      readonly resource: string;
      readonly error: string;
      readonly elapsedMs: number;
      readonly timeoutMs: number | undefined;
    }
  | {
      readonly type: 'stalled';
      readonly faultId: number;
      readonly start: number;
      readonly end: number;
      readonly holdIds: readonly string[];
      /** Right after a ping was written, or at the bound (no ping came). */
      readonly struck: 'ping' | 'bound';
    }
  | { readonly type: 'idle-ack' }
  /** No stall is pending or under way any more (the answer to `disarm`). */
  | { readonly type: 'disarmed' }
  | { readonly type: 'note'; readonly at: number; readonly text: string }
  | { readonly type: 'fatal'; readonly at: number; readonly error: string }
  | { readonly type: 'stopped'; readonly counters: WorkerCounters };
