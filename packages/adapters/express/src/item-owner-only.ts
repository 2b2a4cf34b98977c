/**
 * itemOwnerOnly: Express middleware that serves a request only on the instance owning the
 * request's item in a @zkrx/fleet partition (tenants, shards); the others answer 503 with
 * Retry-After (or a handler of yours, e.g. a redirect to the owner).
 */
import type { ZkClient } from '@zkrx/core';
import {
  type Assignment,
  defaultMemberId,
  type JoinPartitionOptions,
  joinPartition,
  type OwnedItem,
  type PartitionFailure,
  type PartitionOptions,
} from '@zkrx/fleet';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Observable } from 'rxjs';
import {
  checkClient,
  checkFunction,
  checkOptionalString,
  checkOptions,
  checkPath,
  checkSeconds,
  checkStatusCode,
} from './options';
import { localOf, responseEnded } from './response-state';
import { answerRetryLater, notOwner, withStatus } from './retry-later';

/** Options of `itemOwnerOnly`, checked when the middleware is created. */
export interface ItemOwnerOnlyOptions {
  /** The client whose session is this instance's membership (one per app instance). */
  client: ZkClient;
  /** The partition's path, shared by every instance. */
  path: string;
  /** The items (the same set on every instance): an array, or an observable of the set. */
  items: readonly string[] | Observable<readonly string[]>;
  /** The item a request is for (a tenant, a shard): one of `items`. */
  item: (request: Request) => string;
  /** This instance's member id, unique in the partition. Default: @zkrx/fleet's `defaultMemberId`. */
  id?: string;
  /** Shown to the other members and by `zkrx members`: this instance's URL, say. */
  data?: string;
  /** `release` (default): items are given up while the connection is suspended. */
  onSuspended?: PartitionOptions['onSuspended'];
  /** The status answered when another instance owns the item. Default 503. */
  statusCode?: number;
  /** The `Retry-After` header (seconds) of that answer. Default 1. */
  retryAfterSeconds?: number;
  /** Answers requests for items this instance does not own (instead of `statusCode`). */
  onNotOwner?: (request: Request, response: Response, next: NextFunction) => void;
}

/** The middleware, with this instance's assignment. */
export interface ItemOwnerOnlyHandler extends RequestHandler {
  /** This instance's latest assignment (undefined until the first). */
  readonly assignment: Assignment | undefined;
  /** Replays the latest assignment, then every new one; completes once left. */
  readonly assignment$: Observable<Assignment>;
  /**
   * Every failure of this instance's membership, as it comes (`joinPartition`'s `errors$`): it
   * left the partition (it answers `statusCode` for every item) and joins again in `retryInMs`,
   * or a problem it goes on through. Log it: nothing else tells.
   */
  readonly errors$: Observable<PartitionFailure>;
  /**
   * Leaves the partition: answers `statusCode` from now on, gives every item up (their signals
   * abort), and resolves once the requests it let through have ended (`finish` or `close` of
   * their response); each item's lock is released as its last request ends, so the next owner
   * never serves an item while this instance still does. Idempotent.
   */
  leave(): Promise<void>;
}

const where = 'itemOwnerOnly';
const OWNED = Symbol.for('@zkrx/express.ownedItem');

/**
 * Express middleware (4 and 5) that lets a request through only on the instance owning its
 * item in the @zkrx/fleet partition at `path`: the items are spread over the instances (each
 * owned by exactly one at a time, balanced, moving only when instances come and go), and a
 * request for an item another instance owns gets `statusCode` (503) with `Retry-After` and
 * `{ error: 'not-owner', item }`, or `onNotOwner`.
 *
 * The instance joins the partition when the middleware is created. A request let through is
 * tracked on its item (`ownedItemOf(response)` gives the item's `signal` and `fencingToken`):
 * when the item moves, its signal aborts, and its lock is released only once the request has
 * ended. If joining fails (ZooKeeper unreachable at start, an id already taken), it joins again
 * every second until the client closes.
 *
 * ## Example
 * ```ts
 * const tenants = itemOwnerOnly({
 *   client, path: '/shop/fleet/tenants', items: ['acme', 'globex', 'initech'],
 *   item: (request) => request.params.tenant, data: process.env.PUBLIC_URL,
 * });
 * app.post('/tenants/:tenant/sync', tenants, async (request, response) => {
 *   const { signal, fencingToken } = ownedItemOf(response);
 *   response.json(await syncTenant(request.params.tenant, { signal, fencingToken }));
 * });
 * // On the tenant's owner: 200. On the others: 503, Retry-After: 1, { "error": "not-owner" }.
 * ```
 *
 * @param options The client, the partition and its items, and what non-owners answer.
 * @return The middleware, with `assignment`, `assignment$`, `errors$` and `leave()`.
 */
export function itemOwnerOnly(options: ItemOwnerOnlyOptions): ItemOwnerOnlyHandler {
  const given = checkOptions(where, options);
  const client = checkClient(where, given.client);
  const path = checkPath(where, given.path);
  const itemOf = checkFunction<ItemOwnerOnlyOptions['item']>(where, 'item', given.item, true);
  const id = checkOptionalString(where, 'id', given.id) ?? defaultMemberId;
  const data = checkOptionalString(where, 'data', given.data);
  const statusCode = checkStatusCode(where, 'statusCode', given.statusCode, 503);
  const retryAfterSeconds = checkSeconds(where, 'retryAfterSeconds', given.retryAfterSeconds, 1);
  const onNotOwner = checkFunction<NonNullable<ItemOwnerOnlyOptions['onNotOwner']>>(
    where,
    'onNotOwner',
    given.onNotOwner,
    false,
  );
  const items = given.items as ItemOwnerOnlyOptions['items'];
  const joinOptions: JoinPartitionOptions = { id };
  if (data !== undefined) joinOptions.data = data;
  if (given.onSuspended !== undefined) {
    joinOptions.onSuspended = given.onSuspended as PartitionOptions['onSuspended'];
  }
  // Checks the partition's input (item names, the set, the id as a znode name) at once, then
  // joins, and joins again a second later whenever joining fails, until left.
  const membership = joinPartition(client, path, items, joinOptions);
  const assignment$ = membership.assignment$;

  const middleware = function itemOwnerOnlyMiddleware(
    request: Request,
    response: Response,
    next: NextFunction,
  ): void {
    let item: unknown;
    try {
      item = itemOf(request);
    } catch (error) {
      next(withStatus(error, 500));
      return;
    }
    const owned = typeof item !== 'string' ? undefined : membership.assignment?.owned.get(item);
    if (owned?.isOwned) {
      // Kept in view by the item: a move (or leave) releases its lock once the response ended;
      // and by the membership: leave() resolves once it ended.
      membership.track(owned.track(responseEnded(response)));
      (response.locals as Record<symbol, unknown>)[OWNED] = owned;
      response.locals.ownedItem = owned;
      next();
      return;
    }
    if (onNotOwner) {
      onNotOwner(request, response, next);
      return;
    }
    answerRetryLater(response, statusCode, retryAfterSeconds, notOwner, {
      item: typeof item === 'string' ? item : null,
    });
  };

  return Object.defineProperties(middleware, {
    assignment: { get: () => membership.assignment, enumerable: true },
    assignment$: { value: assignment$, enumerable: true },
    errors$: { value: membership.errors$, enumerable: true },
    // Every item given up at once (signals abort); each lock is released once its requests end.
    leave: { value: () => membership.leave(), enumerable: true },
  }) as ItemOwnerOnlyHandler;
}

/**
 * The item of a request that `itemOwnerOnly` let through (`res.locals.ownedItem`): its `signal`
 * (aborts when the item moves or the instance leaves) and `fencingToken`.
 *
 * @param response The response of a request that went through `itemOwnerOnly`.
 * @return The owned item. Throws ZkError `BadArguments` when no `itemOwnerOnly` ran before.
 */
export function ownedItemOf(response: Response): OwnedItem {
  return localOf<OwnedItem>(
    response,
    OWNED,
    'ownedItemOf: this request owns no item (no itemOwnerOnly middleware before this handler)',
  );
}
