/**
 * A soak worker process: its own client (behind its own fault proxies) loops acquire → use the
 * fenced register → release, and reports every step to the coordinator over IPC, stamped with
 * the machine's monotonic clock. Run by the coordinator (fork), never by hand.
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { type Peer, startPeer } from '@zkrx/interop';
import { joinElection, type LeaderTerm, whileLeader } from '@zkrx/leader';
import { acquire, acquireAll, acquireSemaphore, LockLostError } from '@zkrx/lock';
import { protectedName } from '@zkrx/lock/recipe';
import { acquireRead, acquireWrite } from '@zkrx/rwlock';
import { Observable, type Subscription } from 'rxjs';
import { mono } from './clock';
import { PartitionMember } from './partition-worker';
import { watchPingWrites } from './ping-watch';
import type {
  CoordinatorMessage,
  HoldKind,
  HoldStart,
  WorkerConfig,
  WorkerCounters,
  WorkerMessage,
  WriteRequest,
} from './protocol';
import { createRandom } from './random';

const config = JSON.parse(process.env.ZKRX_SOAK_WORKER ?? 'null') as WorkerConfig | null;
if (!config || !process.send) {
  console.error('soak worker: run by the soak coordinator only');
  process.exit(2);
}

// ---- reporting ----

const send = (message: WorkerMessage): void => {
  if (!process.connected) return;
  try {
    process.send?.(message);
  } catch {
    // The coordinator is gone: the disconnect handler ends this process.
  }
};
const describe = (error: unknown): string =>
  LockLostError.isInstance(error)
    ? `LockLostError:${error.reason}`
    : error instanceof Error
      ? `${error.name}${'code' in error && typeof error.code === 'string' ? `:${error.code}` : ''}`
      : String(error);

process.on('uncaughtException', (error) => {
  send({ type: 'fatal', at: mono(), error: `uncaught ${error.stack ?? error.message}` });
  setTimeout(() => process.exit(70), 50);
});
process.on('unhandledRejection', (reason) => {
  send({
    type: 'fatal',
    at: mono(),
    error: `unhandled rejection ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
  });
  setTimeout(() => process.exit(70), 50);
});
// The coordinator died (or closed the channel): no worker outlives it.
process.on('disconnect', () => process.exit(71));

const counters: WorkerCounters = {
  acquisitions: 0,
  attemptsFailed: 0,
  timeouts: 0,
  writes: 0,
  rejectedWrites: 0,
};
const random = createRandom(config.seed, `worker-${config.index}`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---- the fenced register, over IPC ----

let nextWriteId = 1;
const pendingWrites = new Map<number, (accepted: readonly boolean[]) => void>();
function writeRegister(writes: readonly WriteRequest[]): Promise<readonly boolean[]> {
  const id = nextWriteId++;
  return new Promise((resolve) => {
    pendingWrites.set(id, resolve);
    send({ type: 'write', id, at: mono(), writes });
  });
}

// ---- coordinator commands ----

let started = false;
let stopping = false;
let idle = false;
let pendingStall: { ms: number; faultId: number } | undefined;
/** The next hold lasts this long (the nemesis means to strike during it). */
let lingerMs: number | undefined;
/** Wakes the loops waiting out an idle gap. */
const wakeUps = new Set<() => void>();
const wakeUp = () => {
  for (const wake of [...wakeUps]) wake();
};
/** Aborted to give up the waiting acquires (idle, stop): one for each loop's attempt. */
const waiting = new Set<AbortController>();
const giveUpWaiting = () => {
  for (const controller of waiting) controller.abort();
};
const startGate = (() => {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
})();
let nextPing = 0;
/** Each server's client address to this worker's proxy in front of it (see WorkerConfig). */
const routes = new Map<string, string>(Object.entries(config?.routes ?? {}));

/**
 * Where this worker reaches a server of the configuration: its own proxy to it (so that the
 * nemesis's proxy faults still strike it); a server it has no proxy for is left out.
 */
function throughProxy(server: { host: string; port: number }) {
  const proxy = routes.get(`${server.host}:${server.port}`);
  if (proxy === undefined) return undefined;
  const colon = proxy.lastIndexOf(':');
  return { host: proxy.slice(0, colon), port: Number(proxy.slice(colon + 1)) };
}

/** Fleet modes: the partition member the coordinator's commands go to. */
let member: PartitionMember | undefined;
const stopGate = (() => {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
})();

process.on('message', (raw) => {
  const message = raw as CoordinatorMessage;
  switch (message.type) {
    case 'ping':
      nextPing = message.id;
      send({ type: 'pong', id: nextPing, at: mono() });
      break;
    case 'start':
      started = true;
      startGate.resolve();
      break;
    case 'write-reply':
      pendingWrites.get(message.id)?.(message.accepted);
      pendingWrites.delete(message.id);
      break;
    case 'linger':
      lingerMs = message.ms > 0 ? message.ms : undefined;
      break;
    case 'stall':
      pendingStall = { ms: message.ms, faultId: message.faultId };
      if (holding.size > 0) aimStall();
      break;
    case 'disarm':
      if (pendingStall) {
        send({
          type: 'note',
          at: mono(),
          text: `stall #${pendingStall.faultId} dropped: it found no hold before the heal`,
        });
      }
      pendingStall = undefined;
      clearTimeout(aiming);
      aiming = undefined;
      boundPassed = false;
      // Handled only once a stall under way is over (it holds the event loop).
      send({ type: 'disarmed' });
      break;
    case 'idle':
      if (message.on) {
        idle = true;
        giveUpWaiting();
        void reportIdleWhenQuiet();
      } else {
        setTimeout(() => {
          idle = false;
          wakeUp();
        }, message.delayMs ?? 0);
      }
      break;
    case 'stop':
      stopping = true;
      idle = false;
      giveUpWaiting();
      wakeUp();
      startGate.resolve();
      stopGate.resolve();
      break;
    case 'join':
    case 'leave':
    case 'items':
      member?.command(message);
      break;
    case 'routes':
      for (const [server, proxy] of Object.entries(message.routes)) routes.set(server, proxy);
      break;
  }
});

// ---- holds ----

/** Holds in progress (for the stall, which strikes a holder). */
const holding = new Set<string>();
/** Acquisitions in progress (one for each loop at most). */
let acquiring = 0;
let nextHold = 1;

async function reportIdleWhenQuiet(): Promise<void> {
  while (holding.size > 0 || acquiring > 0) await sleep(5);
  if (idle) send({ type: 'idle-ack' });
}

/** Armed while a stall waits for a ping to go out: the bound's timer. */
let aiming: ReturnType<typeof setTimeout> | undefined;
/** The bound passed while nothing was held: the next hold's first step stalls at once. */
let boundPassed = false;

// The stall strikes at the worst moment for the client: right after it writes a ping, before
// the event loop can read the reply. The reply then arrives during the stall and sits unread
// while the client's read-timeout clock runs on. Seen in this process's own socket writes (the
// worker's side; `@zkrx/core` is not changed). The stall starts on the next tick after the
// write: the ping is handed to the socket, the client's timer callback has finished, and no I/O
// is polled before the stall.
watchPingWrites(() => {
  if (aiming === undefined || holding.size === 0) return;
  clearTimeout(aiming);
  aiming = undefined;
  process.nextTick(() => stallNow('ping'));
});

/**
 * Aims a pending stall at the next ping written while holding. Bounded, so that no stall is
 * lost: a connection busy with requests sends no ping (a ping goes out after a third of the
 * session timeout without a write), so after half a session timeout the stall strikes at once
 * if the worker holds, else at its next hold's first step.
 */
function aimStall(): void {
  if (!pendingStall || aiming !== undefined) return;
  if (boundPassed) {
    stallNow('bound');
    return;
  }
  aiming = setTimeout(() => {
    aiming = undefined;
    if (holding.size > 0) stallNow('bound');
    else boundPassed = true;
  }, config!.sessionTimeoutMs / 2);
}

/** Busy-loops the event loop (a GC pause, a CPU hog) while holding. */
function stallNow(struck: 'ping' | 'bound'): void {
  const stall = pendingStall;
  if (!stall) return;
  pendingStall = undefined;
  clearTimeout(aiming);
  aiming = undefined;
  boundPassed = false;
  const start = mono();
  const end = start + stall.ms;
  while (mono() < end) {
    // spinning: nothing else runs in this process meanwhile
  }
  send({
    type: 'stalled',
    faultId: stall.faultId,
    start,
    end: mono(),
    holdIds: [...holding],
    struck,
  });
}

/** One lock held by this worker, as used by the loop. */
interface Held {
  readonly resource: string;
  readonly kind: HoldKind;
  readonly node: string | undefined;
  readonly token: number | undefined;
  readonly sessionId: string | undefined;
  /** Aborts when this hold ends (lost or released). */
  readonly signal: AbortSignal;
  /**
   * When `signal` aborted, if it did before the hold was recorded: the hold ended then, not
   * when recorded.
   */
  readonly abortedAt?: () => number | undefined;
}

/** Remembers when a signal aborts, from now on. */
function abortClock(signal: AbortSignal): () => number | undefined {
  let at = signal.aborted ? mono() : undefined;
  if (at === undefined) {
    signal.addEventListener(
      'abort',
      () => {
        at = mono();
      },
      { once: true },
    );
  }
  return () => at;
}

/** What one acquisition gave: one or several holds, and how to release them. */
interface Acquisition {
  readonly holds: readonly Held[];
  /** Register writes are made (fenced resources); false for leases. */
  readonly fenced: boolean;
  /** When the hold began, if before it is recorded (a leader's term, as it began). */
  readonly acquiredAt?: number;
  release(): Promise<void>;
}

/**
 * Records an acquisition's holds and their ends; returns the ids and a function that records the
 * release of those still held (called just before releasing: the hold ends when release starts).
 */
function track(acquisition: Acquisition, attemptAt: number) {
  const at = acquisition.acquiredAt ?? mono();
  const group = `w${config!.index}-${nextHold}`;
  const ended = new Set<string>();
  const ids = acquisition.holds.map((held, index) => {
    const holdId = `w${config!.index}-${nextHold++}`;
    const start: HoldStart = {
      holdId,
      group,
      resource: held.resource,
      kind: held.kind,
      node: held.node,
      token: held.token,
      sessionId: held.sessionId,
      at,
      attemptAt,
    };
    send({ type: 'acquired', ...start });
    holding.add(holdId);
    const onEnd = (onArrival: boolean) => {
      if (ended.has(holdId)) return;
      ended.add(holdId);
      holding.delete(holdId);
      const abortedAt = held.abortedAt?.();
      send({
        type: 'ended',
        holdId,
        // Lost before it was handed over (a multi-lock's first lease while it took the next):
        // the worker never believed it held; the hold ends where it began.
        at: abortedAt ?? (onArrival ? at : mono()),
        how: 'lost',
        reason: describe(held.signal.reason),
        ...(onArrival && abortedAt === undefined ? { onArrival } : {}),
      });
    };
    if (held.signal.aborted) onEnd(true);
    else held.signal.addEventListener('abort', () => onEnd(false), { once: true });
    void index;
    return holdId;
  });
  counters.acquisitions += 1;
  const endAll = () => {
    const at = mono();
    for (const holdId of ids) {
      if (ended.has(holdId)) continue;
      ended.add(holdId);
      holding.delete(holdId);
      send({ type: 'ended', holdId, at, how: 'released' });
    }
  };
  const anyLost = () => ids.some((holdId) => ended.has(holdId));
  return { ids, endAll, anyLost };
}

/** Uses the holds: register writes (fenced) and pauses, until done or lost. */
async function use(acquisition: Acquisition, ids: readonly string[], anyLost: () => boolean) {
  const profile = config!.profile;
  const drawnLong = random.chance(profile.longHoldChance);
  const linger = lingerMs;
  lingerMs = undefined;
  const long = drawnLong || linger !== undefined;
  const until = long ? mono() + (linger ?? profile.longHoldMs) : 0;
  const writes = random.int(1, profile.writesMax);
  for (let step = 0; ; step++) {
    if (pendingStall) aimStall();
    if (anyLost() || stopping) return;
    if (acquisition.fenced) {
      const requests = acquisition.holds.flatMap((held, index) =>
        held.token === undefined
          ? []
          : [{ holdId: ids[index] as string, resource: held.resource, token: held.token }],
      );
      if (requests.length > 0) {
        const accepted = await writeRegister(requests);
        counters.writes += requests.length;
        // A refusal is the fence's verdict, recorded by the register; the hold lasts as long
        // as the lock says it does (its signal), which is what the checker judges.
        counters.rejectedWrites += accepted.filter((ok) => !ok).length;
      }
    }
    if (long ? mono() >= until : step + 1 >= writes) return;
    await sleep(long ? 50 : random.int(0, profile.workMsMax));
  }
}

/** The loop: acquire (by `take`), use, release, think; until told to stop. */
async function loop(
  take: (signal: AbortSignal, timeoutMs: number | undefined) => Promise<Acquisition>,
) {
  await startGate.promise;
  while (!stopping) {
    if (idle) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          wakeUps.delete(wake);
          resolve();
        };
        wakeUps.add(wake);
        if (!idle || stopping) wake();
      });
      continue;
    }
    const attempt = new AbortController();
    waiting.add(attempt);
    const [shortest, longest] = config!.profile.timeoutMs ?? [200, 2 * config!.sessionTimeoutMs];
    const timeoutMs = random.chance(config!.profile.timeoutChance)
      ? random.int(shortest, longest)
      : undefined;
    const attemptAt = mono();
    let acquisition: Acquisition;
    acquiring += 1;
    try {
      acquisition = await take(attempt.signal, timeoutMs);
    } catch (error) {
      acquiring -= 1;
      waiting.delete(attempt);
      if (attempt.signal.aborted) continue; // given up on purpose (idle, stop)
      counters.attemptsFailed += 1;
      const name = describe(error);
      if (name.startsWith('LockTimeoutError')) counters.timeouts += 1;
      send({
        type: 'attempt-failed',
        at: mono(),
        resource: String((error as { path?: unknown }).path ?? ''),
        error: name,
        elapsedMs: mono() - attemptAt,
        timeoutMs,
      });
      await sleep(random.int(5, 50));
      continue;
    }
    acquiring -= 1;
    waiting.delete(attempt);
    const { ids, endAll, anyLost } = track(acquisition, attemptAt);
    try {
      await use(acquisition, ids, anyLost);
    } finally {
      endAll();
      const releasing = mono();
      let error: string | undefined;
      await acquisition.release().catch((caught: unknown) => {
        error = describe(caught);
      });
      for (const holdId of ids) {
        send({ type: 'release-done', holdId, ms: mono() - releasing, ...(error ? { error } : {}) });
      }
    }
    await sleep(random.int(0, config!.profile.thinkMsMax));
  }
}

function abortableSignal(): AbortSignal {
  return new AbortController().signal;
}

// ---- the modes ----

/** `one-client` mode: the worker's loops, each a waiter of its one client. */
const ONE_CLIENT_LOOPS = 4;

function lockOptions(signal: AbortSignal, timeoutMs: number | undefined) {
  return {
    signal,
    onSuspended: config!.onSuspended,
    reentrant: false,
    data: `worker-${config!.index}`,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

function fromLease(
  lease: {
    node: string;
    fencingToken: number;
    sessionId: string;
    signal: AbortSignal;
    release(): Promise<void>;
  },
  resource: string,
  kind: HoldKind,
): Acquisition {
  return {
    holds: [
      {
        resource,
        kind,
        node: lease.node,
        token: lease.fencingToken,
        sessionId: lease.sessionId,
        signal: lease.signal,
      },
    ],
    fenced: kind !== 'lease' && kind !== 'read',
    release: () => lease.release(),
  };
}

async function zkrxWorker(client: ZkClient): Promise<void> {
  const resources = config!.resources;
  const mutexTake = async (signal: AbortSignal, timeoutMs: number | undefined) => {
    const path = random.pick(resources);
    return fromLease(
      await acquire(client, path, lockOptions(signal, timeoutMs)),
      path,
      'exclusive',
    );
  };
  switch (config!.mode) {
    case 'mutex':
      return loop(mutexTake);
    case 'one-client':
      // One service, many requests on one lock: the worker's loops are waiters of its one
      // client, queued behind each other (the local hand-off) and behind other workers' nodes.
      await Promise.all(Array.from({ length: ONE_CLIENT_LOOPS }, () => loop(mutexTake)));
      return;
    case 'rwlock':
      return loop(async (signal, timeoutMs) => {
        const path = random.pick(resources);
        if (random.chance(0.6)) {
          return fromLease(
            await acquireRead(client, path, lockOptions(signal, timeoutMs)),
            path,
            'read',
          );
        }
        return fromLease(
          await acquireWrite(client, path, lockOptions(signal, timeoutMs)),
          path,
          'write',
        );
      });
    case 'semaphore':
      return loop(async (signal, timeoutMs) => {
        const path = random.pick(resources);
        const { reentrant: _, ...options } = lockOptions(signal, timeoutMs);
        const lease = await acquireSemaphore(client, path, { ...options, leases: config!.leases });
        return fromLease(lease, path, 'lease');
      });
    case 'multi-lock':
      return loop(async (signal, timeoutMs) => {
        const paths = random.sample(resources, random.int(2, Math.max(2, config!.multiCount)));
        const multi = await acquireAll(client, paths, lockOptions(signal, timeoutMs));
        return {
          holds: multi.leases.map((lease) => ({
            resource: lease.path,
            kind: 'exclusive' as const,
            node: lease.node,
            token: lease.fencingToken,
            sessionId: lease.sessionId,
            signal: lease.signal,
          })),
          fenced: true,
          release: () => multi.release(),
        };
      });
    case 'deaf':
      // Positive control: a mutex whose holder hears of its loss a session timeout late.
      return loop(async (signal, timeoutMs) => {
        const path = random.pick(resources);
        const lease = await acquire(client, path, lockOptions(signal, timeoutMs));
        const held = fromLease(lease, path, 'exclusive');
        const late = new AbortController();
        const hear = () =>
          setTimeout(() => late.abort(lease.signal.reason), config!.sessionTimeoutMs);
        if (lease.signal.aborted) hear();
        else lease.signal.addEventListener('abort', hear, { once: true });
        return { ...held, holds: held.holds.map((hold) => ({ ...hold, signal: late.signal })) };
      });
    case 'broken':
      // Positive control: make the node, then go ahead without looking at the queue.
      return loop(async () => {
        const path = random.pick(resources);
        await client.promises.mkdirp(path, { mode: 'container' });
        const created = await client.promises.create(
          `${path}/${protectedName('lock-').name}`,
          null,
          {
            mode: 'ephemeral',
            sequential: true,
          },
        );
        return {
          holds: [
            {
              resource: path,
              kind: 'exclusive',
              node: created.path,
              token: created.stat.czxid,
              sessionId: created.stat.ephemeralOwner,
              signal: abortableSignal(),
            },
          ],
          fenced: true,
          release: () => client.promises.delete(created.path).catch(() => {}),
        };
      });
    case 'leader':
      return leaderWorker(client);
    case 'fleet':
    case 'broken-fleet':
    case 'slow-fleet':
    case 'stale-fleet':
      return fleetWorker(client);
    default:
      throw new Error(`unknown mode ${config!.mode}`);
  }
}

/** Leader mode: an `elect` loop on the first path and a `whileLeader` on the second, at once. */
async function leaderWorker(client: ZkClient): Promise<void> {
  const [electPath, selectorPath] = config!.resources as [string, string];
  let candidacies = 0;
  const candidate = () => ({
    id: `worker-${config!.index}-${++candidacies}`,
    onSuspended: config!.onSuspended,
  });

  // whileLeader: the work is a term; it completes to hand over (requeue), or is torn down on
  // loss. Unsubscribing the whole candidacy (idle, stop) is our own release.
  let selector: Subscription | undefined;
  let leaving = false;
  const term = (leader: LeaderTerm) =>
    new Observable<never>((subscriber) => {
      // Subscribed: this candidate leads from now on, on the term's node.
      const attemptAt = mono();
      const ended = new AbortController();
      const abortedAt = abortClock(ended.signal);
      let finished: (() => void) | undefined;
      let done = false;
      const acquisition: Acquisition = {
        acquiredAt: attemptAt,
        holds: [
          {
            resource: selectorPath,
            kind: 'leader',
            node: leader.node,
            token: leader.fencingToken,
            sessionId: client.sessionId,
            signal: ended.signal,
            abortedAt,
          },
        ],
        fenced: true,
        release: async () => {},
      };
      const { ids, endAll, anyLost } = track(acquisition, attemptAt);
      finished = endAll;
      void (async () => {
        try {
          await use(acquisition, ids, anyLost);
        } finally {
          if (!ended.signal.aborted && !done) {
            done = true;
            endAll();
            subscriber.complete();
          }
        }
      })().catch((error: unknown) => subscriber.error(error));
      return () => {
        if (done) return;
        done = true;
        // Torn down before the work completed: our own leaving is a release, else a loss.
        if (leaving) finished?.();
        else {
          ended.abort(
            leader.signal.aborted
              ? leader.signal.reason
              : new Error('whileLeader unsubscribed the work'),
          );
        }
      };
    });
  const standSelector = () => {
    selector?.unsubscribe();
    leaving = false;
    // One term a candidacy (a fresh id each): stand again on completion.
    const options = { ...candidate(), requeue: false };
    let current: Subscription | undefined;
    let ended = false;
    const clear = () => {
      ended = true;
      if (current && selector === current) selector = undefined;
    };
    current = whileLeader(client, selectorPath, term, options).subscribe({
      error: (error: unknown) => {
        send({ type: 'note', at: mono(), text: `whileLeader errored: ${describe(error)}` });
        clear();
      },
      complete: clear,
    });
    if (!ended) selector = current;
  };
  const selectorIdle = setInterval(() => {
    if ((idle || stopping) && selector) {
      leaving = true;
      selector.unsubscribe();
      selector = undefined;
    } else if (!idle && !stopping && !selector && started) standSelector();
  }, 20);

  try {
    await loop(async (signal) => {
      const options = candidate();
      const election = joinElection(client, electPath, options);
      // Rejected: this attempt failed; the candidacy would stand again a second later: leave.
      await election.joined.catch(async (error: unknown) => {
        await election.leave();
        throw error;
      });
      const onAbort = () => void election.leave();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        // The term as it begins: leadership$ tells synchronously, while the election's token is
        // still this term's (a later look-up could see the next term, or none).
        const began = await new Promise<{ at: number; signal: AbortSignal; token?: number }>(
          (resolve, reject) => {
            const fail = () => reject(signal.reason ?? new Error('aborted'));
            if (signal.aborted) return fail();
            signal.addEventListener('abort', fail, { once: true });
            const watching = election.leadership$.subscribe({
              next: (leading) => {
                if (!leading) return;
                resolve({ at: mono(), signal: election.signal, token: election.fencingToken });
                queueMicrotask(() => watching.unsubscribe());
              },
              complete: () => reject(new Error(`election ${electPath} closed`)),
            });
          },
        );
        const termSignal = began.signal;
        const abortedAt = abortClock(termSignal);
        return {
          acquiredAt: began.at,
          holds: [
            {
              resource: electPath,
              kind: 'leader',
              node: undefined,
              token: began.token,
              sessionId: client.sessionId,
              signal: termSignal,
              abortedAt,
            },
          ],
          fenced: began.token !== undefined,
          release: () => election.leave(),
        };
      } catch (error) {
        await election.leave();
        throw error;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    });
  } finally {
    clearInterval(selectorIdle);
    leaving = true;
    selector?.unsubscribe();
  }
}

/**
 * Fleet modes: a partition member (partition-worker.ts) that joins, leaves and changes its item
 * set when the coordinator says, until told to stop. The stall aims at it while it owns items.
 */
async function fleetWorker(client: ZkClient): Promise<void> {
  const fleet = config!.fleet;
  if (!fleet) throw new Error('fleet mode without its partition');
  member = new PartitionMember({
    client,
    index: config!.index,
    fleet,
    random,
    counters,
    holding,
    send,
    writeRegister,
    nextHoldId: () => `w${config!.index}-${nextHold++}`,
    held: () => {
      if (pendingStall) aimStall();
    },
    describe,
  });
  await startGate.promise;
  await stopGate.promise;
  // Leaves: the items' releases are tracked by the client, whose close (in main) waits for them.
  member.stop();
}

/** The Curator worker: the same loop over Curator's InterProcessMutex in the Java peer. */
async function curatorWorker(): Promise<void> {
  const peer: Peer = await startPeer('curator', {
    connectString: config!.connect,
    sessionTimeoutMs: config!.sessionTimeoutMs,
  });
  // Fencing tokens: the czxid of Curator's node, read on the servers directly.
  const direct = createClient({ connect: config!.directConnect, sessionTimeoutMs: 10_000 });
  let lost: AbortController | undefined;
  const reportSession = async (state: string) => {
    const credentials = await peer.sessionCredentials().catch(() => undefined);
    send({
      type: 'session',
      state,
      sessionId: credentials?.sessionId,
      password: credentials?.password,
      at: mono(),
    });
  };
  peer.onEvent((event) => {
    if (event.event !== 'connection' || event.session !== 'default') return;
    // What a Curator user must do: treat SUSPENDED / LOST as the end of the lock.
    if (event.state === 'SUSPENDED' || event.state === 'LOST')
      lost?.abort(new Error(`Curator ${event.state}`));
    if (event.state === 'CONNECTED' || event.state === 'RECONNECTED')
      void reportSession(event.state);
  });
  await reportSession('CONNECTED');
  send({ type: 'ready', pid: process.pid, at: mono() });
  try {
    await loop(async (signal, timeoutMs) => {
      const path = random.pick(config!.resources);
      const hold = await peer.acquire('mutex', path, {
        signal,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
      const acquiredAt = mono();
      lost = new AbortController();
      const abortedAt = abortClock(lost.signal);
      const stat = hold.node ? await direct.promises.exists(hold.node).catch(() => null) : null;
      if (!stat) lost.abort(new Error('Curator node gone at once'));
      const credentials = await peer.sessionCredentials().catch(() => undefined);
      return {
        holds: [
          {
            resource: path,
            kind: 'exclusive',
            node: hold.node ?? undefined,
            token: stat?.czxid,
            sessionId: credentials?.sessionId ?? stat?.ephemeralOwner,
            signal: lost.signal,
            abortedAt,
          },
        ],
        acquiredAt,
        fenced: true,
        release: () => peer.release(hold.id),
      };
    });
  } finally {
    await peer.close();
    await direct.close();
  }
}

async function main(): Promise<void> {
  if (config!.mode === 'curator') {
    await curatorWorker();
  } else {
    const client = createClient({
      connect: config!.connect,
      sessionTimeoutMs: config!.sessionTimeoutMs,
      connectTimeoutMs: config!.connectTimeoutMs ?? 60_000,
      followEnsemble: { address: throughProxy },
      // ZKRX_SOAK_CLIENT_LOG=1: the client's own log lines come back as notes (the JSON report).
      ...(process.env.ZKRX_SOAK_CLIENT_LOG
        ? {
            logLevel: 'info' as const,
            logger: {
              info: (text: string) => send({ type: 'note', at: mono(), text }),
              warn: (text: string) => send({ type: 'note', at: mono(), text }),
              error: (text: string) => send({ type: 'note', at: mono(), text }),
            },
          }
        : {}),
    });
    client.session$.subscribe(({ state, sessionId }) => {
      const credentials = state === 'connected' ? client.sessionCredentials() : undefined;
      send({
        type: 'session',
        state,
        sessionId,
        password: credentials?.password,
        at: mono(),
      });
    });
    // The first connection may take long on a loaded machine: boot-fleet's short connect timeout
    // is for the fleet's own waits, not this one.
    await client.connected(60_000);
    send({ type: 'ready', pid: process.pid, at: mono() });
    try {
      await zkrxWorker(client);
    } finally {
      await client.close();
    }
  }
  send({ type: 'stopped', counters });
  // Leave once the last message is out.
  process.send?.({ type: 'note', at: mono(), text: 'bye' }, () => process.exit(0));
}

void main().catch((error: unknown) => {
  send({
    type: 'fatal',
    at: mono(),
    error: `main: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  });
  setTimeout(() => process.exit(70), 50);
});
