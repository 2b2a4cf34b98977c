/**
 * `fleet-boot`: a whole stack started at once, the fleet before ZooKeeper. C members (default
 * 20, each its own session, the client's defaults otherwise: a service's) over N items (default
 * 2,000) are made and subscribe while nothing listens on their server's port; `--boot-s` seconds
 * later (default 60) a ZooKeeper starts on that port. Measured from the server's start (its
 * client port answering) until the fleet is balanced (each member ⌊N/C⌋ or ⌈N/C⌉, every item
 * owned once); the server's packets and reply bytes until then (all of its life). An item added
 * by a member while another still lists it is a violation (exit 2): the members share this one
 * process, so their emissions come in the order of events.
 */
import { joinPath } from '@zkrx/core';
import { freePorts, startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { type FleetEvent, type FleetHostSettings, localHost, memberId } from '../fleet-host';
import { type ScenarioResult, serverCounts, sleep } from '../run-context';
import type { Scenario } from '../scenario';
import { round } from '../stats';
import { FleetView } from './fleet-scale';

const SESSION_TIMEOUT_MS = 10_000;
/** How long the fleet waits with its server down, unless `--boot-s` says (s). */
export const DEFAULT_BOOT_SECONDS = 60;

export const fleetBoot: Scenario = {
  name: 'fleet-boot',
  summary: 'C members over N items subscribe before ZooKeeper starts (--boot-s later)',
  defaultClients: 20,
  defaultOps: 2_000,
  warmupFor: () => 0,
  warmupHoldMs: 0,
  minStallSeconds: 60,
  async run(context): Promise<ScenarioResult> {
    const { clients: count, ops: items } = context.settings;
    const bootSeconds = context.settings.bootSeconds ?? DEFAULT_BOOT_SECONDS;
    const [port] = await freePorts(1);
    const connect = `127.0.0.1:${port}`;
    const settings: FleetHostSettings = {
      connect,
      path: joinPath(context.base, 'fleet'),
      items,
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
    };
    const view = new FleetView(items, true, context);
    const host = localHost(settings, (event: FleetEvent) => view.onEvent(event));
    const ids = Array.from({ length: count }, (_, index) => memberId(index));
    let server: ZooKeeperServer | undefined;
    // Nothing happens while the server is down: the stall guard is told the run is alive.
    const alive = setInterval(() => context.tick(), 1_000);
    const extra: Record<string, number | string> = { members: count, items, boot_s: bootSeconds };
    let balancedMs = 0;
    let allOwnedMs = 0;
    let packets = 0;
    try {
      context.log(`${count} members subscribe; ZooKeeper starts on ${connect} in ${bootSeconds} s`);
      await host.run({ type: 'connect', ids, wait: false });
      for (const id of ids) view.live.add(id);
      await host.run({ type: 'join', ids });
      await sleep(bootSeconds * 1_000);
      server = await startZooKeeper({ port, tmpfs: true, tickTime: 2_000 });
      const upAt = performance.now();
      context.log('ZooKeeper is up');
      clearInterval(alive);
      // How far it got, each second until balanced: who owns how many.
      const progress = setInterval(() => {
        const counts = ids.map((id) => view.counts.get(id) ?? 0);
        const idle = ids.filter((id) => (view.counts.get(id) ?? 0) === 0);
        context.log(
          `+${round((performance.now() - upAt) / 1_000, 1)} s: ${view.owners.size} of ${items} owned; per member ${Math.min(...counts)}..${Math.max(...counts)}${idle.length > 0 ? `; owning none: ${idle.slice(0, 5).join(', ')}${idle.length > 5 ? ', ...' : ''}` : ''}`,
        );
      }, 1_000);
      try {
        await view.until(() => view.allOwned());
        allOwnedMs = performance.now() - upAt;
        await view.until(() => view.balanced());
      } finally {
        clearInterval(progress);
      }
      balancedMs = performance.now() - upAt;
      const counts = await serverCounts(connect);
      packets = counts.packets;
      context.log(
        `balanced ${round(balancedMs, 1)} ms after ZooKeeper was up (all owned at ${round(allOwnedMs, 1)} ms), ${packets} server packets, ${round(counts.bytes / 1e6, 3)} MB of replies`,
      );
      Object.assign(extra, {
        all_owned_after_up_ms: round(allOwnedMs, 1),
        balanced_after_up_ms: round(balancedMs, 1),
        packets_per_item: round(packets / items, 2),
        reply_mb: round(counts.bytes / 1e6, 3),
        session_timeout_ms: SESSION_TIMEOUT_MS,
      });
    } finally {
      clearInterval(alive);
      await host.close().catch(() => {});
      await server?.close();
    }
    return { latencies: [balancedMs], elapsedMs: balancedMs, packets, clients: count, extra };
  },
};
