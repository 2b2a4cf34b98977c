/**
 * The members of a `fleet-scale` run that live in one process: each its own client (session)
 * and `partition` subscription. The scenario drives them directly (one process) or through
 * `tools/fleet-worker.ts` (several), and hears every assignment change as an event.
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { type Assignment, partition } from '@zkrx/fleet';
import { expireSession, startProxy, type TcpProxy } from '@zkrx/testing';
import type { Subscription } from 'rxjs';

/** What the scenario hears from a host. */
export type FleetEvent =
  | {
      readonly type: 'assignment';
      readonly id: string;
      /** Items owned now and not before, with their fencing tokens. */
      readonly added: readonly (readonly [string, number])[];
      readonly removed: readonly string[];
    }
  | { readonly type: 'failed'; readonly id: string; readonly error: string };

/** What the scenario tells a host to do. */
export type FleetCommand =
  | { readonly type: 'connect'; readonly ids: readonly string[] }
  | { readonly type: 'join'; readonly ids: readonly string[] }
  | { readonly type: 'leave'; readonly id: string }
  | { readonly type: 'expire'; readonly id: string }
  | { readonly type: 'crash'; readonly id: string }
  | { readonly type: 'cpu' }
  | { readonly type: 'close' };

/** The setting every host of a run shares. */
export interface FleetHostSettings {
  readonly connect: string;
  readonly path: string;
  readonly items: number;
  readonly sessionTimeoutMs: number;
  /** The member the `crash` step cuts off for good: its client goes through a proxy. */
  readonly crashVictim?: string;
}

/** The items of a run: `item-00000`, ... (sorted as they are numbered). */
export function fleetItems(count: number): string[] {
  const width = Math.max(5, String(count - 1).length);
  return Array.from({ length: count }, (_, index) => `item-${String(index).padStart(width, '0')}`);
}

/** The member ids of a run: `member-000`, ... */
export function memberId(index: number): string {
  return `member-${String(index).padStart(3, '0')}`;
}

interface HostedMember {
  readonly client: ZkClient;
  subscription: Subscription | undefined;
  /** The crash victim's proxy. */
  proxy?: TcpProxy;
}

export class FleetHost {
  private readonly members = new Map<string, HostedMember>();
  private readonly items: readonly string[];

  constructor(
    private readonly settings: FleetHostSettings,
    private readonly report: (event: FleetEvent) => void,
  ) {
    this.items = fleetItems(settings.items);
  }

  /** Runs one command; resolves what it answers (the CPU time for `cpu`). */
  async run(command: FleetCommand): Promise<unknown> {
    switch (command.type) {
      case 'connect':
        // A few at a time: a hundred handshakes at once only slow each other down.
        for (let at = 0; at < command.ids.length; at += 16) {
          await Promise.all(command.ids.slice(at, at + 16).map((id) => this.connect(id)));
        }
        return undefined;
      case 'join':
        for (const id of command.ids) this.join(id);
        return undefined;
      case 'leave':
        this.member(command.id).subscription?.unsubscribe();
        return undefined;
      case 'expire':
        await expireSession(this.member(command.id).client);
        return undefined;
      case 'crash': {
        // As if its process died: no close, no packet more; the server expires its session
        // after the session timeout.
        const proxy = this.member(command.id).proxy;
        if (!proxy) throw new Error(`${command.id} is not the crash victim`);
        proxy.refuse();
        proxy.cut();
        return undefined;
      }
      case 'cpu': {
        const { user, system } = process.cpuUsage();
        return user + system;
      }
      case 'close':
        await this.close();
        return undefined;
    }
  }

  private async connect(id: string): Promise<void> {
    const proxy =
      id === this.settings.crashVictim ? await startProxy(this.settings.connect) : undefined;
    const client = createClient({
      connect: proxy?.connectString ?? this.settings.connect,
      sessionTimeoutMs: this.settings.sessionTimeoutMs,
    });
    this.members.set(id, { client, subscription: undefined, proxy });
    await client.connected(60_000);
  }

  private member(id: string): HostedMember {
    const member = this.members.get(id);
    if (!member) throw new Error(`no member ${id} in this process`);
    return member;
  }

  private join(id: string): void {
    const member = this.member(id);
    member.subscription = partition(member.client, this.settings.path, this.items, {
      id,
    }).subscribe({
      next: (assignment: Assignment) => {
        this.report({
          type: 'assignment',
          id,
          added: assignment.added.map((item) => [
            item,
            assignment.owned.get(item)?.fencingToken ?? 0,
          ]),
          removed: assignment.removed,
        });
      },
      error: (error: unknown) => {
        this.report({ type: 'failed', id, error: String(error) });
      },
    });
  }

  async close(): Promise<void> {
    for (const member of this.members.values()) member.subscription?.unsubscribe();
    await Promise.all(
      [...this.members.values()].map(async (member) => {
        await member.client.close();
        await member.proxy?.close();
      }),
    );
    this.members.clear();
  }
}
