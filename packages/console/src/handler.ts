/**
 * The console as a request handler: `consoleHandler(options)` answers every request under
 * where it is mounted — the page, its files, the live stream of a view (server-sent events),
 * and, only when actions are on, the action and sign-in routes. Usable as it is by Node's
 * `http`, by Express (`app.use('/zk', handler)`) and by Nest (`app.use`, or a middleware).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isZkError, validatePath, type ZkClient, ZkClient as ZkClientBrand } from '@zkrx/core';
import { Access, type Authorize, checkOrigin } from './access';
import { ConsoleError, ConsoleErrorCode } from './errors';
import { type FleetSpec, FleetView } from './fleet-view';
import { Hub } from './hub';
import { findLockNode, releaseNode, revokeNode } from './lock-node';
import { PathLocksView } from './lock-view';
import { assets, pageHtml, SECURITY_HEADERS } from './page';
import { HistoryView, SessionView } from './session-view';
import { parseViewSpec, VIEW_NAMES } from './view-spec';

/** One line of the audit log: who did what, when, to which node, and how it went. */
export interface AuditEntry {
  /** ISO 8601, this machine's clock. */
  readonly at: string;
  /** The user: the host application's (`authorize`), or the token sign-in. */
  readonly who: string;
  readonly action: 'release' | 'revoke';
  readonly node: string;
  /** The node's lock, when it was found. */
  readonly lock: string | undefined;
  /** The session whose node it was, and its data (who held or waited). */
  readonly session: string | undefined;
  readonly data: string | undefined;
  /** `done`, or `refused: <why>` / `failed: <why>`. */
  readonly result: string;
  /** Where the request came from. */
  readonly remoteAddress: string | undefined;
}

export interface ConsoleOptions {
  /** The connected client the console reads with (its credentials stay on the server). */
  readonly client: ZkClient;
  /**
   * Offer `release --force` and `revoke` (default false: read-only, and the action routes
   * answer 403 to everyone). Needs `token` or `authorize`.
   */
  readonly actions?: boolean;
  /** The secret a person signs in with to act (16 characters or more). */
  readonly token?: string;
  /** The host application's auth, when mounted: who a request is from, and whether they may act. */
  readonly authorize?: Authorize;
  /** Where each action is written (default: one JSON line on stderr). */
  readonly audit?: (entry: AuditEntry) => void;
  /** What the page's title names (default `ZooKeeper`; never a credential). */
  readonly label?: string;
  /** The path the page opens at (default `/`). */
  readonly home?: string;
  /** Live pages at once, at most (default 64): one more is answered 503. */
  readonly maxStreams?: number;
}

/** A Node request handler, with `close()` to stop its watches and streams. */
export interface ConsoleHandler {
  (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void): void;
  /** Ends every stream and lets go of every watch (the client is the caller's to close). */
  close(): void;
}

/** How long a stream stays quiet before a comment keeps it open through proxies. */
const KEEP_ALIVE_MS = 15_000;
/** Where a sign-in may return to: a view of this console, with its query. */
const BACK = /^(locks|leaders|members|partitions|sessions|history)(\?[^\s#]*)?$/;
/** Largest action request body. */
const MAX_BODY = 4_096;

function defaultAudit(entry: AuditEntry): void {
  process.stderr.write(`${JSON.stringify({ zkrxConsoleAudit: entry })}\n`);
}

function send(
  response: ServerResponse,
  status: number,
  type: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'cache-control': 'no-store',
    ...headers,
  });
  response.end(body);
}

function json(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY) {
        reject(new ConsoleError(ConsoleErrorCode.BadRequest, 'the request body is too large'));
        request.destroy();
      }
    });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}

/**
 * The console as a request handler, to mount in your own server or app behind your own auth.
 *
 * ## Example
 * ```ts
 * const handler = consoleHandler({ client, authorize: (request) => ({ name: request.user.email, canAct: request.user.isAdmin }), actions: true });
 * app.use('/zk', requireLogin, handler);
 * // Output: the console at https://your-app/zk/
 * ```
 *
 * @param options The client, and whether actions are on (with their token or auth).
 * @return The handler (call `close()` before closing the client).
 */
export function consoleHandler(options: ConsoleOptions): ConsoleHandler {
  if (!ZkClientBrand.isInstance(options?.client)) {
    throw new ConsoleError(
      ConsoleErrorCode.BadOptions,
      "consoleHandler: options.client must be a ZkClient from @zkrx/core's createClient",
    );
  }
  const access = new Access(options.actions === true, options.token, options.authorize);
  const hub = new Hub(options.client);
  const audit = options.audit ?? defaultAudit;
  const label = options.label ?? 'ZooKeeper';
  const home = validatePath(options.home ?? '/');
  const maxStreams = options.maxStreams ?? 64;
  const streams = new Set<ServerResponse>();

  const stream = (request: IncomingMessage, response: ServerResponse, params: URLSearchParams) => {
    const spec = parseViewSpec(params);
    if (streams.size >= maxStreams) {
      throw new ConsoleError(
        ConsoleErrorCode.TooManyStreams,
        `${maxStreams} pages are open already`,
      );
    }
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // One way onto the stream: nothing is written once it ended (the console closing every page,
    // or the page gone) — a write after the end would be an 'error' event that takes the process
    // down — and a failed socket ends the page's watches like a close.
    const toStream = (text: string) => {
      if (response.writableEnded || response.destroyed) return;
      response.write(text);
    };
    toStream('retry: 1000\n\n');
    streams.add(response);
    const write = (message: object) => {
      const state = options.client.state;
      toStream(
        `data: ${JSON.stringify({ ...message, serverNow: Date.now(), session: state })}\n\n`,
      );
    };
    const view =
      spec.view === 'history'
        ? new HistoryView(hub, write)
        : spec.view === 'sessions'
          ? new SessionView(hub, spec.id, spec.scopes, write)
          : spec.view === 'locks' || spec.view === 'leaders'
            ? new PathLocksView(hub, spec, write)
            : new FleetView(hub, spec as FleetSpec, write);
    const sessions = options.client.session$.subscribe((event) => {
      toStream(`event: session\ndata: ${JSON.stringify({ session: event.state })}\n\n`);
    });
    const keepAlive = setInterval(() => toStream(': keep-alive\n\n'), KEEP_ALIVE_MS);
    const end = () => {
      clearInterval(keepAlive);
      sessions.unsubscribe();
      view.close();
      streams.delete(response);
    };
    request.on('close', end);
    response.on('close', end);
    response.on('error', end);
  };

  const act = async (
    request: IncomingMessage,
    response: ServerResponse,
    action: 'release' | 'revoke',
  ) => {
    const user = await access.actor(request);
    if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
      throw new ConsoleError(ConsoleErrorCode.BadRequest, 'an action is sent as application/json');
    }
    let body: { node?: unknown; version?: unknown };
    try {
      body = JSON.parse(await readBody(request));
    } catch (error) {
      if (ConsoleError.isInstance(error)) throw error;
      throw new ConsoleError(ConsoleErrorCode.BadRequest, 'the body is not JSON', { cause: error });
    }
    if (typeof body?.node !== 'string')
      throw new ConsoleError(ConsoleErrorCode.BadRequest, 'node: a lock node path');
    const version = body.version;
    if (version !== undefined && !Number.isInteger(version))
      throw new ConsoleError(ConsoleErrorCode.BadRequest, 'version: a whole number');
    let node: string;
    try {
      node = validatePath(body.node);
    } catch (error) {
      throw new ConsoleError(ConsoleErrorCode.BadRequest, `not a ZooKeeper path`, { cause: error });
    }
    const entry = {
      at: new Date().toISOString(),
      who: user.name,
      action,
      node,
      remoteAddress: request.socket.remoteAddress,
    };
    let found: Awaited<ReturnType<typeof findLockNode>> | undefined;
    try {
      found = await findLockNode(options.client, node);
      if (action === 'release')
        await releaseNode(options.client, found, version as number | undefined);
      else await revokeNode(options.client, found);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      audit({
        ...entry,
        lock: found?.lock.path,
        session: found?.participant.sessionId,
        data: found?.participant.data,
        result: `${ConsoleError.isInstance(error) ? 'refused' : 'failed'}: ${why}`,
      });
      throw error;
    }
    audit({
      ...entry,
      lock: found.lock.path,
      session: found.participant.sessionId,
      data: found.participant.data,
      result: 'done',
    });
    json(response, 200, {
      done: true,
      message:
        action === 'release'
          ? `released: ${node} deleted`
          : `asked 0x${found.participant.sessionId} to release ${found.lock.path}: a holder that is revocable decides when`,
    });
  };

  const route = async (request: IncomingMessage, response: ServerResponse) => {
    const basePath = ((request as { baseUrl?: string }).baseUrl ?? '').replace(/\/$/, '');
    const url = new URL(request.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const method = request.method ?? 'GET';
    if (method === 'GET' || method === 'HEAD') {
      if (path === '/' || path === '') {
        const original = (request as { originalUrl?: string }).originalUrl;
        if (
          basePath !== '' &&
          original !== undefined &&
          new URL(original, 'http://console.invalid').pathname === basePath
        ) {
          send(response, 308, 'text/plain; charset=utf-8', '', { location: `${basePath}/` });
          return;
        }
        send(response, 302, 'text/plain; charset=utf-8', '', {
          location: `${basePath}/locks?path=${encodeURIComponent(home)}`,
        });
        return;
      }
      const first = path.split('/')[1] ?? '';
      if ((VIEW_NAMES as readonly string[]).includes(first)) {
        send(response, 200, 'text/html; charset=utf-8', pageHtml(basePath, label));
        return;
      }
      if (path === '/assets/console.js' || path === '/assets/console.css') {
        const files = assets();
        // The document names them with their digest: that URL's content never changes.
        const kept: Record<string, string> =
          url.searchParams.get('v') === files.version
            ? { 'cache-control': 'public, max-age=31536000, immutable' }
            : {};
        return path === '/assets/console.js'
          ? send(response, 200, 'text/javascript; charset=utf-8', files.script, kept)
          : send(response, 200, 'text/css; charset=utf-8', files.style, kept);
      }
      if (path === '/api/stream') return stream(request, response, url.searchParams);
      if (path === '/api/me') {
        const { user, csrf } = await access.viewer(request);
        json(response, 200, {
          user: user?.name ?? null,
          canAct: access.actions && user?.canAct === true,
          csrf: access.actions ? (csrf ?? null) : null,
          actions: access.actions,
          signIn: access.tokenSignIn,
          label,
          home,
        });
        return;
      }
    }
    if (method === 'POST') {
      if (path === '/api/actions/release' || path === '/api/actions/revoke') {
        await act(request, response, path.endsWith('release') ? 'release' : 'revoke');
        return;
      }
      if (path === '/api/sign-in' && access.tokenSignIn) {
        checkOrigin(request);
        const body = new URLSearchParams(await readBody(request));
        const cookie = access.signIn(body.get('token') ?? '', basePath);
        // Back to the view signed in from: only one of the console's own views.
        const back = body.get('back') ?? '';
        send(response, 303, 'text/plain; charset=utf-8', '', {
          location: `${basePath}/${BACK.test(back) ? back : `locks?path=${encodeURIComponent(home)}`}`,
          'set-cookie': cookie,
        });
        return;
      }
      if (path === '/api/sign-out' && access.tokenSignIn) {
        checkOrigin(request);
        send(response, 303, 'text/plain; charset=utf-8', '', {
          location: `${basePath}/locks`,
          'set-cookie': access.signOut(request, basePath),
        });
        return;
      }
      if (path.startsWith('/api/actions/')) {
        throw new ConsoleError(
          ConsoleErrorCode.Forbidden,
          access.actions ? 'no such action' : 'actions are off: this console is read-only',
        );
      }
    }
    json(response, 404, { error: 'not found' });
  };

  const handler = ((request: IncomingMessage, response: ServerResponse) => {
    route(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.end();
        return;
      }
      if (ConsoleError.isInstance(error))
        json(response, error.status, { error: error.message, code: error.code });
      else if (isZkError(error)) json(response, 502, { error: error.message, code: error.code });
      else json(response, 500, { error: 'internal error' });
    });
  }) as ConsoleHandler;
  handler.close = () => {
    for (const response of streams) response.end();
    streams.clear();
    hub.close();
  };
  return handler;
}
