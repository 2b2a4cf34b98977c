/**
 * fleet-rollout: a rolling deploy that changes the item set. C members (`--members`) own N
 * items (`--items`), spread over P processes (`--processes`); then, one step at a time, a member
 * of the old version leaves and one of the new version joins in its place, stating the next set
 * (1 % of the items replaced: as many removed, as many new). The coordinator at the start is
 * replaced last, as a deploy that goes through the pods in order would meet it.
 *
 * What a step costs is how long work stops: from the step's start until it settles — every item
 * some live member lists owned by one member that lists it, and nothing else owned — the
 * scenario sums, at each event, the items that should be owned and are not, times the time
 * since the last event: unowned item-seconds. Items only the old version lists count while an
 * old member lives; items only the new one lists, once a new member does. Per step: the time to
 * settle, the unowned item-seconds, the most items unowned at once. A step that does not settle
 * within `SETTLE_LIMIT_MS` is recorded as not settled (with what it cost until then).
 */
import { joinPath } from '@zkrx/core';
import { inspectFleet } from '@zkrx/fleet';
import {
  type FleetEvent,
  FleetGate,
  type FleetHostSettings,
  fleetItems,
  type Host,
  localHost,
  memberId,
  nextFleetItems,
  workerHost,
} from '../fleet-host';
import { type RunContext, type ScenarioResult, serverCounts } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';

const SESSION_TIMEOUT_MS = 10_000;
/** A step that has not settled after this is recorded as such, and the deploy goes on. */
const SETTLE_LIMIT_MS = 30_000;

/** Who owns what, from the members' emissions. */
class RolloutView {
  readonly owners = new Map<string, string>();
  /** Each live member's set: the first or the next. */
  readonly live = new Map<string, ReadonlySet<string>>();
  /** Unowned item-ms since `since`, and the most unowned at once. */
  private unownedMs = 0;
  private worst = 0;
  private lastAt = performance.now();
  violations: string[] = [];

  private readonly gate: FleetGate;

  constructor(
    private readonly context: RunContext,
    private readonly oneProcess: boolean,
  ) {
    this.gate = new FleetGate(context);
  }

  /** The items some live member lists. */
  expected(): Set<string> {
    const all = new Set<string>();
    for (const set of this.live.values()) for (const item of set) all.add(item);
    return all;
  }

  private unowned(): number {
    let count = 0;
    for (const item of this.expected()) {
      const owner = this.owners.get(item);
      if (owner === undefined || !this.live.get(owner)?.has(item)) count += 1;
    }
    return count;
  }

  /** Counts the time since the last event at the unowned count it had. */
  private account(): void {
    const now = performance.now();
    const unowned = this.unowned();
    this.unownedMs += unowned * (now - this.lastAt);
    this.worst = Math.max(this.worst, unowned);
    this.lastAt = now;
  }

  /** Starts a step's accounting. */
  begin(): void {
    this.account();
    this.unownedMs = 0;
    this.worst = this.unowned();
  }

  /** The step's unowned item-seconds and most unowned, up to now. */
  cost(): { itemSeconds: number; worst: number } {
    this.account();
    return { itemSeconds: this.unownedMs / 1000, worst: this.worst };
  }

  onEvent(event: FleetEvent): void {
    this.context.tick();
    if (event.type === 'failed') {
      this.context.fail(new Error(`member ${event.id} failed: ${event.error}`));
      return;
    }
    this.account();
    for (const item of event.removed) {
      if (this.owners.get(item) === event.id) this.owners.delete(item);
    }
    for (const [item] of event.added) {
      const before = this.owners.get(item);
      if (before !== undefined && before !== event.id && this.oneProcess) {
        this.context.flagViolation(
          `fleet-rollout: ${event.id} owns ${item} while ${before} has it`,
        );
      }
      this.owners.set(item, event.id);
    }
    this.gate.check();
  }

  /** A member left: what it owned is no longer owned. */
  left(id: string): void {
    this.account();
    this.live.delete(id);
    for (const [item, owner] of this.owners) if (owner === id) this.owners.delete(item);
  }

  /** Every item some live member lists is owned by one that lists it; nothing else is owned. */
  settled(): boolean {
    const expected = this.expected();
    for (const item of expected) {
      const owner = this.owners.get(item);
      if (owner === undefined || !this.live.get(owner)?.has(item)) return false;
    }
    for (const item of this.owners.keys()) if (!expected.has(item)) return false;
    return true;
  }

  /** Resolves true once settled, false after `limitMs`. */
  until(limitMs: number): Promise<boolean> {
    return this.gate.until(() => this.settled(), limitMs);
  }
}

export const fleetRollout: Scenario = {
  name: 'fleet-rollout',
  summary: 'a rolling deploy of C members over N items that replaces 1 % of the set',
  defaultClients: 20,
  defaultOps: 2_000,
  warmupFor: () => 0,
  warmupHoldMs: 0,
  minStallSeconds: 60,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, ops: items, connect } = context.settings;
    const processes = Math.max(1, Math.min(context.settings.processes ?? 1, count));
    const path = joinPath(context.base, 'fleet');
    const replaced = Math.max(1, Math.round(items / 100));
    const settings: FleetHostSettings = {
      connect,
      path,
      items,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      replaced,
    };
    const first = new Set(fleetItems(items));
    const next = new Set(nextFleetItems(items, replaced));
    const view = new RolloutView(context, processes === 1);
    const report = (event: FleetEvent) => view.onEvent(event);
    const hosts: Host[] = Array.from({ length: processes }, () =>
      processes === 1 ? localHost(settings, report) : workerHost(settings, report),
    );
    // Old member i and its replacement live in process i mod P.
    const oldIds = Array.from({ length: count }, (_, index) => memberId(index));
    const newIds = oldIds.map((id) => id.replace('member-', 'member-n'));
    const hostOf = (id: string) =>
      hosts[Math.max(oldIds.indexOf(id), newIds.indexOf(id)) % processes] as Host;
    const extra: Record<string, number | string> = { processes, members: count, items, replaced };
    const steps: { settledMs: number | undefined; itemSeconds: number; worst: number }[] = [];
    let elapsedMs = 0;
    let packets = 0;
    try {
      context.log(`connecting ${2 * count} sessions in ${processes} process(es)`);
      await context.guard(
        Promise.all(
          hosts.map((host, at) =>
            host.run({
              type: 'connect',
              ids: [...oldIds, ...newIds].filter((id) => hostOf(id) === hosts[at]),
            }),
          ),
        ),
      );
      for (const id of oldIds) view.live.set(id, first);
      await Promise.all(
        hosts.map((host, at) =>
          host.run({ type: 'join', ids: oldIds.filter((id) => hostOf(id) === hosts[at]) }),
        ),
      );
      if (!(await view.until(10 * 60_000)))
        throw new Error('fleet-rollout: never settled at start');
      // The coordinator now (its mutex's holder): replaced last, as a deploy would meet it.
      const coordinator = (await inspectFleet(context.admin, path))?.coordinator;
      const order = [
        ...oldIds.filter((id) => id !== coordinator),
        ...(coordinator ? [coordinator] : []),
      ];
      extra.coordinator_replaced_at_step = order.length;
      const before = await serverCounts(connect);
      const started = performance.now();
      for (const [step, old] of order.entries()) {
        const replacement = newIds[oldIds.indexOf(old)] as string;
        view.begin();
        const at = performance.now();
        await hostOf(old).run({ type: 'leave', id: old });
        view.left(old);
        view.live.set(replacement, next);
        await hostOf(replacement).run({ type: 'join', ids: [replacement], set: 'next' });
        const settled = await view.until(SETTLE_LIMIT_MS);
        const settledMs = settled ? performance.now() - at : undefined;
        const { itemSeconds, worst } = view.cost();
        steps.push({ settledMs, itemSeconds, worst });
        context.log(
          `step ${step + 1}/${order.length} (${old} → ${replacement}): ${settled ? `settled in ${round(settledMs as number, 1)} ms` : `not settled after ${SETTLE_LIMIT_MS} ms`}, ${round(itemSeconds, 2)} unowned item-seconds, at most ${worst} unowned`,
        );
      }
      elapsedMs = performance.now() - started;
      const after = await serverCounts(connect);
      packets = after.packets - before.packets;
      const settledTimes = steps
        .map((step) => step.settledMs)
        .filter((ms): ms is number => ms !== undefined)
        .sort((a, b) => a - b);
      const itemSeconds = steps.map((step) => step.itemSeconds);
      Object.assign(extra, {
        steps: steps.length,
        steps_settled: settledTimes.length,
        settle_ms_p50: round(settledTimes[Math.floor(settledTimes.length / 2)] ?? Number.NaN, 1),
        settle_ms_max: round(settledTimes.at(-1) ?? Number.NaN, 1),
        unowned_item_seconds_total: round(
          itemSeconds.reduce((sum, value) => sum + value, 0),
          2,
        ),
        unowned_item_seconds_per_step_max: round(Math.max(...itemSeconds), 2),
        unowned_at_once_max: Math.max(...steps.map((step) => step.worst)),
        both_sets: [...first].filter((item) => next.has(item)).length,
        reply_mb: round((after.bytes - before.bytes) / 1e6, 3),
        session_timeout_ms: SESSION_TIMEOUT_MS,
      });
    } finally {
      await Promise.all(hosts.map((host) => host.close().catch(() => {})));
    }
    return {
      latencies: steps.map((step) => step.settledMs ?? SETTLE_LIMIT_MS),
      elapsedMs,
      packets,
      clients: count,
      extra,
    };
  },
};
