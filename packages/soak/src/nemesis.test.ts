import { describe, expect, it } from 'vitest';
import type { FaultKind } from './history';
import {
  isWorkerFault,
  Nemesis,
  type NemesisContext,
  type PlanOptions,
  planFaults,
} from './nemesis';
import type { CoordinatorMessage } from './protocol';

const every: Partial<Record<FaultKind, number>> = {
  expire: 1,
  cut: 1,
  'reply-lost': 1,
  blackhole: 1,
  'server-restart': 1,
  'leader-stop': 1,
  'quorum-loss': 1,
  'idle-gap': 1,
  stall: 1,
};
const options: PlanOptions = {
  seed: 42,
  durationMs: 60_000,
  quietTailMs: 5_000,
  workers: 8,
  sessionTimeoutMs: 3_000,
  meanGapMs: 2_000,
  reapWaitMs: 700,
  weights: every,
  coverEveryKind: true,
};

describe('planFaults', () => {
  it('is the same plan for the same seed, another for another seed', () => {
    expect(planFaults(options)).toEqual(planFaults(options));
    expect(planFaults({ ...options, seed: 43 })).not.toEqual(planFaults(options));
  });

  it('starts with one fault of each kind when asked, within the fault phase', () => {
    const plan = planFaults(options);
    expect(new Set(plan.map((fault) => fault.kind)).size).toBe(9);
    expect(plan.every((fault) => fault.at < options.durationMs - options.quietTailMs)).toBe(true);
    expect(plan.map((fault) => fault.at)).toEqual(
      [...plan.map((fault) => fault.at)].sort((a, b) => a - b),
    );
  });

  it('never overlaps two server faults, and aims worker faults at a worker', () => {
    const plan = planFaults({ ...options, durationMs: 600_000, seed: 7 });
    const server = plan.filter((fault) =>
      ['server-restart', 'leader-stop', 'quorum-loss'].includes(fault.kind),
    );
    for (let index = 1; index < server.length; index++) {
      const previous = server[index - 1]!;
      expect(server[index]!.at).toBeGreaterThanOrEqual(previous.at + previous.durationMs);
    }
    for (const fault of plan) {
      if (isWorkerFault(fault.kind)) expect(fault.target).toBeGreaterThanOrEqual(0);
      else expect(fault.target).toBeUndefined();
    }
    expect(
      plan.filter((fault) => fault.kind === 'blackhole').every((f) => f.durationMs > 3_000),
    ).toBe(true);
  });

  it('leaves unstallable workers alone, honours weights, and marks holder strikes', () => {
    const plan = planFaults({ ...options, durationMs: 300_000, unstallable: [0, 1] });
    expect(
      plan.filter((fault) => fault.kind === 'stall').every((fault) => (fault.target ?? 0) >= 2),
    ).toBe(true);
    const only = planFaults({ ...options, weights: { blackhole: 1 }, strikeHolder: true });
    expect(only.length).toBeGreaterThan(0);
    expect(only.every((fault) => fault.kind === 'blackhole' && fault.strikeHolder)).toBe(true);
    expect(planFaults({ ...options, weights: {} })).toEqual([]);
  });
});

describe('Nemesis: a fault aimed at a hold', () => {
  /** A context for a `cut` (no server involved): what was sent, and whether the hold came. */
  function contextOf(holdCame: boolean) {
    const sent: CoordinatorMessage[] = [];
    const cuts: number[] = [];
    const context = {
      sessionTimeoutMs: 1_000,
      proxiesOf: (worker: number) => [{ cut: () => cuts.push(worker) }],
      credentials: () => undefined,
      untilNextHold: async () => holdCame,
      nextHolder: async () => undefined,
      send: (_worker: number, message: CoordinatorMessage) => sent.push(message),
      idleAll: async () => {},
      now: () => 0,
      record: () => {},
      log: () => {},
    } as unknown as NemesisContext;
    return { context, sent, cuts };
  }
  const cut = { id: 1, at: 0, kind: 'cut' as const, target: 2, durationMs: 0, whileHolding: true };

  it('makes the next hold long and strikes it', async () => {
    const { context, sent, cuts } = contextOf(true);
    await new Nemesis(context).run([cut]);
    expect(sent).toEqual([{ type: 'linger', ms: 2_000 }]);
    expect(cuts).toEqual([2]);
  });

  it('takes the long hold back when no hold came in time, and strikes anyway', async () => {
    const { context, sent, cuts } = contextOf(false);
    await new Nemesis(context).run([cut]);
    expect(sent).toEqual([
      { type: 'linger', ms: 2_000 },
      { type: 'linger', ms: 0 },
    ]);
    expect(cuts).toEqual([2]);
  });
});
