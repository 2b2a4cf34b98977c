/**
 * Leadership's OpenTelemetry instruments: terms begun and ended, and whether this process
 * leads. No-ops until the application registers an SDK; the election's path is an attribute
 * only when the candidate names it (`name`).
 */
import type { Counter, UpDownCounter } from '@opentelemetry/api';
import { lockAttributes, meteredBy } from '@zkrx/lock/recipe';
import { version } from '../package.json';

/** The election as telemetry names it. */
export interface ElectionLabels {
  /** `leader-latch` (`joinElection`) or `leader-selector` (`whileLeader`). */
  readonly kind: string;
  readonly path: string;
  readonly name: string | undefined;
}

interface LeaderInstruments {
  readonly enabled: boolean;
  readonly transitions: Counter;
  readonly isLeader: UpDownCounter;
}

const leaderInstruments = meteredBy(
  '@zkrx/leader',
  version,
  (meter, enabled): LeaderInstruments => ({
    enabled,
    transitions: meter.createCounter('zkrx.leader.transitions', {
      description: 'Leadership terms begun (elected) and ended, by this process',
      unit: '{transition}',
    }),
    isLeader: meter.createUpDownCounter('zkrx.leader.is_leader', {
      description: 'Elections this process leads now (per election: 1 while leading, else 0)',
      unit: '{leader}',
    }),
  }),
);

const nothing = () => {};

/**
 * A term begins: counts the transition and this process as leader. Returns the term's end
 * (idempotent), which counts the transition back.
 */
export function termStarted(labels: ElectionLabels): () => void {
  const meters = leaderInstruments();
  if (!meters.enabled) return nothing;
  const attributes = lockAttributes(labels);
  meters.transitions.add(1, { ...attributes, 'zkrx.leader.transition': 'elected' });
  meters.isLeader.add(1, attributes);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    meters.transitions.add(1, { ...attributes, 'zkrx.leader.transition': 'ended' });
    meters.isLeader.add(-1, attributes);
  };
}
