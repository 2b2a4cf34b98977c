/**
 * leaderOnly: Express middleware that lets requests through only on the instance that leads
 * a ZooKeeper election; the others answer 503 with Retry-After (or a handler of yours).
 */
import { type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { type Election, elect } from '@zkrx/leader';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import {
  checkClient,
  checkFunction,
  checkOptionalString,
  checkOptions,
  checkPath,
  checkSeconds,
} from './options';
import { answerRetryLater } from './retry-later';

export interface LeaderOnlyOptions {
  /** The client whose session stands in the election (one per app instance). */
  client: ZkClient;
  /** The election path, shared by every instance (Curator LeaderLatch layout). */
  path: string;
  /** This instance's participant id, shown to `leader$` watchers. Default `hostname:pid`. */
  id?: string;
  /** The `Retry-After` header (seconds) of the 503 answered while not leading. Default 5. */
  retryAfterSeconds?: number;
  /** Answers requests while this instance does not lead (instead of 503), e.g. a proxy to the leader. */
  onNotLeader?: (request: Request, response: Response, next: NextFunction) => void;
}

/** The middleware, with the state of its candidacy. */
export interface LeaderOnlyHandler extends RequestHandler {
  /** True while this instance leads. */
  readonly isLeader: boolean;
  /** Replays whether this instance leads, then every change; completes once it leaves. */
  readonly leadership$: Observable<boolean>;
  /**
   * Aborts when the current leadership ends or `close()` begins (already aborted while not
   * leading).
   */
  readonly signal: AbortSignal;
  /**
   * Leaves the election: answers 503 from now on, aborts `signal`, waits for the requests this
   * instance let through to end (`finish` or `close` of their response), then hands leadership
   * over (the next instance leads within a round trip). Idempotent.
   */
  close(): Promise<void>;
}

const where = 'leaderOnly';
const rejoinDelayMs = 1_000;

/**
 * Express middleware (4 and 5) that lets requests through only on the instance leading the
 * election at `path`: every other instance answers 503 with `Retry-After` and
 * `{ error: 'not-leader' }`, or calls `onNotLeader`.
 *
 * The instance joins the election when the middleware is created (not at the first request),
 * so the leader is known before traffic arrives and failover needs no traffic. Leadership
 * moves when the leader's client closes, its session expires, or its connection is lost (the
 * latter two: at once, since its ownership is then uncertain); `close()` leaves the election
 * once the requests it let through have ended (never two instances serving at once), and so
 * does closing the client (at once). If the candidacy fails (ZooKeeper unreachable at start),
 * it stands again every second until the client closes.
 *
 * ## Example
 * ```ts
 * const onlyLeader = leaderOnly({ client, path: '/shop/election/reports', id: process.env.HOSTNAME });
 * app.post('/reports/rebuild', onlyLeader, async (request, response) => {
 *   response.json(await rebuildReports({ signal: onlyLeader.signal }));
 * });
 * // On the leader: 200. On the others: 503, Retry-After: 5.
 * ```
 *
 * @param options The client, the election path, and what non-leaders answer.
 * @return The middleware, with `isLeader`, `leadership$`, `signal` and `close()`.
 */
export function leaderOnly(options: LeaderOnlyOptions): LeaderOnlyHandler {
  const given = checkOptions(where, options);
  const client = checkClient(where, given.client);
  const path = checkPath(where, given.path);
  const id = checkOptionalString(where, 'id', given.id);
  const retryAfterSeconds = checkSeconds(where, 'retryAfterSeconds', given.retryAfterSeconds, 5);
  const onNotLeader = checkFunction<NonNullable<LeaderOnlyOptions['onNotLeader']>>(
    where,
    'onNotLeader',
    given.onNotLeader,
    false,
  );

  const leading = new BehaviorSubject(false);
  const notLeading = new AbortController();
  notLeading.abort(new ZkError(ZkErrorCode.Aborted, `${where} ${path}: not the leader`));
  /** The candidacy (@zkrx/leader): term signal, requests kept in view, graceful close. */
  let election: Election | undefined;
  let closed = false;
  let rejoin: ReturnType<typeof setTimeout> | undefined;
  let joining: Promise<void> | undefined;

  const stop = (): void => {
    closed = true;
    clearTimeout(rejoin);
    if (leading.value) leading.next(false);
    leading.complete();
  };
  const standAgainLater = (): void => {
    if (closed) return;
    if (client.isClosed) return stop();
    rejoin = setTimeout(join, rejoinDelayMs);
    rejoin.unref?.();
  };
  function join(): void {
    rejoin = undefined;
    if (closed) return;
    joining = elect(client, path, id === undefined ? {} : { id }).then(
      (joined) => {
        if (closed) return joined.close();
        election = joined;
        joined.leadership$.subscribe({
          next: (isLeader) => {
            if (!closed && isLeader !== leading.value) leading.next(isLeader);
          },
          complete: () => {
            // The candidacy ended: the client closed, or an error we cannot ride out.
            if (election === joined) election = undefined;
            if (!closed && leading.value) leading.next(false);
            standAgainLater();
          },
        });
      },
      () => standAgainLater(),
    );
  }
  join();

  const middleware = function leaderOnlyMiddleware(
    request: Request,
    response: Response,
    next: NextFunction,
  ): void {
    if (leading.value && election) {
      // Kept in view by the candidacy: close() hands over only once the response has ended.
      election.track(
        new Promise<void>((resolve) => {
          response.once('finish', resolve);
          response.once('close', resolve);
        }),
      );
      next();
      return;
    }
    if (onNotLeader) {
      onNotLeader(request, response, next);
      return;
    }
    answerRetryLater(response, 503, retryAfterSeconds, 'not-leader');
  };

  return Object.defineProperties(middleware, {
    isLeader: { get: () => leading.value, enumerable: true },
    leadership$: { value: leading.pipe(distinctUntilChanged()), enumerable: true },
    signal: {
      get: (): AbortSignal => (leading.value && election ? election.signal : notLeading.signal),
      enumerable: true,
    },
    close: {
      value: async (): Promise<void> => {
        if (closed) return;
        const current = election;
        stop();
        // Steps down at once (503 from now on, signal aborted), waits for the requests it let
        // through, then hands leadership over.
        await Promise.all([current?.close(), joining]);
        if (election === current) election = undefined;
      },
      enumerable: true,
    },
  }) as LeaderOnlyHandler;
}
