/**
 * `inspectFleet`: who is in a membership group or a partition, and who owns (and waits for)
 * each of a partition's items, with fencing tokens — what `zkrx members` and `zkrx partitions`
 * print.
 */
import { isZkError, joinPath, type ZkClient, ZkError, ZkErrorCode } from '@zkrx/core';
import { type InspectedParticipant, inspect } from '@zkrx/lock';
import { unlessGone } from '@zkrx/lock/recipe';
import { compareNames } from './item-set';
import { decodeMemberRecord, type MemberProblem } from './member-record';
import type { MemberDetails } from './members';
import {
  checkClient,
  checkFleetPath,
  coordinatorPath,
  itemsPath,
  membersPath,
  poisonPath,
} from './options';
import { decodePoisonReport, type PoisonedItem } from './poison';
import { readStoredSet } from './set-store';

/** A member, as read. */
export interface InspectedMember extends MemberDetails {
  /** Its session is the inspecting client's own. */
  readonly ownSession: boolean;
  /** The partition's items whose lock it holds, sorted (empty for a plain membership). */
  readonly items: readonly string[];
  /**
   * Partition: what the member states it is going through, one a task — its earlier failures
   * to stay in (`join`: it joined again after `count` in a row), or problems it goes on through
   * (`report-poison`, `watch-poison`, `write-assignment`: `count` open). Empty when all is well
   * (and for a plain membership).
   */
  readonly problems: readonly MemberProblem[];
  /**
   * Partition: the item set the member states (the coordinator assigns it from that set): its
   * digest and how many items. Members of two versions (a rolling deploy) state two sets.
   * Undefined for a plain membership, or a member that states none yet.
   */
  readonly itemSet: { readonly digest: string; readonly size: number } | undefined;
}

/** A session's node in an item's lock queue: the owner, or one waiting for the item. */
export interface InspectedHold {
  /** The member with that session (undefined: a session that is not a live member). */
  readonly member: string | undefined;
  /** The node's session (hex). */
  readonly sessionId: string;
  /** The lock node (full path: what `zkrx release` takes). */
  readonly node: string;
  /** The node's data: the member id zkrx writes (Curator writes its IP, kazoo its identifier). */
  readonly data: string;
  /** The node's czxid: the fencing token zkrx gives its holder. */
  readonly fencingToken: number;
  /** When the node was created (server time, ms): a holder holds since then or later. */
  readonly createdAt: number;
}

/** One item of a partition: its lock, who owns it, who waits. */
export interface InspectedItem {
  /** The item (its lock path's name). */
  readonly item: string;
  /** Its lock path, `<path>/items/<item>`. */
  readonly path: string;
  /** The holder of its lock; undefined while nobody holds it. */
  readonly owner: InspectedHold | undefined;
  /** The others queued for it, in the order the lock lets them in (a move in progress). */
  readonly waiting: readonly InspectedHold[];
}

/** An item no member owns because its lock failed for good, as its member reported it. */
export interface InspectedPoison extends PoisonedItem {
  /** The item. */
  readonly item: string;
  /** The report's node (delete it to have the item tried again). */
  readonly node: string;
}

/** A membership group or a partition, as read. */
export interface InspectedFleet {
  /** The path inspected. */
  readonly path: string;
  /** `partition` (it has `members` and `items` under it) or `members` (a group's members). */
  readonly kind: 'partition' | 'members';
  /** Where the members are: `path`, or `<path>/members` for a partition. */
  readonly membersPath: string;
  /** The live members in join order. */
  readonly members: readonly InspectedMember[];
  /**
   * The partition's items that have a lock path now, sorted (items live in the members; one
   * whose idle lock path was reaped is not seen). Empty for a plain membership.
   */
  readonly items: readonly InspectedItem[];
  /** Partition: the items left unowned because their lock failed for good, sorted. */
  readonly poisoned: readonly InspectedPoison[];
  /**
   * Partition: poison reports that could not be listed — more than one reply of the client's
   * `maxFrameBytes` holds (tens of thousands of long names) — how many; 0 when all are listed.
   * Said, not hidden: the fleet's coordinator meets the same limit (its `watch-poison` problem).
   */
  readonly poisonedUnlisted: number;
  /**
   * Partition: the member holding the coordinator's mutex now (its id, as its lock node says),
   * which writes the assignment. Undefined with members means none does: they take nothing new
   * until one does.
   */
  readonly coordinator: string | undefined;
  /**
   * Partition: every member owns ⌊k/m⌋ or ⌈k/m⌉ of the k owned items (and each owned item's
   * owner is a member). Undefined for a plain membership or without members.
   */
  readonly balanced: boolean | undefined;
  /** When this was read: ms since the epoch, by this machine's clock. */
  readonly readAt: number;
}

/** How many item locks an inspection reads at once. */
const CONCURRENCY = 16;

/**
 * What a member's node says, as `inspectFleet` reads it — for a tool that reads member nodes
 * itself (the web console): its `data`, the item set it states and its problems. A partition
 * member's node holds them in a record; a plain group member's node holds its data as text.
 *
 * ## Example
 * ```ts
 * const node = await client.promises.get('/fleet/shards/members/worker-1');
 * console.log(readMemberNode(node.data, 'partition').data);
 * // Output: 10.0.0.7:8080
 * ```
 *
 * @param data The member node's data.
 * @param kind `partition` (a node under `<path>/members`) or `members` (a plain group's).
 * @return Its data, item set (partition) and problems (partition).
 */
export function readMemberNode(
  data: Uint8Array,
  kind: InspectedFleet['kind'],
): Pick<InspectedMember, 'data' | 'itemSet' | 'problems'> {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
  if (kind === 'members') return { data: bytes.toString('utf8'), itemSet: undefined, problems: [] };
  const record = decodeMemberRecord(bytes);
  return { data: record.data, itemSet: record.set, problems: record.problems };
}

/** A member as read: its details, and (a partition's) what it states. */
type ReadMember = MemberDetails & Pick<InspectedMember, 'problems' | 'itemSet'>;

async function readMembers(
  client: ZkClient,
  path: string,
  isPartition: boolean,
): Promise<ReadMember[]> {
  const names = (await unlessGone(client.promises.children(path))) ?? [];
  const found = await Promise.all(
    names.map(async (name): Promise<ReadMember | undefined> => {
      const node = await unlessGone(client.promises.get(joinPath(path, name)));
      if (!node || node.stat.ephemeralOwner === '0') return undefined;
      return {
        id: name,
        sessionId: node.stat.ephemeralOwner,
        joinedAt: node.stat.ctime,
        czxid: node.stat.czxid,
        ...readMemberNode(node.data, isPartition ? 'partition' : 'members'),
      };
    }),
  );
  return found
    .filter((member): member is ReadMember => member !== undefined)
    .sort((a, b) => a.czxid - b.czxid);
}

async function mapLimited<T, R>(
  values: readonly T[],
  work: (value: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(values.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < values.length; index = next++) {
      results[index] = await work(values[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, values.length) }, worker));
  return results;
}

/**
 * Reads the membership group or partition at `path`: its members in join order and, for a
 * partition, each item's owner and waiters with their fencing tokens (read with @zkrx/lock's
 * `inspect`). Resolves null when nothing is at `path`.
 *
 * A partition is recognised by its `members` or `items` child (persistent nodes); otherwise the
 * path's ephemeral children are a group's members. What it costs: a listing and a read per
 * member, a listing of `items`, one `inspect` per item (16 at a time), a listing and a read
 * per poison report, and an `inspect` of the coordinator's mutex. What it gives is
 * what the connected server showed over those reads: a change made meanwhile may show in part.
 *
 * ## Example
 * ```ts
 * const fleet = await inspectFleet(client, '/fleet/shards');
 * for (const item of fleet?.items ?? []) console.log(item.item, item.owner?.member, item.owner?.fencingToken);
 * // Output: shard-0 worker-1 4294967391
 * //         shard-1 worker-2 4294967402
 * ```
 *
 * @param client Any connected client (its own session's members are flagged `ownSession`).
 * @param path A partition's path, or a membership group's.
 * @return The fleet, or null. Rejects with ZkError `InvalidPath` / `BadArguments` for bad input.
 */
export async function inspectFleet(client: ZkClient, path: string): Promise<InspectedFleet | null> {
  checkClient(client, 'inspectFleet');
  if (typeof path !== 'string') {
    throw new ZkError(ZkErrorCode.InvalidPath, `inspectFleet: path must be a string`);
  }
  const valid = checkFleetPath(path, 'inspectFleet');
  const readAt = Date.now();
  const children = await unlessGone(client.promises.children(valid));
  if (children === undefined) return null;
  const structure = await Promise.all(
    ['members', 'items']
      .filter((name) => children.includes(name))
      .map(async (name) => (await client.promises.exists(joinPath(valid, name)))?.ephemeralOwner),
  );
  const isPartition = structure.some((owner) => owner === '0');
  const where = isPartition ? membersPath(valid) : valid;
  const members = await readMembers(client, where, isPartition);
  const ownSession = client.sessionId;
  const items = isPartition ? await readItems(client, valid, members) : [];
  const poison = isPartition ? await readPoison(client, valid) : { found: [], unlisted: 0 };
  const coordinator = isPartition
    ? (await unlessGone(inspect(client, coordinatorPath(valid))))?.holders[0]?.data
    : undefined;
  const owned = new Map<string, string[]>();
  for (const item of items) {
    const member = item.owner?.member;
    if (member === undefined) continue;
    const list = owned.get(member);
    if (list) list.push(item.item);
    else owned.set(member, [item.item]);
  }
  return {
    path: valid,
    kind: isPartition ? 'partition' : 'members',
    membersPath: where,
    members: members.map((member) => ({
      ...member,
      ownSession: member.sessionId === ownSession,
      items: owned.get(member.id) ?? [],
    })),
    items,
    poisoned: poison.found,
    poisonedUnlisted: poison.unlisted,
    coordinator,
    balanced: isPartition ? isBalanced(members, items, owned) : undefined,
    readAt,
  };
}

/** A partition's items, each with its lock's owner and waiters (members named by session). */
async function readItems(
  client: ZkClient,
  path: string,
  members: readonly ReadMember[],
): Promise<InspectedItem[]> {
  const bySession = new Map(members.map((member) => [member.sessionId, member.id]));
  const hold = (participant: InspectedParticipant): InspectedHold => ({
    member: bySession.get(participant.sessionId),
    sessionId: participant.sessionId,
    node: participant.node,
    data: participant.data,
    fencingToken: participant.czxid,
    createdAt: participant.createdAt,
  });
  const names = (await listOrStated(client, path, members)).sort(compareNames);
  return mapLimited(names, async (item): Promise<InspectedItem> => {
    const lockPath = joinPath(itemsPath(path), item);
    const lock = await unlessGone(inspect(client, lockPath));
    const holder = lock?.holders[0];
    return {
      item,
      path: lockPath,
      owner: holder ? hold(holder) : undefined,
      waiting: (lock?.waiters ?? []).map(hold),
    };
  });
}

/**
 * The items with a lock path: a listing of `<path>/items`; when that is more than one reply can
 * hold (100,000 names of 255 bytes), the items the members state (their stored sets), each
 * inspected whether its lock path is there or not.
 */
async function listOrStated(
  client: ZkClient,
  path: string,
  members: readonly ReadMember[],
): Promise<string[]> {
  try {
    return (await unlessGone(client.promises.children(itemsPath(path)))) ?? [];
  } catch (error) {
    if (!isZkError(error, ZkErrorCode.ReplyTooLarge)) throw error;
  }
  const digests = new Set<string>();
  for (const member of members) if (member.itemSet) digests.add(member.itemSet.digest);
  const names = new Set<string>();
  for (const digest of digests) {
    for (const item of (await readStoredSet(client, path, digest))?.items ?? []) names.add(item);
  }
  return [...names];
}

/** The poison reports of a partition, sorted by item; how many could not be listed. */
async function readPoison(
  client: ZkClient,
  path: string,
): Promise<{ found: InspectedPoison[]; unlisted: number }> {
  const where = poisonPath(path);
  let names: string[];
  try {
    names = ((await unlessGone(client.promises.children(where))) ?? []).sort(compareNames);
  } catch (error) {
    if (!isZkError(error, ZkErrorCode.ReplyTooLarge)) throw error;
    return { found: [], unlisted: (await client.promises.exists(where))?.numChildren ?? 0 };
  }
  const found = await mapLimited(names, async (item) => {
    const node = joinPath(where, item);
    const read = await unlessGone(client.promises.get(node));
    const report = read ? decodePoisonReport(read.data) : undefined;
    return report ? { item, node, ...report } : undefined;
  });
  return {
    found: found.filter((entry): entry is InspectedPoison => entry !== undefined),
    unlisted: 0,
  };
}

/**
 * Every member owns ⌊k/m⌋ or ⌈k/m⌉ of the k owned items, and each owned item's owner is a
 * member; undefined without members.
 */
function isBalanced(
  members: readonly ReadMember[],
  items: readonly InspectedItem[],
  owned: ReadonlyMap<string, readonly string[]>,
): boolean | undefined {
  if (members.length === 0) return undefined;
  const held = items.filter((item) => item.owner !== undefined);
  const low = Math.floor(held.length / members.length);
  const high = Math.ceil(held.length / members.length);
  return (
    held.every((item) => item.owner?.member !== undefined) &&
    members.every((member) => {
      const count = owned.get(member.id)?.length ?? 0;
      return count >= low && count <= high;
    })
  );
}
