/**
 * The locks' OpenTelemetry instruments and spans: acquire and hold durations, waiters and
 * holders, losses, and spans around acquisitions and guarded writes. No-ops until the
 * application registers an SDK; a lock's path is an attribute only when the caller names it.
 */
import {
  type Attributes,
  type Counter,
  context,
  createNoopMeter,
  type Histogram,
  type Meter,
  metrics,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
  type UpDownCounter,
} from '@opentelemetry/api';
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { perProvider } from '@zkrx/core/telemetry';
import { version } from '../../package.json';
import { LockTimeoutError } from './errors';

/** How an acquisition ended. `busy`: a try-once found the lock taken. */
export type AcquireOutcome = 'acquired' | 'busy' | 'timeout' | 'aborted' | 'error';
/** How a hold ended: released (`revoked` when released after a revocation request), or lost. */
export type HoldEnd = 'released' | 'revoked' | 'lost';

/** What the metrics and spans say about one lock. */
export interface LockLabels {
  /** The recipe: `mutex`, `read`, `write`, `semaphore`, `multi`, `leader-latch`, ... */
  readonly kind: string;
  /** The lock path: an attribute only when `name` is given (paths often hold ids). */
  readonly path: string;
  /** The caller's name for the lock (`LockOptions.name`), if any. */
  readonly name: string | undefined;
}

/** Seconds. Waits can be long (a lock held for minutes), holds longer. */
const WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];
const HOLD_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

interface LockInstruments {
  readonly enabled: boolean;
  readonly acquireDuration: Histogram;
  readonly holdDuration: Histogram;
  readonly waiters: UpDownCounter;
  readonly holders: UpDownCounter;
  readonly losses: Counter;
}

/**
 * Instruments made by `make` on the meter `name` of the meter provider registered now, made
 * again only when another one is registered (`perProvider`, @zkrx/core's: looked up on each use,
 * no allocation). `enabled` is false while the provider is the API's no-op.
 */
export function meteredBy<T>(
  name: string,
  meterVersion: string,
  make: (meter: Meter, enabled: boolean) => T,
): () => T {
  return perProvider(
    () => metrics.getMeterProvider(),
    (provider) => {
      const meter = provider.getMeter(name, meterVersion);
      return make(meter, meter !== createNoopMeter());
    },
  );
}

const lockInstruments = meteredBy(
  '@zkrx/lock',
  version,
  (meter, enabled): LockInstruments => ({
    enabled,
    acquireDuration: meter.createHistogram('zkrx.lock.acquire.duration', {
      description: 'Time to acquire a lock, by outcome',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS },
    }),
    holdDuration: meter.createHistogram('zkrx.lock.hold.duration', {
      description: 'Time a lock was held, by how the hold ended',
      unit: 's',
      advice: { explicitBucketBoundaries: HOLD_BUCKETS },
    }),
    waiters: meter.createUpDownCounter('zkrx.lock.waiters', {
      description: 'Acquisitions in progress (waiting in a queue)',
      unit: '{waiter}',
    }),
    holders: meter.createUpDownCounter('zkrx.lock.holders', {
      description: 'Holds in progress',
      unit: '{holder}',
    }),
    losses: meter.createCounter('zkrx.lock.losses', {
      description: 'Holds lost (not released), by reason',
      unit: '{loss}',
    }),
  }),
);

/** The tracer; made again when the global provider changes (`trace.disable()` and a new SDK). */
export const lockTracer: () => Tracer = perProvider(
  () => trace.getTracerProvider(),
  (provider) => provider.getTracer('@zkrx/lock', version),
);

const unnamed = new Map<string, Attributes>();

/**
 * The lock's attributes: its kind, and its name and path only when named. Unnamed, one shared
 * object per kind. The path is left out otherwise: lock paths often carry ids (an order, a
 * tenant), and every distinct attribute set is a time series a backend keeps.
 */
export function lockAttributes(labels: LockLabels): Attributes {
  if (labels.name === undefined) {
    let attributes = unnamed.get(labels.kind);
    if (!attributes) {
      attributes = { 'zkrx.lock.kind': labels.kind };
      unnamed.set(labels.kind, attributes);
    }
    return attributes;
  }
  return {
    'zkrx.lock.kind': labels.kind,
    'zkrx.lock.name': labels.name,
    'zkrx.lock.path': labels.path,
  };
}

/** A bounded name for an error: its `code` (ZkError's, `LockLost`, ...), else its name. */
export function errorType(error: unknown): string {
  if (isZkError(error)) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error) return error.name;
  return typeof error;
}

function acquireOutcome(error: unknown, signal: AbortSignal | undefined): AcquireOutcome {
  if (LockTimeoutError.isInstance(error)) return 'timeout';
  if (signal?.aborted || isZkError(error, ZkErrorCode.Aborted)) return 'aborted';
  return 'error';
}

/**
 * Runs one acquisition under the acquire metrics and span: `attempt` resolves the hold, or
 * null/undefined when a try-once found the lock taken. Without an SDK it is `attempt()` with
 * one no-op span (nothing else is made).
 *
 * @param labels The lock.
 * @param signal The acquisition's signal (an error once it aborted counts as `aborted`).
 * @param attempt Makes the hold.
 * @return What `attempt` resolves.
 */
export function timedAcquire<T>(
  labels: LockLabels,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  const meters = lockInstruments();
  const span = lockTracer().startSpan('zkrx.lock.acquire');
  const recording = span.isRecording();
  // Unobserved, the attempt's own promise: no async wrapper (a promise and two turns more).
  if (!meters.enabled && !recording) return attempt();
  return timed(labels, signal, attempt, meters, span, recording);
}

async function timed<T>(
  labels: LockLabels,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
  meters: LockInstruments,
  span: Span,
  recording: boolean,
): Promise<T> {
  const attributes = lockAttributes(labels);
  if (recording) span.setAttributes(attributes);
  if (meters.enabled) meters.waiters.add(1, attributes);
  const started = performance.now();
  const end = (outcome: AcquireOutcome, error?: unknown) => {
    const result: Attributes =
      error === undefined
        ? { ...attributes, 'zkrx.lock.outcome': outcome }
        : { ...attributes, 'zkrx.lock.outcome': outcome, 'error.type': errorType(error) };
    if (meters.enabled) {
      meters.waiters.add(-1, attributes);
      meters.acquireDuration.record((performance.now() - started) / 1000, result);
    }
    if (recording) endSpan(span, result, outcome === 'timeout' || outcome === 'error', error);
  };
  try {
    // Recording, the acquisition's own work (a multi-lock's locks) nests under its span.
    const held = await (recording
      ? context.with(trace.setSpan(context.active(), span), attempt)
      : attempt());
    end(held === null || held === undefined ? 'busy' : 'acquired');
    return held;
  } catch (error) {
    const outcome = acquireOutcome(error, signal);
    end(outcome, outcome === 'aborted' ? undefined : error);
    throw error;
  }
}

function endSpan(span: Span, attributes: Attributes, failed: boolean, error: unknown): void {
  span.setAttributes(attributes);
  if (failed) {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }
  span.end();
}

/** Ends a hold's metrics: once, with how it ended (and why, when lost). */
export type HoldRecord = (end: HoldEnd, lossReason?: string) => void;

const nothing: HoldRecord = () => {};

/** Starts a hold's metrics (holders, then hold duration and losses at its end). */
export function holdStarted(labels: LockLabels): HoldRecord {
  const meters = lockInstruments();
  if (!meters.enabled) return nothing;
  const attributes = lockAttributes(labels);
  meters.holders.add(1, attributes);
  const started = performance.now();
  let ended = false;
  return (end, lossReason) => {
    if (ended) return;
    ended = true;
    meters.holders.add(-1, attributes);
    meters.holdDuration.record((performance.now() - started) / 1000, {
      ...attributes,
      'zkrx.lock.hold.end': end,
    });
    if (lossReason !== undefined) {
      meters.losses.add(1, { ...attributes, 'zkrx.lock.loss.reason': lossReason });
    }
  };
}

/**
 * Runs a guarded write under a `zkrx.lock.guard` span (the lock's attributes, the number of
 * ops, and `error.type` when it fails).
 */
export async function tracedGuard<T>(
  labels: LockLabels,
  opCount: number,
  write: () => Promise<T>,
): Promise<T> {
  const span = lockTracer().startSpan('zkrx.lock.guard');
  if (!span.isRecording()) return write();
  span.setAttributes(lockAttributes(labels));
  span.setAttribute('zkrx.lock.guard.ops', opCount);
  try {
    const result = await write();
    span.end();
    return result;
  } catch (error) {
    endSpan(span, { 'error.type': errorType(error) }, true, error);
    throw error;
  }
}
