/**
 * A fleet of partition members in one test process, and the checks every partition test makes:
 * no item in two members' assignments at once, tokens rising per item, who moved, who stayed.
 */
import { type Acl, READ_ACL_UNSAFE, type ZkClient } from '@zkrx/core';
import type { Observable, Subscription } from 'rxjs';
import { afterEach } from 'vitest';
import { type Assignment, type OwnedItem, type PartitionOptions, partition } from '../src/index';

/** Every member of the test, in one ordered log. */
export interface FleetLog {
  readonly members: FleetMember[];
  /** Broken rules seen at emissions (empty when all is well). */
  readonly violations: string[];
  /** Each item's owners in the order they got it: member id and token. */
  readonly history: Map<string, { id: string; token: number }[]>;
}

export interface FleetMember {
  readonly id: string;
  readonly client: ZkClient;
  readonly assignments: Assignment[];
  readonly state: { error: unknown; completed: boolean };
  subscription: Subscription;
  latest(): Assignment | undefined;
  items(): readonly string[];
  stop(): void;
}

const running: Subscription[] = [];
afterEach(() => {
  for (const subscription of running.splice(0)) subscription.unsubscribe();
});

export function fleetLog(): FleetLog {
  return { members: [], violations: [], history: new Map() };
}

/**
 * Starts a member and checks, at each of its emissions, that no other member of `log` lists an
 * item it adds (the previous owner emits without it before releasing the lock, and this one
 * holds only after that release), and that the item's token rose.
 */
export function startMember(
  log: FleetLog,
  client: ZkClient,
  path: string,
  items: readonly string[] | Observable<readonly string[]>,
  options: PartitionOptions,
  onAssignment?: (assignment: Assignment, member: FleetMember) => void,
): FleetMember {
  const member: FleetMember = {
    id: options.id,
    client,
    assignments: [],
    state: { error: undefined, completed: false },
    subscription: undefined as unknown as Subscription,
    latest: () => member.assignments.at(-1),
    items: () => member.assignments.at(-1)?.items ?? [],
    stop: () => member.subscription.unsubscribe(),
  };
  log.members.push(member);
  member.subscription = partition(client, path, items, options).subscribe({
    next: (assignment) => {
      member.assignments.push(assignment);
      for (const item of assignment.added) {
        const owned = assignment.owned.get(item) as OwnedItem;
        for (const other of log.members) {
          if (other !== member && !other.subscription.closed && other.items().includes(item)) {
            log.violations.push(`${item}: ${member.id} got it while ${other.id} still had it`);
          }
        }
        const owners = log.history.get(item) ?? [];
        const last = owners.at(-1);
        if (last && last.token >= owned.fencingToken) {
          log.violations.push(
            `${item}: token ${owned.fencingToken} of ${member.id} after ${last.token} of ${last.id}`,
          );
        }
        owners.push({ id: member.id, token: owned.fencingToken });
        log.history.set(item, owners);
      }
      for (const item of assignment.items) {
        if (assignment.owned.get(item)?.signal.aborted) {
          log.violations.push(`${item}: emitted by ${member.id} with its signal aborted`);
        }
      }
      onAssignment?.(assignment, member);
    },
    error: (error: unknown) => {
      member.state.error = error;
    },
    complete: () => {
      member.state.completed = true;
    },
  });
  running.push(member.subscription);
  return member;
}

/** Starts one member on each client, with the ids given (in order). */
export function startMembers(
  log: FleetLog,
  clients: readonly ZkClient[],
  path: string,
  items: readonly string[] | Observable<readonly string[]>,
  ids: readonly string[],
): FleetMember[] {
  return ids.map((id, at) => startMember(log, clients[at] as ZkClient, path, items, { id }));
}

/** True once the running members' assignments split `items` with ⌊n/m⌋ or ⌈n/m⌉ each. */
export function converged(members: readonly FleetMember[], items: readonly string[]): boolean {
  const live = members.filter((member) => !member.subscription.closed);
  if (live.length === 0) return false;
  const all = live.flatMap((member) => member.items());
  if (all.length !== items.length || new Set(all).size !== items.length) return false;
  if (!items.every((item) => all.includes(item))) return false;
  const low = Math.floor(items.length / live.length);
  const high = Math.ceil(items.length / live.length);
  return live.every((member) => {
    const count = member.items().length;
    return count >= low && count <= high;
  });
}

/** Each item's owner (member id) now, from the members' latest assignments. */
export function ownersOf(members: readonly FleetMember[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const member of members) {
    if (member.subscription.closed) continue;
    for (const item of member.items()) owners.set(item, member.id);
  }
  return owners;
}

/** The owned item handles of every running member now. */
export function handlesOf(members: readonly FleetMember[]): Map<string, OwnedItem> {
  const handles = new Map<string, OwnedItem>();
  for (const member of members) {
    if (member.subscription.closed) continue;
    for (const [item, owned] of member.latest()?.owned ?? []) handles.set(item, owned);
  }
  return handles;
}

/** Items whose owner differs between two snapshots (both owned). */
export function moved(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...before]
    .filter(([item, owner]) => after.has(item) && after.get(item) !== owner)
    .map(([item]) => item);
}

export const names = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, at) => `${prefix}-${String(at).padStart(2, '0')}`);

/**
 * Makes `<path>/items/<item>` a path no lock node can be made under (an ACL without `create`,
 * READ_ACL_UNSAFE by default): every lock on the item fails for good (NoAuth), a poison item.
 */
export async function refusedLockPath(
  observer: ZkClient,
  path: string,
  item: string,
  acl: readonly Acl[] = READ_ACL_UNSAFE,
): Promise<string> {
  await observer.promises.mkdirp(`${path}/items`, { mode: 'container' });
  const node = `${path}/items/${item}`;
  await observer.promises.create(node, '', { acl });
  return node;
}
