/**
 * One acquisition's deadline: the caller's signal and its `timeoutMs` made one AbortSignal, given
 * to every @zkrx/core call the acquisition makes and to its waits, and what they reject with.
 */
import {
  isConnectedState,
  isZkError,
  onAbort,
  ZkAbortError,
  type ZkClient,
  ZkError,
  ZkErrorCode,
} from '@zkrx/core';
import { LockTimeoutError } from './errors';
import { connectionMark } from './session';

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ZkError(ZkErrorCode.Aborted, 'aborted');
}

/**
 * The deadline and abort of one acquisition of the lock at `path`. Its `signal` aborts with the
 * caller's reason, or with LockTimeoutError once `timeoutMs` passed (as
 * `AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])` would, but with the reason the
 * acquisition rejects with, never a little early on `performance.now()`'s clock, and no timer left
 * behind once `stop()` is called).
 */
export class Deadline {
  readonly started = performance.now();
  /** When it is over (`performance.now()` time); +Infinity without a timeout. */
  readonly at: number;
  /**
   * Aborts when the acquisition is given up: the caller's signal, or the deadline's own.
   * Undefined when there is neither (nothing can give it up: calls are made without one).
   */
  readonly signal: AbortSignal | undefined;
  private readonly controller: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Stops listening to the caller's signal (with a timeout, the deadline's own signal follows it). */
  private stopCallerListening: (() => void) | undefined;
  /**
   * Whether the client was connected at any moment of the wait (the timeout's cause): marked
   * only with a timeout, the one thing that asks.
   */
  private readonly connection: { sawConnection(): boolean } | undefined;

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    timeoutMs: number | undefined,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.at = timeoutMs === undefined ? Number.POSITIVE_INFINITY : this.started + timeoutMs;
    if (callerSignal?.aborted) throw abortReason(callerSignal);
    if (timeoutMs === undefined) {
      this.signal = callerSignal;
      return;
    }
    this.connection = connectionMark(client);
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    this.stopCallerListening = callerSignal && onAbort(callerSignal, this.onCallerAbort);
    this.arm();
  }

  /** True once given up: aborted, or past the deadline (then the signal aborts now). */
  get over(): boolean {
    if (!this.signal?.aborted && performance.now() >= this.at) this.expire();
    return this.signal?.aborted === true;
  }

  /** What the acquisition rejects with once given up: the caller's reason, or LockTimeoutError. */
  get reason(): unknown {
    return abortReason(this.signal as AbortSignal);
  }

  /** Throws what the acquisition rejects with once given up (aborted, or past the deadline). */
  check(): void {
    if (this.over) throw this.reason;
  }

  /**
   * What a call of the acquisition that failed with `error` makes it reject with: a call given up
   * by the signal (ZkAbortError) rejects with the signal's reason, LockTimeoutError or the
   * caller's; any other error as it is.
   */
  errorOf(error: unknown): unknown {
    return ZkAbortError.isInstance(error) && this.signal?.aborted ? this.reason : error;
  }

  /**
   * Waits for a connection, given up with the signal; without a deadline, for the client's
   * `connectTimeoutMs` at most (ZkError ConnectTimeout), as `client.connected()` waits.
   */
  async untilConnected(): Promise<void> {
    this.check();
    const remaining = this.at - performance.now();
    const finite = Number.isFinite(remaining);
    // `client.connected` takes no signal: the wait ends at the first of the two.
    const connected = this.client.connected(finite ? remaining : undefined);
    try {
      await untilAborted(connected, this.signal);
    } catch (error) {
      if (isZkError(error, ZkErrorCode.ConnectTimeout) && finite) throw this.timeoutError();
      throw error;
    }
  }

  /**
   * `work`, or what the acquisition rejects with as soon as it is given up (`work` then goes on
   * unheeded): for a call with nothing to withdraw (a read), cheaper than giving it the signal.
   */
  race<T>(work: Promise<T>): Promise<T> {
    return untilAborted(work, this.signal);
  }

  /** The acquisition is over: no timer, no listener left. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.stopCallerListening?.();
  }

  /**
   * LockTimeoutError; with a `cause` when ZooKeeper was unreachable: ConnectTimeout when never
   * connected during the wait, ConnectionLoss when not connected at its end.
   */
  timeoutError(): LockTimeoutError {
    const waited = performance.now() - this.started;
    const sawConnection = this.connection?.sawConnection() ?? true;
    if (sawConnection && isConnectedState(this.client.state)) {
      return new LockTimeoutError(this.path, waited);
    }
    const cause = sawConnection
      ? new ZkError(
          ZkErrorCode.ConnectionLoss,
          `the connection to ZooKeeper was lost while waiting for ${this.path}`,
        )
      : new ZkError(
          ZkErrorCode.ConnectTimeout,
          `no connection to ZooKeeper at any moment of the wait for ${this.path}`,
        );
    return new LockTimeoutError(this.path, waited, { cause });
  }

  private readonly onCallerAbort = (): void => {
    this.stop();
    this.controller?.abort(abortReason(this.callerSignal as AbortSignal));
  };

  /** Aborts the signal once `performance.now()` reaches `at` (a timer may fire a little early). */
  private arm(): void {
    const left = this.at - performance.now();
    if (left <= 0) return this.expire();
    this.timer = setTimeout(() => this.arm(), Math.ceil(left));
  }

  private expire(): void {
    if (this.signal?.aborted) return;
    this.stop();
    this.controller?.abort(this.timeoutError());
  }
}

/** `work`, or the signal's reason as soon as it aborts (`work` then goes on unheeded). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) reject(abortReason(signal));
    const stopListening = onAbort(signal, () => reject(abortReason(signal)));
    // Handled first, whatever happens next: work given up on may still reject (client closed).
    work.then(
      (value) => {
        stopListening();
        resolve(value);
      },
      (error: unknown) => {
        stopListening();
        reject(error);
      },
    );
  });
}
