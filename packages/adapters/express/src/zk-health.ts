/**
 * zkHealth: an Express route handler reporting whether this instance's ZooKeeper session is
 * usable, for load balancers and orchestrators' readiness probes.
 */
import { isReadWriteState, type SessionState, type ZkClient } from '@zkrx/core';
import type { Request, RequestHandler, Response } from 'express';
import { checkClient, checkOptions } from './options';

export interface ZkHealthOptions {
  /** The client to report on. */
  client: ZkClient;
}

/** The JSON body `zkHealth` answers with. */
export type ZkHealthBody =
  | { readonly status: 'up'; readonly state: SessionState; readonly sessionId: string | undefined }
  | { readonly status: 'down'; readonly state: SessionState };

const where = 'zkHealth';

/**
 * A route handler answering 200 `{ status: 'up', state, sessionId }` while the client is
 * connected (`connected` or `reconnected`), and 503 `{ status: 'down', state }` otherwise
 * (`connecting`, `suspended`, `expired`, `closed`, `auth-failed`). Never cached.
 *
 * ## Example
 * ```ts
 * app.get('/health/zookeeper', zkHealth({ client }));
 * // GET /health/zookeeper
 * // Output: 200 {"status":"up","state":"connected","sessionId":"1000a3f2c7e0004"}
 * ```
 *
 * @param options The client to report on.
 * @return The route handler.
 */
export function zkHealth(options: ZkHealthOptions): RequestHandler {
  const client = checkClient(where, checkOptions(where, options).client);
  return function zkHealthHandler(_request: Request, response: Response): void {
    const state = client.state;
    // `read-only` is down: no lock, election or partition can be taken there.
    const body: ZkHealthBody = isReadWriteState(state)
      ? { status: 'up', state, sessionId: client.sessionId }
      : { status: 'down', state };
    response
      .status(body.status === 'up' ? 200 : 503)
      .set('Cache-Control', 'no-store')
      .json(body);
  };
}
