/**
 * One acquisition's deadline and abort: what a wait that is given up rejects with
 * (LockTimeoutError, with the unreachable server as its cause, or the signal's reason).
 */
import { isConnectedState, isZkError, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { LockTimeoutError } from '../errors';
import { connectionMark } from './session';

const ignore = () => {};

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new ZkError(ZkErrorCode.Aborted, 'aborted');
}

/**
 * Calls `onDeadline` once `performance.now()` has reached `deadline` (a timer may fire a little
 * early on its own clock: then it is armed again). Returns the cancel function.
 */
function atDeadline(deadline: number, onDeadline: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    const left = deadline - performance.now();
    if (left <= 0) return onDeadline();
    timer = setTimeout(arm, Math.ceil(left));
  };
  arm();
  return () => clearTimeout(timer);
}

/** The deadline and abort of one acquisition of the lock at `path`. */
export class Deadline {
  readonly started = performance.now();
  /** When it is over (`performance.now()` time); +Infinity without a timeout. */
  readonly at: number;
  /** Whether the client was connected at any moment of the wait (the timeout's cause). */
  private readonly connection: { sawConnection(): boolean };

  constructor(
    private readonly client: ZkClient,
    private readonly path: string,
    timeoutMs: number | undefined,
    readonly signal: AbortSignal | undefined,
  ) {
    this.at = timeoutMs === undefined ? Number.POSITIVE_INFINITY : this.started + timeoutMs;
    if (signal?.aborted) throw abortReason(signal);
    this.connection = connectionMark(client);
  }

  /** Throws what the acquisition rejects with once given up (aborted, or past the deadline). */
  check(): void {
    const signal = this.signal;
    if (signal?.aborted) throw abortReason(signal);
    if (performance.now() >= this.at) throw this.timeoutError();
  }

  /**
   * `work`, unless the deadline passes or the signal aborts first: then `onAbandon` takes care
   * of what `work` leaves behind, and this rejects at once with LockTimeoutError or the
   * signal's reason (a disconnected client may hold a request, and retry it, for long).
   */
  race<T>(work: Promise<T>, onAbandon: () => void = ignore): Promise<T> {
    const signal = this.signal;
    const remaining = this.at - performance.now();
    if (!signal && !Number.isFinite(remaining)) return work;
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let cancelTimer = ignore;
      const settle = () => {
        settled = true;
        cancelTimer();
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (reason: unknown) => {
        if (settled) return;
        settle();
        onAbandon();
        reject(reason);
      };
      const onAbort = () => giveUp(abortReason(signal as AbortSignal));
      // Handled first, whatever happens next: abandoned work may still reject (client closed).
      work.then(
        (value) => {
          if (settled) return;
          settle();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settle();
          reject(error);
        },
      );
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (Number.isFinite(remaining) && !settled) {
        cancelTimer = atDeadline(this.at, () => giveUp(this.timeoutError()));
      }
    });
  }

  /**
   * Calls `onOver('timeout' | 'aborted')` once the deadline passes or the signal aborts, unless
   * cancelled first (the returned function); at once when it is over already.
   */
  onOver(onOver: (why: 'timeout' | 'aborted') => void): () => void {
    const signal = this.signal;
    let cancelTimer = ignore;
    const onAbort = () => {
      cancelTimer();
      onOver('aborted');
    };
    const cancel = () => {
      cancelTimer();
      signal?.removeEventListener('abort', onAbort);
    };
    if (signal?.aborted) {
      onOver('aborted');
      return ignore;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    const remaining = this.at - performance.now();
    if (remaining <= 0) {
      cancel();
      onOver('timeout');
      return ignore;
    }
    if (Number.isFinite(remaining)) {
      cancelTimer = atDeadline(this.at, () => {
        signal?.removeEventListener('abort', onAbort);
        onOver('timeout');
      });
    }
    return cancel;
  }

  /** The reason a wait ended by `onOver` rejects with. */
  reasonOf(why: 'timeout' | 'aborted'): unknown {
    return why === 'aborted' ? abortReason(this.signal as AbortSignal) : this.timeoutError();
  }

  /** Waits for a connection; without a deadline, for the client's `connectTimeoutMs` at most. */
  async untilConnected(): Promise<void> {
    this.check();
    const remaining = this.at - performance.now();
    const connected = this.client.connected(Number.isFinite(remaining) ? remaining : undefined);
    try {
      await this.race(connected, () => connected.catch(ignore));
    } catch (error) {
      if (isZkError(error, ZkErrorCode.ConnectTimeout) && Number.isFinite(remaining)) {
        throw this.timeoutError();
      }
      throw error;
    }
  }

  /**
   * LockTimeoutError; with a `cause` when ZooKeeper was unreachable: ConnectTimeout when never
   * connected during the wait, ConnectionLoss when not connected at its end.
   */
  timeoutError(): LockTimeoutError {
    const waited = performance.now() - this.started;
    const sawConnection = this.connection.sawConnection();
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
}
