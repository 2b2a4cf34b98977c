/**
 * fleet-scale: a `@zkrx/fleet` partition at the sizes fleets have. C members (`--clients` or
 * `--members`, each its own session) share N items (`--ops` or `--items`), spread over P Node
 * processes (`--processes`, default 1: all in this one). The steps (`--fleet-steps`, default
 * all, in this order):
 *
 * - `cold`: every member subscribes at once (a deployment); the time until every item is owned
 *   and until the fleet is balanced (each member ⌊N/C⌋ or ⌈N/C⌉), the members' CPU time, the server's packets (received + sent, from
 *   `mntr`) per item, and the server's watches once balanced (`zk_watch_count`);
 * - `join`: one more member joins; time to balanced, items moved against the fewest possible
 *   (the newcomer's quota), items interrupted, packets per moved item;
 * - `leave`: the first member leaves (unsubscribes); time until its items are owned again and
 *   the fleet balanced;
 * - `expire`: the next member's session is expired on the server (`expireSession`); time until
 *   it knew, joined again and the fleet is balanced again;
 * - `crash`: the third member is cut off for good (its client goes through a proxy that then
 *   refuses it), as if its process died: time until ZooKeeper expired its session (the session
 *   timeout, `session_timeout_ms`) and the others own its items, balanced.
 *
 * Every member's client connects before any clock starts. What the members own is taken from
 * their emissions: an item enters an assignment only once its lock is held. With one process
 * an item added by a member while another still lists it is a violation (exit 2); across
 * processes the order in which two processes' messages arrive is not the order of events, so
 * such overlaps are only counted (`cross_process_overlaps`): the soak judges that rule on
 * ZooKeeper's log.
 */
import { joinPath } from '@zkrx/core';
import {
  type FleetEvent,
  FleetGate,
  type FleetHostSettings,
  type Host,
  localHost,
  memberId,
  workerHost,
} from '../fleet-host';
import { type RunContext, type ScenarioResult, serverCounts } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';

/** The steps a run can take, in their order. */
export const FLEET_STEPS = ['cold', 'join', 'leave', 'expire', 'crash'] as const;
export type FleetStep = (typeof FLEET_STEPS)[number];

const SESSION_TIMEOUT_MS = 10_000;
/** A cold start logs how far it got this often. */
const PROGRESS_EVERY_MS = 15_000;

/** Who owns what, from the members' emissions, and the conditions the steps wait for. */
export class FleetView {
  readonly owners = new Map<string, string>();
  readonly counts = new Map<string, number>();
  readonly live = new Set<string>();
  /** When each item was first owned (ms, performance.now()). */
  readonly firstOwned = new Map<string, number>();
  violations: string[] = [];
  crossOverlaps = 0;
  interrupted = 0;

  private readonly gate: FleetGate;

  constructor(
    readonly items: number,
    private readonly oneProcess: boolean,
    private readonly context: RunContext,
  ) {
    this.gate = new FleetGate(context);
  }

  onEvent(event: FleetEvent): void {
    this.context.tick();
    if (event.type === 'failed') {
      this.context.fail(new Error(`member ${event.id} failed: ${event.error}`));
      return;
    }
    const { id } = event;
    for (const item of event.removed) {
      this.interrupted += 1;
      if (this.owners.get(item) !== id) continue;
      this.owners.delete(item);
      this.counts.set(id, (this.counts.get(id) ?? 0) - 1);
    }
    const now = performance.now();
    for (const [item] of event.added) {
      const before = this.owners.get(item);
      if (before !== undefined && before !== id) {
        if (this.oneProcess) {
          this.context.flagViolation(`fleet-scale: ${id} owns ${item} while ${before} has it`);
        } else {
          this.crossOverlaps += 1;
        }
        this.counts.set(before, (this.counts.get(before) ?? 0) - 1);
      }
      this.owners.set(item, id);
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
      if (!this.firstOwned.has(item)) this.firstOwned.set(item, now);
    }
    this.gate.check();
  }

  /** A member left: what it owned is no longer owned (it emits nothing as it leaves). */
  left(id: string): void {
    this.live.delete(id);
    for (const [item, owner] of this.owners) {
      if (owner !== id) continue;
      this.owners.delete(item);
      this.interrupted += 1;
    }
    this.counts.set(id, 0);
  }

  allOwned(): boolean {
    if (this.owners.size !== this.items) return false;
    let total = 0;
    for (const id of this.live) total += this.counts.get(id) ?? 0;
    return total === this.items;
  }

  balanced(): boolean {
    if (!this.allOwned()) return false;
    const low = Math.floor(this.items / this.live.size);
    const high = Math.ceil(this.items / this.live.size);
    for (const id of this.live) {
      const count = this.counts.get(id) ?? 0;
      if (count < low || count > high) return false;
    }
    return true;
  }

  /** Resolves once `condition` holds (checked at every event). */
  async until(condition: () => boolean): Promise<void> {
    await this.gate.until(condition);
  }
}

export const fleetScale: Scenario = {
  name: 'fleet-scale',
  summary: 'C members (sessions) share N items: cold start, a join, a leave, an expiry',
  defaultClients: 4,
  defaultOps: 200,
  warmupFor: () => 0,
  warmupHoldMs: 0,
  // The crash step waits a session timeout for ZooKeeper to expire the victim's session.
  minStallSeconds: 60,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, ops: items, connect } = context.settings;
    const processes = Math.max(1, Math.min(context.settings.processes ?? 1, count));
    const steps = context.settings.fleetSteps ?? FLEET_STEPS;
    const path = joinPath(context.base, 'fleet');
    // Member i lives in process i mod P; the newcomer of `join` is member C.
    const nameBytes = context.settings.nameBytes;
    const ids = Array.from({ length: count + 1 }, (_, index) => memberId(index, nameBytes));
    const settings: FleetHostSettings = {
      connect,
      path,
      items,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      nameBytes,
      crashVictim: steps.includes('crash') && count >= 3 ? ids[2] : undefined,
    };
    const view = new FleetView(items, processes === 1, context);
    const report = (event: FleetEvent) => view.onEvent(event);
    const hosts: Host[] = Array.from({ length: processes }, () =>
      processes === 1 ? localHost(settings, report) : workerHost(settings, report),
    );
    const hostOf = (id: string) => hosts[ids.indexOf(id) % processes] as Host;
    const byHost = (chosen: readonly string[]) =>
      hosts.map((host) => ({ host, ids: chosen.filter((id) => hostOf(id) === host) }));
    const cpuMicros = async () =>
      (await Promise.all(hosts.map((host) => host.run({ type: 'cpu' })))).reduce(
        (sum: number, value) => sum + (value as number),
        0,
      );
    // One mntr's own packets (two back to back, as the harness does).
    const one = await serverCounts(connect);
    const two = await serverCounts(connect);
    const self = two.packets - one.packets;
    const selfSent = two.sent - one.sent;
    const selfBytes = two.bytes - one.bytes;
    const extra: Record<string, number | string> = { processes, members: count, items };
    if (nameBytes !== undefined) extra.name_bytes = nameBytes;
    const measure = async <T>(label: string, act: () => Promise<T>) => {
      context.log(`${label}...`);
      const before = await serverCounts(connect);
      const cpu = await cpuMicros();
      const started = performance.now();
      const value = await act();
      const ms = performance.now() - started;
      const cpuMs = ((await cpuMicros()) - cpu) / 1000;
      const after = await serverCounts(connect);
      const packets = after.packets - before.packets - 2 * self;
      const sent = after.sent - before.sent - 2 * selfSent;
      const bytes = after.bytes - before.bytes - 2 * selfBytes;
      context.log(
        `${label}: ${round(ms, 1)} ms, ${packets} server packets, ${round(bytes / 1e6, 3)} MB of replies, ${round(cpuMs, 1)} ms client CPU, ${after.watches} watches`,
      );
      return { value, ms, cpuMs, packets, sent, bytes, watches: after.watches };
    };
    let coldMs = 0;
    let coldPackets = 0;
    const latencies: number[] = [];
    try {
      context.log(`connecting ${count + 1} sessions in ${processes} process(es)`);
      await context.guard(
        Promise.all(
          byHost(ids).map(({ host, ids: mine }) => host.run({ type: 'connect', ids: mine })),
        ),
      );
      const first = ids.slice(0, count);
      for (const id of first) view.live.add(id);
      const joinAll = () =>
        Promise.all(
          byHost(first).map(({ host, ids: mine }) => host.run({ type: 'join', ids: mine })),
        );
      if (!steps.includes('cold')) throw new Error('fleet-scale: the cold step comes first');
      let allOwnedMs = 0;
      // How far a long cold start has got (a run stopped before it balances still says).
      const progress: string[] = [];
      const coldStarted = performance.now();
      const coldBefore = await serverCounts(connect);
      const ticker = setInterval(() => {
        void serverCounts(connect).then(
          (now) => {
            const seconds = Math.round((performance.now() - coldStarted) / 1000);
            const sharing = [...view.live].filter((id) => (view.counts.get(id) ?? 0) > 0).length;
            const mb = round((now.bytes - coldBefore.bytes) / 1e6, 1);
            progress.push(`${seconds}s:${view.owners.size}`);
            context.log(
              `cold start, ${seconds} s: ${view.owners.size} of ${items} owned, ${sharing} of ${view.live.size} members own some, ${mb} MB of replies, ${now.packets - coldBefore.packets} packets`,
            );
          },
          () => {},
        );
      }, PROGRESS_EVERY_MS);
      const cold = await measure('cold start', async () => {
        const t0 = performance.now();
        await joinAll();
        await view.until(() => view.allOwned());
        allOwnedMs = performance.now() - t0;
        await view.until(() => view.balanced());
        for (const at of view.firstOwned.values()) latencies.push(at - t0);
      }).finally(() => clearInterval(ticker));
      if (progress.length > 0) extra.cold_owned_over_time = progress.join(' ');
      coldMs = cold.ms;
      coldPackets = cold.sent;
      Object.assign(extra, {
        cold_all_owned_ms: round(allOwnedMs, 1),
        cold_balanced_ms: round(cold.ms, 1),
        cold_client_cpu_ms: round(cold.cpuMs, 1),
        cold_packets: cold.packets,
        cold_packets_per_item: round(cold.packets / items, 2),
        cold_reply_mb: round(cold.bytes / 1e6, 3),
        watches: cold.watches,
        watch_bound_2n_m2: 2 * items + count * count,
      });
      const change = async (
        step: FleetStep,
        act: () => Promise<unknown>,
        done: () => boolean,
        minimum: number,
      ) => {
        const before = new Map(view.owners);
        const interrupted = view.interrupted;
        const result = await measure(step, async () => {
          await act();
          await view.until(done);
        });
        let moved = 0;
        for (const [item, owner] of before) if (view.owners.get(item) !== owner) moved += 1;
        const size = view.live.size;
        Object.assign(extra, {
          [`${step}_ms`]: round(result.ms, 1),
          [`${step}_moved`]: moved,
          [`${step}_minimum`]: minimum,
          [`${step}_interrupted`]: view.interrupted - interrupted,
          [`${step}_packets`]: result.packets,
          [`${step}_packets_per_moved`]: moved > 0 ? round(result.packets / moved, 1) : 0,
          [`${step}_reply_mb`]: round(result.bytes / 1e6, 3),
          [`${step}_client_cpu_ms`]: round(result.cpuMs, 1),
          [`${step}_cpu_ms_per_member`]: round(result.cpuMs / size, 2),
          [`${step}_watches`]: result.watches,
        });
      };
      if (steps.includes('join')) {
        const newcomer = ids[count] as string;
        view.live.add(newcomer);
        await change(
          'join',
          () => hostOf(newcomer).run({ type: 'join', ids: [newcomer] }),
          () => view.balanced(),
          Math.floor(items / view.live.size),
        );
      }
      if (steps.includes('leave')) {
        const leaver = ids[0] as string;
        const minimum = view.counts.get(leaver) ?? 0;
        await change(
          'leave',
          async () => {
            await hostOf(leaver).run({ type: 'leave', id: leaver });
            view.left(leaver);
          },
          () => view.balanced(),
          minimum,
        );
      }
      if (steps.includes('expire')) {
        const victim = ids[1] as string;
        // Its items are lost on the server at once; it learns when it reconnects, gives them
        // up (an emission without them), joins again, and the fleet balances again.
        let lost = false;
        const minimum = view.counts.get(victim) ?? 0;
        await change(
          'expire',
          () => hostOf(victim).run({ type: 'expire', id: victim }),
          () => {
            lost ||= (view.counts.get(victim) ?? 0) === 0;
            return lost && view.balanced();
          },
          minimum,
        );
      }
      if (steps.includes('crash') && settings.crashVictim) {
        const victim = settings.crashVictim;
        const minimum = view.counts.get(victim) ?? 0;
        await change(
          'crash',
          async () => {
            await hostOf(victim).run({ type: 'crash', id: victim });
            view.live.delete(victim);
          },
          () => (view.counts.get(victim) ?? 0) === 0 && view.balanced(),
          minimum,
        );
      }
      if (view.crossOverlaps > 0) extra.cross_process_overlaps = view.crossOverlaps;
      extra.session_timeout_ms = SESSION_TIMEOUT_MS;
    } finally {
      await Promise.all(hosts.map((host) => host.close().catch(() => {})));
    }
    return {
      latencies,
      elapsedMs: coldMs,
      packets: coldPackets,
      clients: count,
      extra,
    };
  },
};
