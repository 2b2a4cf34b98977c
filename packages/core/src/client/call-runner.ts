/**
 * How one call of the client runs: checked before anything is sent, sent on the current
 * session, retried after a lost connection when that is safe, given up when its `signal`
 * aborts, and failed with a ZkError that says what happened.
 */

import {
  errorFromRc,
  Rc,
  withoutStack,
  ZkAbortError,
  ZkError,
  ZkErrorCode,
} from '../errors/errors';
import {
  type Operation,
  type OperationContext,
  type OperationInputs,
  operations,
} from '../operations/operations';
import type { SessionKeeper } from '../session/session-keeper';
import { onAbort } from '../transport/on-abort';
import type { OperationName, OperationRequest, OperationResult } from '../transport/transport';
import type { RetryPolicy } from './retry';

// Operations the native transport lacks: its Unimplemented names the default transport.
const transportFeatures = new Set<string>([
  'multi',
  'getAllChildrenNumber',
  'getEphemerals',
  'whoAmI',
  'getConfig',
]);

/** An AbortSignal, from this realm or another (duck-typed, as undici does). */
function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

/** What a caller may say about one call. */
export interface CallOptions {
  /** Gives the call up when it aborts (see {@link ZkAbortError}). */
  readonly signal?: AbortSignal;
}

/** How a reply becomes the call's outcome: a return code, and the value when it is 0. */
export interface Outcome<T> {
  readonly rc: number;
  readonly value?: T;
  readonly cause?: unknown;
}

/** How one run of an operation differs from the table's defaults. */
export interface RunOptions<N extends OperationName, T> extends CallOptions {
  /** Overrides the table: e.g. a create of a fixed path, where NodeExists after a loss is done. */
  readonly idempotent?: boolean;
  /**
   * Turns the server's answer into the call's outcome (default: as it is). `lostBefore`: an
   * earlier attempt of this call lost its connection (it may have been applied).
   */
  readonly outcome?: (
    rc: number,
    value: OperationResult<N> | undefined,
    lostBefore: boolean,
    request: OperationRequest<N>,
  ) => Outcome<T>;
}

/** What the runner needs to know of its client. */
export interface RunnerSettings {
  readonly retry: RetryPolicy;
  readonly connectTimeoutMs: number;
  readonly connectString: string;
  readonly transportName: string;
  readonly context: OperationContext;
}

interface PendingCall {
  /** Handed to the transport, its reply awaited: `close()` lets it end with the server's answer. */
  inFlight: boolean;
  /** Fails it now with ClientClosed (it was not sent, or its retry would be). */
  cancel(): void;
}

/** Runs the calls of one client. */
export class CallRunner {
  private readonly pending = new Set<PendingCall>();
  private closed = false;

  constructor(
    private readonly keeper: SessionKeeper,
    private readonly settings: RunnerSettings,
  ) {}

  /**
   * Runs operation `name` with what the user gave: the table's checks first (a bad input
   * rejects at once, nothing sent), then {@link CallRunner.send}.
   */
  run<N extends OperationName, T = OperationResult<N>>(
    name: N,
    input: OperationInputs[N],
    options: RunOptions<N, T> = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => this.runWith(name, input, options, resolve, reject));
  }

  /**
   * {@link CallRunner.run} with callbacks: `resolve` is called in the turn the reply is read, so
   * a recipe of several calls that settles its own promise from its last call's `resolve` keeps
   * the wire order (its caller continues before any watch event read after that reply), which
   * an `await` or a `then` in between would lose.
   */
  runWith<N extends OperationName, T = OperationResult<N>>(
    name: N,
    input: OperationInputs[N],
    options: RunOptions<N, T>,
    resolve: (value: T) => void,
    reject: (error: unknown) => void,
  ): void {
    let request: OperationRequest<N>;
    try {
      request = (operations[name] as Operation<N>).prepare(input, this.settings.context);
    } catch (error) {
      reject(error);
      return;
    }
    this.dispatch(name, request, options, resolve, reject);
  }

  /**
   * Sends a checked request on the current session. Idempotent calls are retried under the
   * retry policy after ConnectionLoss (and on the new session after expiry); others fail at
   * once. While the client has never been connected, calls wait for the first session (at most
   * `connectTimeoutMs`, then `ConnectTimeout`). Otherwise the first attempt is issued
   * synchronously, so calls made back to back are pipelined.
   */
  send<N extends OperationName, T = OperationResult<N>>(
    name: N,
    request: OperationRequest<N>,
    options: RunOptions<N, T> = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.dispatch(name, request, options, resolve, reject),
    );
  }

  private dispatch<N extends OperationName, T>(
    name: N,
    request: OperationRequest<N>,
    options: RunOptions<N, T>,
    resolve: (value: T) => void,
    reject: (error: unknown) => void,
  ): void {
    const operation = operations[name] as Operation<N>;
    const path = operation.path(request);
    const idempotent = options.idempotent ?? operation.idempotent(request);
    const signal = options.signal;
    if (signal !== undefined && !isAbortSignal(signal)) {
      reject(
        new ZkError(
          ZkErrorCode.BadArguments,
          `${name}${path === undefined ? '' : ` ${path}`}: signal must be an AbortSignal, got ${typeof signal}`,
          { path },
        ),
      );
      return;
    }
    if (this.closed) return reject(this.closedError(name, path));
    if (signal?.aborted) return reject(new ZkAbortError(name, path, false, signal.reason));
    const started = performance.now();
    let retries = 0;
    /** An earlier attempt was lost with its connection: it may have reached the server. */
    let lostBefore = false;
    /** True while `attempt` hands the request over: a settle then runs in the caller's stack. */
    let calling = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let cancelWait: (() => void) | undefined;
    /**
     * Stops `aborted` listening to the caller's signal (set while it listens). The transport is
     * given that same signal (no controller of our own: an AbortSignal costs more to make than
     * the rest of a call) and listens to it from `handle.call` on, to take back a request it has
     * not written; `aborted` is moved behind that listener after each attempt (`listen`; both
     * through `onAbort`, which keeps their order), so that it finds a call the transport withdrew
     * settled already (not sent), and one it wrote still pending (sent). A transport of its own
     * that listens with `addEventListener` may run after `aborted`: the call is then said to be
     * sent, the side that looks for what it may have done.
     */
    let stopListening: (() => void) | undefined;
    const stopWaiting = () => {
      clearTimeout(timer);
      timer = undefined;
      cancelWait?.();
      cancelWait = undefined;
    };
    const finish = () => {
      this.pending.delete(call);
      stopListening?.();
    };
    const fail = (error: ZkError) => {
      finish();
      reject(error);
    };
    const call: PendingCall = {
      inFlight: false,
      cancel: () => {
        stopWaiting();
        fail(this.closedError(name, path));
      },
    };
    const aborted = () => {
      stopListening = undefined;
      if (!this.pending.has(call)) return; // withdrawn: the reply said "not sent"
      stopWaiting();
      // Sent if this attempt is out, or an earlier one was lost in flight (between attempts
      // of a retried call, nothing is out, yet the first may have been applied).
      fail(new ZkAbortError(name, path, call.inFlight || lostBefore, signal?.reason));
    };
    const settle = (rc: number, value?: OperationResult<N>, cause?: unknown): void => {
      call.inFlight = false;
      if (!this.pending.has(call)) return;
      const outcome: Outcome<T> = options.outcome
        ? options.outcome(rc, value, lostBefore, request)
        : { rc, value: value as T, cause };
      if (outcome.rc === Rc.ok) {
        finish();
        resolve(outcome.value as T);
        return;
      }
      const why = outcome.cause ?? cause;
      if (outcome.rc === Rc.failedWithCause && ZkError.isInstance(why)) {
        if (why.code === ZkErrorCode.Aborted && signal) {
          // This attempt was withdrawn unsent; an earlier one may have landed.
          return fail(new ZkAbortError(name, path, lostBefore, signal.reason));
        }
      }
      if (outcome.rc === Rc.connectionLoss || outcome.rc === Rc.operationTimeout) {
        lostBefore = true;
      }
      // Answered from the socket (or a retry's timer): no caller's frame to show, so no stack
      // captured (a lost connection fails every request in flight at once). Settled within the
      // call itself (no session to send it on), the caller's stack is kept.
      const error = calling
        ? this.errorOf(outcome.rc, name, path, why)
        : withoutStack(() => this.errorOf(outcome.rc, name, path, why));
      if (
        idempotent &&
        !this.closed &&
        (error.isRetryable || error.code === ZkErrorCode.SessionExpired)
      ) {
        retries += 1;
        const delay = this.settings.retry.nextDelayMs(retries, performance.now() - started, error);
        if (delay !== undefined) {
          timer = setTimeout(attempt, delay);
          return;
        }
      }
      fail(error);
    };
    const attempt = (): void => {
      timer = undefined;
      if (this.closed) return fail(this.closedError(name, path));
      if (!this.keeper.hadSession) {
        // Never connected: "ZooKeeper unreachable" must not look like a slow server.
        const remaining = this.settings.connectTimeoutMs - (performance.now() - started);
        cancelWait = this.keeper.untilConnected(
          remaining,
          name,
          this.settings.connectString,
          (error) => {
            cancelWait = undefined;
            if (!this.pending.has(call)) return;
            if (!error) return attempt();
            fail(error.code === ZkErrorCode.ClientClosed ? this.closedError(name, path) : error);
          },
        );
        return;
      }
      const handle = this.keeper.handle;
      calling = true;
      try {
        if (!handle) return settle(Rc.closing);
        call.inFlight = true;
        handle.call(name, request, settle, signal);
      } finally {
        calling = false;
      }
      listen();
    };
    /** (Re)places `aborted` last among the signal's listeners, while the call is pending. */
    const listen = () => {
      if (!signal || !this.pending.has(call)) return;
      stopListening = onAbort(signal, aborted);
    };
    this.pending.add(call);
    attempt();
    // Waiting (for a first session, for a retry): listened to from now on.
    if (!stopListening) listen();
  }

  /**
   * The client is closing: every call waiting (for a connection, for its retry) fails now with
   * ClientClosed — it never reaches the server. A call in flight gets its reply: the server
   * answers it before it closes the session, and the promise then agrees with what it did.
   */
  close(): void {
    this.closed = true;
    for (const call of [...this.pending]) {
      if (!call.inFlight) call.cancel();
    }
  }

  /** The error of a call made or ended by a closed client. */
  closedError(operation: string, path?: string, cause?: unknown): ZkError {
    const where = path === undefined ? '' : ` ${path}`;
    const why = cause instanceof Error ? `: ${cause.message}` : '';
    return new ZkError(
      ZkErrorCode.ClientClosed,
      `${operation}${where}: the client is closed${why}`,
      { path, cause },
    );
  }

  private errorOf(
    rc: number,
    operation: string,
    path: string | undefined,
    cause: unknown,
  ): ZkError {
    const where = path === undefined ? '' : ` ${path}`;
    if (rc === Rc.failedWithCause && ZkError.isInstance(cause)) {
      // A transaction's op error names its own op; others are told which call they ended.
      if (cause.path !== undefined || cause.opIndex !== undefined) return cause;
      return new ZkError(cause.code, `${operation}${where}: ${cause.message}`, {
        path,
        rc: cause.rc,
        cause: cause.cause,
      });
    }
    if (rc === Rc.closing || rc === Rc.invalidState) {
      if (this.closed) return this.closedError(operation, path, cause);
      return new ZkError(
        ZkErrorCode.SessionExpired,
        `${operation}${where}: the session ended mid-call`,
        { path, rc },
      );
    }
    if (rc === Rc.unimplemented && transportFeatures.has(operation)) {
      const transport = this.settings.transportName;
      return new ZkError(
        ZkErrorCode.Unimplemented,
        transport !== 'typescript'
          ? `${operation}${where}: the ${transport} transport cannot do this; use the default (TypeScript) transport`
          : `${operation}${where}: the server does not know this operation (an older ZooKeeper)`,
        { path, rc },
      );
    }
    const error = errorFromRc(rc, operation, path);
    if (cause === undefined) return error;
    return new ZkError(error.code, `${error.message}: ${(cause as Error).message}`, {
      path,
      rc,
      cause,
    });
  }
}
