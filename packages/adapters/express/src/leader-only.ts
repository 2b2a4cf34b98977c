/**
 * leaderOnly: Express middleware that lets requests through only on the instance that leads
 * a ZooKeeper election; the others answer 503 with Retry-After (or a handler of yours).
 */
import type { ZkClient } from '@zkrx/core';
import { joinElection } from '@zkrx/leader';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Observable } from 'rxjs';
import {
  checkClient,
  checkFunction,
  checkOptionalString,
  checkOptions,
  checkPath,
  checkSeconds,
} from './options';
import { responseEnded } from './response-state';
import { answerRetryLater, notLeader } from './retry-later';

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
   * Aborts when the current leadership ends or `leave()` begins (already aborted while not
   * leading).
   */
  readonly signal: AbortSignal;
  /**
   * Leaves the election: answers 503 from now on, aborts `signal`, waits for the requests this
   * instance let through to end (`finish` or `close` of their response), then hands leadership
   * over (the next instance leads within a round trip). Idempotent.
   */
  leave(): Promise<void>;
}

const where = 'leaderOnly';

/**
 * Express middleware (4 and 5) that lets requests through only on the instance leading the
 * election at `path`: every other instance answers 503 with `Retry-After` and
 * `{ error: 'not-leader' }`, or calls `onNotLeader`.
 *
 * The instance joins the election when the middleware is created (not at the first request),
 * so the leader is known before traffic arrives and failover needs no traffic. Leadership
 * moves when the leader's client closes, its session expires, or its connection is lost (the
 * latter two: at once, since its ownership is then uncertain); `leave()` leaves the election
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
 * @return The middleware, with `isLeader`, `leadership$`, `signal` and `leave()`.
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

  // The candidacy (@zkrx/leader) is the state: it stands again after a loss (at once) or a
  // failure (a second later), signals each term, keeps the requests in view, and leaves.
  const election = joinElection(client, path, id === undefined ? {} : { id });

  const middleware = function leaderOnlyMiddleware(
    request: Request,
    response: Response,
    next: NextFunction,
  ): void {
    if (election.isLeader) {
      // Kept in view by the candidacy: leave() hands over only once the response has ended.
      election.track(responseEnded(response));
      next();
      return;
    }
    if (onNotLeader) {
      onNotLeader(request, response, next);
      return;
    }
    answerRetryLater(response, 503, retryAfterSeconds, notLeader);
  };

  return Object.defineProperties(middleware, {
    isLeader: { get: () => election.isLeader, enumerable: true },
    leadership$: { value: election.leadership$, enumerable: true },
    signal: { get: (): AbortSignal => election.signal, enumerable: true },
    // Steps down at once (503 from now on, signal aborted), waits for the requests it let
    // through, then hands leadership over.
    leave: { value: () => election.leave(), enumerable: true },
  }) as LeaderOnlyHandler;
}
