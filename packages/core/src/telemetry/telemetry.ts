/**
 * The client's OpenTelemetry instruments: each request's duration (OTel's database semantic
 * conventions) and session state changes. No-ops until the application registers an SDK.
 */
import {
  type Attributes,
  type Counter,
  createNoopMeter,
  type Histogram,
  type MeterProvider,
  metrics,
} from '@opentelemetry/api';
import { version } from '../../package.json';
import { codeOfReturnCode, Rc } from '../errors/errors';
import type { Reply } from '../transport/transport';
import { perProvider } from './telemetry-cache';

/** Seconds; OTel's advice for database client operation durations. */
const OPERATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];

export interface CoreTelemetry {
  /** False while no SDK is registered: callers skip the timing work. */
  readonly enabled: boolean;
  /** `db.client.operation.duration`: one request, sent to answered (or failed). */
  readonly operationDuration: Histogram;
  /** `zkrx.session.state_changes`: by `zkrx.session.state`. */
  readonly sessionStateChanges: Counter;
  /**
   * `zkrx.ensemble.moves`: planned moves to another server (the ensemble followed), by
   * `zkrx.move.outcome` — `moved`, `suspended` (not back within its bound), `stayed` (no new
   * server took a connection, or the session was last heard too long ago), `abandoned` (the
   * connection was lost first) — and reconfigurations' leader hand-offs ridden out
   * (`hand-off`).
   */
  readonly moves: Counter;
  /** Attributes of one answered request (made once per operation and outcome, then reused). */
  operationAttributes(operation: string, rc: number): Attributes;
  /**
   * A session state as `session$` names it (`zkrx.session.state`), and the server the session is
   * on (`server.address`, `server.port`), if any.
   */
  stateAttributes(state: string, server?: string): Attributes;
  moveAttributes(outcome: string): Attributes;
}

/**
 * The instruments of the meter provider registered now (see `perProvider`: an SDK registered
 * after the first request is picked up).
 */
export const coreTelemetry: () => CoreTelemetry = perProvider(
  () => metrics.getMeterProvider(),
  makeTelemetry,
);

function makeTelemetry(registered: MeterProvider): CoreTelemetry {
  const meter = registered.getMeter('@zkrx/core', version);
  const byOutcome = new Map<string, Attributes>();
  const byState = new Map<string, Attributes>();
  const byMove = new Map<string, Attributes>();
  return {
    enabled: meter !== createNoopMeter(),
    operationDuration: meter.createHistogram('db.client.operation.duration', {
      description: 'Duration of one ZooKeeper request, from sent to answered or failed',
      unit: 's',
      advice: { explicitBucketBoundaries: OPERATION_BUCKETS },
    }),
    sessionStateChanges: meter.createCounter('zkrx.session.state_changes', {
      description: 'Session state changes, by the state entered',
      unit: '{change}',
    }),
    moves: meter.createCounter('zkrx.ensemble.moves', {
      description: 'Planned moves of the session to another server of the ensemble, by outcome',
      unit: '{move}',
    }),
    operationAttributes(operation, rc) {
      const key = `${operation}\u0000${rc}`;
      let attributes = byOutcome.get(key);
      if (!attributes) {
        attributes =
          rc === Rc.ok
            ? { 'db.system.name': 'zookeeper', 'db.operation.name': operation }
            : {
                'db.system.name': 'zookeeper',
                'db.operation.name': operation,
                'error.type': codeOfReturnCode(rc),
                'db.response.status_code': String(rc),
              };
        byOutcome.set(key, attributes);
      }
      return attributes;
    },
    moveAttributes(outcome) {
      let attributes = byMove.get(outcome);
      if (!attributes) {
        attributes = { 'zkrx.move.outcome': outcome };
        byMove.set(outcome, attributes);
      }
      return attributes;
    },
    stateAttributes(state, server) {
      const key = server === undefined ? state : `${state}\u0000${server}`;
      let attributes = byState.get(key);
      if (!attributes) {
        const colon = server?.lastIndexOf(':') ?? -1;
        attributes =
          server === undefined || colon === -1
            ? { 'zkrx.session.state': state }
            : {
                'zkrx.session.state': state,
                'server.address': server.slice(0, colon).replace(/^\[(.*)\]$/, '$1'),
                'server.port': Number(server.slice(colon + 1)),
              };
        byState.set(key, attributes);
      }
      return attributes;
    },
  };
}

/**
 * `reply`, timed into `db.client.operation.duration` when an SDK is registered (else `reply`
 * itself: nothing allocated). `exists` answering NoNode is an answer, not an error.
 */
export function timedReply<T>(operation: string, reply: Reply<T>): Reply<T> {
  const telemetry = coreTelemetry();
  if (!telemetry.enabled) return reply;
  const started = performance.now();
  return (rc, value, cause) => {
    const outcome = rc === Rc.noNode && operation === 'exists' ? Rc.ok : rc;
    telemetry.operationDuration.record(
      (performance.now() - started) / 1000,
      telemetry.operationAttributes(operation, outcome),
    );
    reply(rc, value, cause);
  };
}
