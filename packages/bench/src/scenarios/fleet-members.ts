/**
 * fleet-members: C members (`--clients` / `--members`, each its own session, in this process)
 * join one `members()` group at once; the time until every member sees all C, the server's
 * packets (received + sent) and watches; then one more joins: the time until all C + 1 see it,
 * and its packets.
 */
import { createClient, joinPath, type ZkClient } from '@zkrx/core';
import { members } from '@zkrx/fleet';
import type { Subscription } from 'rxjs';
import { memberId } from '../fleet-host';
import { type ScenarioResult, serverCounts } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';

export const fleetMembers: Scenario = {
  name: 'fleet-members',
  summary: 'C members join one members() group at once; then one more joins',
  defaultClients: 50,
  defaultOps: 1,
  warmupFor: () => 0,
  warmupHoldMs: 0,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, connect } = context.settings;
    const path = joinPath(context.base, 'group');
    const clients: ZkClient[] = [];
    const subscriptions: Subscription[] = [];
    const seen: number[] = [];
    let waiter: (() => void) | undefined;
    const until = (condition: () => boolean) =>
      context.guard(
        new Promise<void>((resolve) => {
          const check = () => {
            if (!condition()) return;
            waiter = undefined;
            resolve();
          };
          waiter = check;
          check();
        }),
      );
    const everyone = (size: number) => () =>
      seen.length === size && seen.every((value) => value === size);
    try {
      context.log(`connecting ${count + 1} sessions`);
      for (let at = 0; at <= count; at += 16) {
        const batch = Array.from({ length: Math.min(16, count + 1 - at) }, () =>
          createClient({ connect, sessionTimeoutMs: 10_000 }),
        );
        clients.push(...batch);
        await context.guard(Promise.all(batch.map((client) => client.connected(60_000))));
        context.progress();
      }
      const join = (index: number) => {
        seen[index] = 0;
        subscriptions.push(
          members(clients[index] as ZkClient, path, { id: memberId(index) }).subscribe({
            next: (all) => {
              seen[index] = all.length;
              context.tick();
              waiter?.();
            },
            error: (error: unknown) => context.fail(error),
          }),
        );
      };
      const one = await serverCounts(connect);
      const two = await serverCounts(connect);
      const self = two.packets - one.packets;
      const selfSent = two.sent - one.sent;
      const before = await serverCounts(connect);
      const started = performance.now();
      for (let index = 0; index < count; index++) join(index);
      await until(everyone(count));
      const coldMs = performance.now() - started;
      const cold = await serverCounts(connect);
      context.log(`${count} members see each other: ${round(coldMs, 1)} ms`);
      const joinStarted = performance.now();
      join(count);
      await until(everyone(count + 1));
      const joinMs = performance.now() - joinStarted;
      const after = await serverCounts(connect);
      context.log(`one more joined, seen by all: ${round(joinMs, 1)} ms`);
      const coldPackets = cold.packets - before.packets - 2 * self;
      return {
        latencies: [coldMs],
        elapsedMs: coldMs,
        packets: cold.sent - before.sent - 2 * selfSent,
        clients: count,
        extra: {
          members: count,
          cold_ms: round(coldMs, 1),
          cold_packets: coldPackets,
          watches: cold.watches,
          join_ms: round(joinMs, 1),
          join_packets: after.packets - cold.packets - 2 * self,
        },
      };
    } finally {
      for (const subscription of subscriptions) subscription.unsubscribe();
      await Promise.all(clients.map((client) => client.close()));
    }
  },
};
