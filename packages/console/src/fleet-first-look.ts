/**
 * A partition's first screen, before `inspectFleet` has read all of it: its members, every
 * item's name, and the owners of the first items in order (what a page shows at the top) —
 * the listings of the members and of the items, then a read per member and FIRST_ITEMS item
 * locks at once, so a fleet of 10,000 items shows in well under a second; the owners of the rest
 * follow.
 */
import { joinPath, type ZkClient } from '@zkrx/core';
import {
  type InspectedFleet,
  type InspectedItem,
  type InspectedMember,
  readMemberNode,
} from '@zkrx/fleet';
import { inspect } from '@zkrx/lock';
import { holdsOf } from './fleet-holds';

/** Items whose owner the first look reads: more than a screen of rows. */
export const FIRST_ITEMS = 64;

/** A partition as far as the first look read it; `unread`: the items whose owner is not known yet. */
export interface FirstLook {
  readonly fleet: InspectedFleet;
  readonly unread: ReadonlySet<string>;
}

function gone(error: unknown): undefined {
  if ((error as { code?: string }).code === 'NoNode') return undefined;
  throw error;
}

/**
 * A partition's live members in join order (a listing's names, or a new listing): one read
 * each, pipelined. Their `items` are left empty.
 */
export async function readMembers(
  client: ZkClient,
  membersPath: string,
  names?: readonly string[],
): Promise<InspectedMember[]> {
  const listed = names ?? (await client.promises.children(membersPath).catch(gone)) ?? [];
  const read = await Promise.all(
    listed.map(async (id) => {
      const node = await client.promises.get(joinPath(membersPath, id)).catch(gone);
      if (!node || node.stat.ephemeralOwner === '0') return undefined;
      return {
        id,
        ...readMemberNode(node.data, 'partition'),
        sessionId: node.stat.ephemeralOwner,
        joinedAt: node.stat.ctime,
        czxid: node.stat.czxid,
        ownSession: node.stat.ephemeralOwner === client.sessionId,
        items: [],
      } satisfies InspectedMember;
    }),
  );
  return read.filter((member) => member !== undefined).sort((a, b) => a.czxid - b.czxid);
}

/** The first look at the partition at `path`; undefined when it is not one (yet). */
export async function firstLook(client: ZkClient, path: string): Promise<FirstLook | undefined> {
  const membersPath = joinPath(path, 'members');
  const itemsPath = joinPath(path, 'items');
  const [memberNames, itemNames] = await Promise.all([
    client.promises.children(membersPath).catch(gone),
    client.promises.children(itemsPath).catch(gone),
  ]);
  if (memberNames === undefined || itemNames === undefined) return undefined;
  const names = [...itemNames].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const first = names.slice(0, FIRST_ITEMS);
  // The members and the first items' locks at once (one round trip, not two): the holds are
  // named by the members once both are in.
  const [members, locks] = await Promise.all([
    readMembers(client, membersPath, memberNames),
    Promise.all(first.map((item) => inspect(client, joinPath(itemsPath, item)).catch(gone))),
  ]);
  const bySession = new Map(members.map((member) => [member.sessionId, member.id]));
  const owned = new Map<string, InspectedItem>();
  first.forEach((item, index) => {
    const lock = locks[index];
    const { owner, waiting } = holdsOf(bySession, lock?.holders[0], lock?.waiters ?? []);
    owned.set(item, { item, path: joinPath(itemsPath, item), owner, waiting });
  });
  const items = names.map(
    (item) =>
      owned.get(item) ?? { item, path: joinPath(itemsPath, item), owner: undefined, waiting: [] },
  );
  const fleet: InspectedFleet = {
    path,
    kind: 'partition',
    membersPath,
    members,
    items,
    poisoned: [],
    poisonedUnlisted: 0,
    coordinator: undefined,
    balanced: undefined,
    readAt: Date.now(),
  };
  return { fleet, unread: new Set(names.slice(FIRST_ITEMS)) };
}
