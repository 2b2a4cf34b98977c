/**
 * Expires a client's ZooKeeper session on the server, for real: a second connection resumes the
 * session with its id and password, then closes it (what curator-test's KillSession does).
 */
import { formatHostPort, parseConnectString } from './connect-string';
import { checkOptions, rule } from './options';
import { startRawSession } from './raw-session';

/** Credentials of a session: id as the C client prints it (hex), password as 32 hex characters. */
export interface SessionCredentials {
  sessionId: string;
  password: string;
}

/** Something that can be subscribed to, like an RxJS Observable; no dependency on rxjs. */
export interface Subscribable<T> {
  subscribe(observer: {
    next?: (value: T) => void;
    error?: (error: unknown) => void;
    complete?: () => void;
  }): { unsubscribe(): void };
}

/** A zkrx-like client, described by shape only (no dependency on @zkrx/core). */
export interface ExpirableClient {
  connectString: string;
  /** The current session's credentials, `undefined` before the first connection. */
  sessionCredentials(): SessionCredentials | undefined;
  /** Session states; when present, expiry waits until it emits `{ state: 'expired' }`. */
  session$?: Subscribable<unknown>;
}

/** The session to expire: a client, or its connect string and credentials. */
export type ExpireSessionTarget =
  | ExpirableClient
  | ({ connectString: string } & SessionCredentials);

/** Options of {@link expireSession}; a wrong one throws `InvalidOptionError`. */
export interface ExpireSessionOptions {
  /** Servers to reach the session through; the client's own connect string by default (it may be a proxy). */
  connectString?: string;
  /** How long to wait in all, including for `session$` to emit `expired`; 30 s by default. */
  timeoutMs?: number;
}

const ATTEMPTS = 5;

/**
 * Expires a client's session on the ZooKeeper server.
 *
 * Resumes the session on a second raw connection (trying the servers in order), then sends
 * `closeSession`: the server ends the session and drops the client's connection, so the client
 * learns of the expiry when it reconnects. Resolves once the server confirmed the close or, when
 * the client has a `session$`, once that emits `{ state: 'expired' }`. A session that is already
 * gone (the server answers timeOut 0) counts as expired — as does a wrong password, which the
 * server answers the same way.
 *
 * ## Example
 *
 * ```ts
 * await expireSession(client); // client.session$ emits { state: 'expired' }
 * await expireSession({ connectString, sessionId: '100000205df0000', password: '3f...' });
 * ```
 *
 * @param client The client (or plain credentials) whose session to expire.
 * @param options Other servers to go through, and the overall timeout.
 * @return Resolves when the session is expired (and, if observable, the client saw it).
 */
export async function expireSession(
  client: ExpireSessionTarget,
  options: ExpireSessionOptions = {},
): Promise<void> {
  checkOptions('expireSession', options, {
    connectString: rule.string,
    timeoutMs: rule.positiveNumber,
  });
  const credentials = credentialsOf(client);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  const hosts = parseConnectString(options.connectString ?? client.connectString).map(
    formatHostPort,
  );
  const sessionExpired =
    'session$' in client && client.session$ ? watchExpiry(client.session$) : undefined;
  try {
    await closeOnServer(hosts, credentials, deadline);
    if (sessionExpired) {
      await withDeadline(
        sessionExpired.promise,
        deadline,
        `The session ${credentials.sessionId} was closed on the server but the client's session$ ` +
          `did not emit { state: 'expired' } within ${timeoutMs} ms`,
      );
    }
  } finally {
    sessionExpired?.unsubscribe();
  }
}

function credentialsOf(client: ExpireSessionTarget): SessionCredentials {
  if ('sessionCredentials' in client && typeof client.sessionCredentials === 'function') {
    const credentials = client.sessionCredentials();
    if (!credentials) {
      throw new Error('The client has no session to expire (sessionCredentials() is undefined)');
    }
    return credentials;
  }
  const { sessionId, password } = client as SessionCredentials;
  if (typeof sessionId !== 'string' || typeof password !== 'string') {
    throw new TypeError(
      'expireSession needs a client with sessionCredentials() or { sessionId, password }',
    );
  }
  return { sessionId, password };
}

/**
 * Resumes the session on the first server that answers and closes it. A connection that drops
 * before the close is confirmed (the client, reconnecting, takes its session back and the server
 * drops our older connection) is retried: the next attempt either closes it or finds it gone.
 */
async function closeOnServer(
  hosts: string[],
  credentials: SessionCredentials,
  deadline: number,
): Promise<void> {
  const failures: string[] = [];
  for (let attempt = 0; attempt < ATTEMPTS && Date.now() < deadline; attempt++) {
    for (const hostPort of hosts) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      try {
        const session = await startRawSession(hostPort, {
          sessionId: credentials.sessionId,
          password: credentials.password,
          keepAlive: false,
          connectTimeoutMs: Math.min(left, 5_000),
        });
        if (session.expired) return; // already gone on the server
        await session.close(Math.max(1, Math.min(deadline - Date.now(), 10_000)));
        return;
      } catch (error) {
        failures.push(`${hostPort}: ${(error as Error).message}`);
      }
    }
  }
  throw new Error(
    `Could not expire session ${credentials.sessionId}:\n  ${failures.join('\n  ') || 'timed out'}`,
  );
}

function watchExpiry(session$: Subscribable<unknown>): {
  promise: Promise<void>;
  unsubscribe(): void;
} {
  let unsubscribed = false;
  let subscription: { unsubscribe(): void } | undefined;
  const promise = new Promise<void>((resolve, reject) => {
    subscription = session$.subscribe({
      next: (value) => {
        if (isExpiredState(value)) resolve();
      },
      error: (error) => reject(error),
      complete: () =>
        reject(new Error("The client's session$ completed before emitting 'expired'")),
    });
  });
  promise.catch(() => {}); // observed later, or not at all if closing fails first
  return {
    promise,
    unsubscribe() {
      if (unsubscribed) return;
      unsubscribed = true;
      subscription?.unsubscribe();
    },
  };
}

function isExpiredState(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    'state' in value &&
    (value as { state: unknown }).state === 'expired'
  );
}

function withDeadline<T>(promise: Promise<T>, deadline: number, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(message)), Math.max(0, deadline - Date.now()));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
