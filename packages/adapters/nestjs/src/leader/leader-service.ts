/**
 * LeaderService: this application's candidacies in leader elections, one per path, joined once
 * (at boot for every @LeaderOnly path) and left when the application shuts down.
 */
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import type { Election } from '@zkrx/leader';
import { validateLockPath } from '@zkrx/lock/recipe';
import {
  concat,
  defer,
  distinctUntilChanged,
  filter,
  firstValueFrom,
  type Observable,
  of,
  Subject,
  switchMap,
  take,
  takeUntil,
  throwError,
} from 'rxjs';
import { tickMarkerPath, tickOf } from '../connection/tick-marker';
import { ZK_CONNECTION } from '../connection/tokens';
import type { ZkConnection } from '../connection/zk-connection';
import { runWithLeadership } from './leader-context';

/**
 * This application's leadership, per election path. Inject it anywhere; `@LeaderOnly(path)`
 * uses it too.
 *
 * Each path's election is joined once per application (latch style: Curator LeaderLatch layout,
 * `_c_<uuid>-latch-<n>` nodes holding the module's `id`): at boot for @LeaderOnly paths, or by
 * `join(path)`; and left when the application shuts down (or by `leave(path)`). Reading —
 * `isLeader`, `signal`, `watchLeadership`, `whenLeader`, `runIfLeader` — never joins: on a path
 * not joined it answers "not leading". While the session is suspended the candidate steps down
 * (unless the module's `onSuspended: 'continue'`); after an expiry it stands again by itself,
 * and after a failure it cannot ride out, again a second later.
 *
 * Shutdown never lets two applications run leader-only work at once: this application stops
 * leading at once (`isLeader` false, @LeaderOnly calls skip), aborts `signal(path)` so the runs
 * in flight can wrap up, waits for them to settle, and only then leaves the election — the next
 * candidate leads within a round trip of the last run's end. (A lost leadership cannot wait:
 * the runs in flight see `signal(path)` abort.)
 */
@Injectable()
export class LeaderService implements OnModuleInit, OnModuleDestroy {
  /** One election per path: @zkrx/leader's, which stands, signals and leaves for us. */
  private readonly elections = new Map<string, Election>();
  /** Paths left with `leave(path)`: their election stays, over, until `join(path)`. */
  private readonly left = new Set<string>();
  /** @LeaderOnly paths of the instances made before the application initialised. */
  private readonly pending = new Set<string>();
  /** Emits the path of each election joined (`join`, and @LeaderOnly paths at boot). */
  private readonly joins = new Subject<string>();
  /** Emits once the application begins to shut down. */
  private readonly closing = new Subject<void>();
  private initialised = false;
  private closed = false;

  // Typed in the body: the connection (and the optional peers' types it names) stays out of the
  // published declarations, so that they load without @zkrx/leader or @zkrx/rwlock installed.
  private readonly connection: ZkConnection;

  constructor(@Inject(ZK_CONNECTION) connection: unknown) {
    this.connection = connection as ZkConnection;
  }

  /**
   * Joins the election at `path` (once; later calls share the candidacy, and a path left with
   * `leave(path)` is joined again) and resolves when this application's candidate is queued.
   * Leadership follows within a round trip if nobody leads. Rejects if that first attempt fails
   * (the candidate stands again a second later).
   *
   * ## Example
   * ```ts
   * await leaderService.join('/election/reports');
   * ```
   *
   * @param path The election path.
   * @return Resolves once queued.
   */
  async join(path: string): Promise<void> {
    if (this.left.delete(path)) this.elections.delete(path);
    const existing = this.elections.get(path);
    if (existing) return existing.joined;
    validateLockPath(path, 'election');
    if (this.closed) throw this.shutDown(path);
    const election = this.connection.joinElection(path);
    this.elections.set(path, election);
    this.joins.next(path);
    await election.joined;
  }

  /**
   * Leaves the election at `path`: stops leading at once (`signal(path)` aborts), waits for the
   * runs of `runIfLeader` (and @LeaderOnly) in flight there, then hands leadership over. The path
   * stays left (`isLeader` false, @LeaderOnly calls skip) until `join(path)`.
   *
   * ## Example
   * ```ts
   * await leaderService.leave('/election/reports');
   * ```
   *
   * @param path The election path.
   * @return Resolves once left (nothing to do when not joined).
   */
  async leave(path: string): Promise<void> {
    const election = this.elections.get(path);
    if (!election) return;
    this.left.add(path);
    await election.leave();
  }

  /**
   * Whether this application leads the election at `path` right now (false on a path it has not
   * joined: reading never joins).
   *
   * @param path The election path.
   * @return True while leading.
   */
  isLeader(path: string): boolean {
    return !this.closed && this.joined(path)?.isLeader === true;
  }

  /**
   * Runs `work` if this application leads the election at `path`, as @LeaderOnly does: returns
   * its result, or `undefined` without running it when not leading (or not joined). A run
   * returning a promise
   * (or any thenable) holds the leadership until it settles: shutdown waits for it before
   * leaving the election.
   *
   * ## Example
   * ```ts
   * await leaderService.runIfLeader('/election/reports', () => this.sendDailyReport());
   * ```
   *
   * @param path The election path.
   * @param work What only the leader runs.
   * @return The work's result, or `undefined` when not leading.
   */
  runIfLeader<T>(path: string, work: (signal: AbortSignal) => T): T | undefined {
    if (this.closed) return undefined;
    return this.joined(path)?.runIfLeader((term) => {
      // The term's signal, aborted at shutdown too; `leaderSignal()` in the work's context.
      const signal = AbortSignal.any([term, this.connection.signal]);
      return runWithLeadership(signal, () => work(signal));
    });
  }

  /**
   * Runs `work` if this application leads the election at `path` and the tick of now (the
   * nearest multiple of `tickMs`) is not claimed yet for `job`: at most once per tick across
   * the fleet, whatever the failovers and the clocks (see tick-marker.ts). The leader claims the
   * tick in a write fenced by its leadership (a persistent marker per job beside the election,
   * `<path>.ticks/<job>`), then runs. Resolves the work's result, or `undefined` when not
   * leading or the tick is claimed already (a tick may be skipped: during a failover, or when a
   * clock is ahead by more than `tickMs / 2`).
   *
   * ## Example
   * ```ts
   * @Cron('0 *\/5 * * * *')
   * sendDigest() {
   *   return this.leaders.runOncePerTick('/election/digest', 'digest', 300_000, () => this.send());
   * }
   * ```
   *
   * @param path The election path.
   * @param job The job's name: one marker per job.
   * @param tickMs The schedule's period (or its grid: 60_000 for a cron by the minute).
   * @param work What the leader runs, once per tick.
   * @return The work's result, or `undefined` when not run.
   */
  async runOncePerTick<T>(
    path: string,
    job: string,
    tickMs: number,
    work: (signal: AbortSignal) => T,
  ): Promise<Awaited<T> | undefined> {
    const tick = tickOf(Date.now(), tickMs);
    const election = this.joined(path);
    if (!election) return undefined;
    const marker = tickMarkerPath(path, job);
    return this.runIfLeader(path, async (signal): Promise<Awaited<T> | undefined> => {
      if (!(await this.connection.claimTick(election, marker, tick))) return undefined;
      // The term ended while claiming: the tick is claimed and not run (at most once).
      if (signal.aborted) return undefined;
      return await work(signal);
    });
  }

  /**
   * Whether this application leads the election at `path`: now, then on every change; completes
   * when the application shuts down (or leaves the path). On a path not joined yet: `false`,
   * then the election's once it is joined (reading never joins).
   *
   * ## Example
   * ```ts
   * leaderService.watchLeadership('/election/reports').subscribe((leading) => console.log(leading));
   * // Output: false
   * //         true
   * ```
   *
   * @param path The election path.
   * @return Whether this application leads, now and on every change.
   */
  watchLeadership(path: string): Observable<boolean> {
    return defer(() => {
      const election = this.joined(path);
      if (election) return election.leadership$;
      if (this.closed) return throwError(() => this.shutDown(path));
      // Waits for the join (or the shutdown), then follows that election until it is left.
      const once$ = this.joins.pipe(
        filter((joined) => joined === path),
        take(1),
        takeUntil(this.closing),
        switchMap(() => (this.joined(path) as Election).leadership$),
      );
      return concat(of(false), once$).pipe(distinctUntilChanged());
    });
  }

  /**
   * Resolves once this application leads the election at `path`, with the signal of that term
   * (aborted when the leadership ends). Waits for the path to be joined if it is not (reading
   * never joins). Rejects ZkError `ClientClosed` if the path is left or the application shuts
   * down first.
   *
   * @param path The election path.
   * @return The term's signal.
   */
  async whenLeader(path: string): Promise<AbortSignal> {
    validateLockPath(path, 'election');
    const led = await firstValueFrom(this.watchLeadership(path).pipe(filter(Boolean)), {
      defaultValue: false,
    });
    if (!led) throw this.shutDown(path);
    return this.signal(path);
  }

  /**
   * The signal of the current term at `path`: aborts when this leadership ends or the
   * application begins to shut down. Already aborted while not leading (or not joined: reading
   * never joins).
   *
   * @param path The election path.
   * @return The current term's signal.
   */
  signal(path: string): AbortSignal {
    const shutdown = this.connection.signal;
    if (shutdown.aborted) return shutdown;
    return (
      this.joined(path)?.signal ??
      AbortSignal.abort(
        new ZkError(
          ZkErrorCode.Aborted,
          `election ${validateLockPath(path, 'election')}: not joined`,
        ),
      )
    );
  }

  /**
   * Takes note of a @LeaderOnly method's election (Nest made an instance and injected this
   * service): joined when the application initialises, or at once after that.
   */
  adopt(path: string): void {
    if (!this.initialised) this.pending.add(path);
    else if (!this.left.has(path) && !this.elections.has(path)) {
      void this.join(path).catch(() => {});
    }
  }

  /** Joins the election of every @LeaderOnly method of the application's providers. */
  async onModuleInit(): Promise<void> {
    this.initialised = true;
    const paths = [...this.pending];
    this.pending.clear();
    await Promise.all(paths.map((path) => this.join(path)));
  }

  /**
   * Stops leading at once, waits for the @LeaderOnly runs in flight, then leaves every election
   * (leadership passes to the next candidate within a round trip).
   */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    this.closing.next();
    this.closing.complete();
    // Aborts every signal(path), and calls waiting for a lock give up now: a leader-only run
    // waiting on one must not hold the shutdown until another instance releases it.
    this.connection.stop();
    // Each election steps down at once, waits for its runs, then hands over.
    await Promise.all([...this.elections.values()].map((election) => election.leave()));
  }

  /** The election at `path` if joined (and not left); never joins. */
  private joined(path: string): Election | undefined {
    return this.left.has(path) ? undefined : this.elections.get(path);
  }

  private shutDown(path: string): ZkError {
    return new ZkError(ZkErrorCode.ClientClosed, `election ${path}: the application is shut down`);
  }
}
