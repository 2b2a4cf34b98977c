/**
 * LeaderService: this application's candidacies in leader elections, one per path, joined once
 * (at boot for every @LeaderOnly path) and left when the application shuts down.
 */
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { type Election, elect } from '@zkrx/leader';
import { validateLockPath } from '@zkrx/lock';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { leaderOnlyPathsOf } from './leader-only-paths';
import { ZK_CONNECTION } from './tokens';
import type { ZkConnection } from './zk-connection';

/**
 * One election this application stands in: @zkrx/leader's candidacy (term signal, runs kept in
 * view, graceful close), and its leadership as a subject that errors if it could not be joined.
 */
interface Candidacy {
  readonly leading: BehaviorSubject<boolean>;
  /** Resolves once queued; rejects if the candidacy could not be made. */
  readonly joined: Promise<Election>;
  election: Election | undefined;
}

const notLeading = (path: string) =>
  AbortSignal.abort(new ZkError(ZkErrorCode.Aborted, `election ${path}: not the leader`));

/**
 * This application's leadership, per election path. Inject it anywhere; `@LeaderOnly(path)`
 * uses it too.
 *
 * Each path's election is joined once per application (latch style: Curator LeaderLatch layout,
 * `_c_<uuid>-latch-<n>` nodes holding the candidate id), on first use or at boot for @LeaderOnly
 * paths, and left when the application shuts down. While the session is suspended the candidate
 * steps down (unless `electionOnSuspended: 'continue'`); after an expiry it stands again by
 * itself.
 *
 * Shutdown never lets two applications run leader-only work at once: this application stops
 * leading at once (`isLeader` false, @LeaderOnly calls skip), aborts `signal(path)` so the runs
 * in flight can wrap up, waits for them to settle, and only then leaves the election — the next
 * candidate leads within a round trip of the last run's end. (A lost leadership cannot wait:
 * the runs in flight see `signal(path)` abort.)
 */
@Injectable()
export class LeaderService implements OnModuleInit, OnModuleDestroy {
  private readonly candidacies = new Map<string, Candidacy>();
  /** @LeaderOnly paths of the instances made before the application initialised. */
  private readonly pending = new Set<string>();
  private initialised = false;
  private closed = false;

  constructor(@Inject(ZK_CONNECTION) private readonly connection: ZkConnection) {}

  /**
   * Joins the election at `path` (once; later calls share the candidacy) and resolves when this
   * application's candidate is queued. Leadership follows within a round trip if nobody leads.
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
    await this.candidacy(path).joined;
  }

  /**
   * Whether this application leads the election at `path` right now. Joins it if not yet joined
   * (and answers `false` until elected).
   *
   * @param path The election path.
   * @return True while leading.
   */
  isLeader(path: string): boolean {
    const { leading } = this.candidacy(path);
    return !this.closed && !leading.hasError && leading.value;
  }

  /**
   * Runs `work` if this application leads the election at `path`, as @LeaderOnly does: returns
   * its result, or `undefined` without running it when not leading. A run returning a promise
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
  runIfLeader<T>(path: string, work: () => T): T | undefined {
    if (!this.isLeader(path)) return undefined;
    return this.candidacy(path).election?.runIfLeader(() => work());
  }

  /**
   * Whether this application leads the election at `path`: now, then on every change; completes
   * when the application shuts down. Joins the election if not yet joined.
   *
   * ## Example
   * ```ts
   * leaderService.isLeader$('/election/reports').subscribe((leading) => console.log(leading));
   * // Output: false
   * //         true
   * ```
   *
   * @param path The election path.
   * @return Whether this application leads, now and on every change.
   */
  isLeader$(path: string): Observable<boolean> {
    return this.candidacy(path).leading.pipe(distinctUntilChanged());
  }

  /**
   * Resolves once this application leads the election at `path`, with the signal of that term
   * (aborted when the leadership ends). Rejects ZkError `ClientClosed` if the application shuts
   * down first.
   *
   * @param path The election path.
   * @return The term's signal.
   */
  async whenLeader(path: string): Promise<AbortSignal> {
    const election = await this.candidacy(path).joined;
    await election.whenLeader();
    return this.signal(path);
  }

  /**
   * The signal of the current term at `path`: aborts when this leadership ends or the
   * application begins to shut down. Already aborted while not leading.
   *
   * @param path The election path.
   * @return The current term's signal.
   */
  signal(path: string): AbortSignal {
    const shutdown = this.connection.signal;
    if (shutdown.aborted) return shutdown;
    return this.candidacy(path).election?.signal ?? notLeading(path);
  }

  /**
   * Takes note of an instance with @LeaderOnly methods (Nest made it and injected this service):
   * its elections are joined when the application initialises, or at once after that.
   */
  adopt(type: Function): void {
    for (const path of leaderOnlyPathsOf(type)) {
      if (this.initialised) void this.join(path).catch(() => {});
      else this.pending.add(path);
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
    // Aborts every signal(path), and calls waiting for a lock give up now: a leader-only run
    // waiting on one must not hold the shutdown until another instance releases it.
    this.connection.stop();
    const candidacies = [...this.candidacies.values()];
    for (const { leading } of candidacies) if (!leading.hasError) leading.next(false);
    // Each election steps down at once, waits for its runs, then hands over.
    await Promise.all(
      candidacies.map(async (candidacy) => {
        const election = await candidacy.joined.catch(() => undefined);
        await election?.close();
        candidacy.leading.complete();
      }),
    );
  }

  private candidacy(path: string): Candidacy {
    const existing = this.candidacies.get(path);
    if (existing) return existing;
    validateLockPath(path, 'election');
    const leading = new BehaviorSubject(false);
    const joined = this.closed
      ? Promise.reject(
          new ZkError(ZkErrorCode.ClientClosed, `election ${path}: the application is shut down`),
        )
      : elect(this.connection.client, path, {
          id: this.connection.candidateId,
          onSuspended: this.connection.electionOnSuspended,
        });
    const candidacy: Candidacy = { leading, joined, election: undefined };
    joined.then(
      (election) => {
        candidacy.election = election;
        election.leadership$.subscribe({
          next: (value) => leading.next(value && !this.closed),
          complete: () => leading.next(false),
        });
      },
      (error: unknown) => leading.error(error),
    );
    this.candidacies.set(path, candidacy);
    return candidacy;
  }
}
