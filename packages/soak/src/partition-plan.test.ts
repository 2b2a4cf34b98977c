import { describe, expect, it } from 'vitest';
import { type FleetChange, planFleet } from './partition-plan';

const options = {
  seed: 42,
  workers: 8,
  items: 24,
  durationMs: 75_000,
  quietMs: 4_000,
  calmChanges: 4,
  meanChangeGapMs: 2_500,
};

describe('planFleet', () => {
  it('gives the same plan for the same seed, another for another', () => {
    expect(planFleet(options)).toEqual(planFleet(options));
    expect(planFleet({ ...options, seed: 43 })).not.toEqual(planFleet(options));
  });

  it('fills the time with rounds of a storm and a calm of changes made alone', () => {
    const plan = planFleet(options);
    expect(plan.rounds).toHaveLength(2);
    for (const round of plan.rounds) {
      expect(round.calm).toHaveLength(4);
      expect(round.stormMs).toBe(75_000 / 2 - 5 * 4_000);
      expect(round.storm.every(({ at }) => at >= 0 && at < round.stormMs)).toBe(true);
    }
    // A short run: one round, a storm of 4 s at least.
    const short = planFleet({ ...options, durationMs: 8_000, quietMs: 3_000, calmChanges: 2 });
    expect(short.rounds.map((round) => round.stormMs)).toEqual([4_000]);
  });

  it('joins only workers that are out, leaves only members, and keeps the sets in bounds', () => {
    for (let seed = 0; seed < 50; seed++) {
      const plan = planFleet({ ...options, seed });
      const members = new Set(plan.initialMembers);
      let items = plan.initialItems;
      expect(members.size).toBe(6);
      expect(items).toHaveLength(24);
      const changes: FleetChange[] = plan.rounds.flatMap((round) => [
        ...round.storm.map(({ change }) => change),
        ...round.calm,
      ]);
      for (const change of changes) {
        if (change.kind === 'join') {
          expect(members.has(change.worker)).toBe(false);
          members.add(change.worker);
        } else if (change.kind === 'leave') {
          expect(members.has(change.worker)).toBe(true);
          members.delete(change.worker);
        } else {
          expect(change.items).not.toEqual(items);
          expect(new Set(change.items).size).toBe(change.items.length);
          items = change.items;
        }
        expect(members.size).toBeGreaterThanOrEqual(2);
        expect(items.length).toBeGreaterThanOrEqual(8);
        expect(items.length).toBeLessThanOrEqual(32);
      }
    }
  });

  it("plans the full run's fleet: 1,000 items, kept between a third and four thirds of that", () => {
    const plan = planFleet({ ...options, workers: 20, items: 1_000 });
    expect(plan.initialItems).toHaveLength(1_000);
    expect(plan.initialMembers).toHaveLength(15);
    for (const round of plan.rounds) {
      for (const change of [...round.storm.map(({ change }) => change), ...round.calm]) {
        if (change.kind !== 'items') continue;
        expect(change.items.length).toBeGreaterThanOrEqual(333);
        expect(change.items.length).toBeLessThanOrEqual(1_334);
      }
    }
  });

  it('plans a rolling deploy: every worker once, in a seeded order, to the last set with a share replaced', () => {
    expect(planFleet(options).deploy).toBeUndefined();
    const plan = planFleet({ ...options, items: 200, deployChange: 0.03 });
    const deploy = plan.deploy;
    if (!deploy) throw new Error('no deploy');
    expect([...deploy.order].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(deploy.order).not.toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // The set at the rounds' end: the last item-set change of the plan.
    const changes = plan.rounds.flatMap((round) => [
      ...round.storm.map(({ change }) => change),
      ...round.calm,
    ]);
    let last = plan.initialItems;
    for (const change of changes) if (change.kind === 'items') last = change.items;
    const kept = deploy.items.filter((item) => last.includes(item));
    expect(deploy.items).toHaveLength(last.length);
    expect(last.length - kept.length).toBe(Math.round(0.03 * last.length));
    // The new names were never in any set of the plan.
    const ever = new Set([
      ...plan.initialItems,
      ...changes.flatMap((change) => (change.kind === 'items' ? change.items : [])),
    ]);
    expect(
      deploy.items.filter((item) => !kept.includes(item)).every((item) => !ever.has(item)),
    ).toBe(true);
  });
});
