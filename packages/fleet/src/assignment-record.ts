/**
 * The assignment as the coordinator writes it (the data of `<path>/members`) and every member
 * reads it: the members in id order, a digest of the item set, each item's owner-to-be as a
 * few base-36 digits in item order, and the poison items. Pure: encode, decode, and what one
 * member or the coordinator takes from it.
 */
import { createHash } from 'node:crypto';
import type { PoisonedItem } from './poison';

/** An assignment, decoded. */
export interface AssignmentRecord {
  /** The member ids the assignment is for, in id order. */
  readonly members: readonly string[];
  /** The coordinator that wrote it. */
  readonly coordinator: string;
  /** The digest of the sorted item set it was computed for ({@link itemSetDigest}). */
  readonly digest: string;
  /** How many items. */
  readonly count: number;
  /** Digits per owner. */
  readonly width: number;
  /** `width` base-36 digits per item, in item order: an index into `members`, or none. */
  readonly owners: string;
  /** Items left unowned because their lock failed for good. */
  readonly poison: Readonly<Record<string, PoisonedItem>>;
}

const VERSION = 1;

/**
 * A digest of a sorted item set (names cannot hold a newline: ZooKeeper refuses control
 * characters in a path). Two members have the same set exactly when their digests are equal
 * (SHA-256).
 *
 * ## Example
 * ```ts
 * console.log(itemSetDigest(['a', 'b']) === itemSetDigest(['a', 'b']));
 * // Output: true
 * ```
 */
export function itemSetDigest(items: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(String(items.length));
  for (const item of items) hash.update(`\n${item}`);
  return hash.digest('base64url');
}

function widthFor(members: number): number {
  // Index `members` means "nobody": it needs a digit too.
  return members.toString(36).length;
}

/**
 * Encodes an assignment of the sorted `items` (their digest given) over `members`.
 *
 * @param input Members in id order, sorted items and their digest, each item's owner-to-be
 *   (absent: nobody), the poison items, the coordinator's id.
 * @return The znode's data.
 */
export function encodeAssignment(input: {
  readonly members: readonly string[];
  readonly coordinator: string;
  readonly items: readonly string[];
  readonly digest: string;
  readonly targets: ReadonlyMap<string, string>;
  readonly poison: ReadonlyMap<string, PoisonedItem>;
}): Buffer {
  const { members, items, targets } = input;
  const width = widthFor(members.length);
  const index = new Map(members.map((id, at) => [id, at.toString(36).padStart(width, '0')]));
  const nobody = members.length.toString(36).padStart(width, '0');
  const owners = items.map((item) => {
    const owner = targets.get(item);
    return (owner === undefined ? undefined : index.get(owner)) ?? nobody;
  });
  return Buffer.from(
    JSON.stringify({
      v: VERSION,
      members,
      coordinator: input.coordinator,
      digest: input.digest,
      count: items.length,
      width,
      owners: owners.join(''),
      poison: Object.fromEntries(input.poison),
    }),
    'utf8',
  );
}

/** Decodes a znode's data; undefined when it holds no assignment of this version. */
export function decodeAssignment(data: Buffer): AssignmentRecord | undefined {
  if (data.length === 0 || data[0] !== 0x7b) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  const record = value as Partial<AssignmentRecord> & { v?: unknown };
  if (
    record.v !== VERSION ||
    !Array.isArray(record.members) ||
    typeof record.coordinator !== 'string' ||
    typeof record.digest !== 'string' ||
    typeof record.count !== 'number' ||
    typeof record.width !== 'number' ||
    typeof record.owners !== 'string' ||
    record.owners.length !== record.count * record.width ||
    typeof record.poison !== 'object' ||
    record.poison === null
  ) {
    return undefined;
  }
  return record as AssignmentRecord;
}

/**
 * The items `record` gives `member`, in item order, when `items` is the set it was computed for
 * (same digest); undefined otherwise (the member keeps what it has). O(n) in the items, no
 * allocation per item not given.
 */
export function itemsGiven(
  record: AssignmentRecord,
  member: string,
  items: readonly string[],
  digest: string,
): string[] | undefined {
  if (record.digest !== digest || record.count !== items.length) return undefined;
  const at = record.members.indexOf(member);
  if (at < 0) return [];
  const code = at.toString(36).padStart(record.width, '0');
  const given: string[] = [];
  const { owners, width } = record;
  for (let index = 0; index < items.length; index++) {
    if (owners.startsWith(code, index * width)) given.push(items[index] as string);
  }
  return given;
}

/** Every item's owner-to-be in `record` (computed for the sorted `items`), by name. */
export function ownersOf(record: AssignmentRecord, items: readonly string[]): Map<string, string> {
  const owners = new Map<string, string>();
  const { width } = record;
  for (let index = 0; index < items.length && index < record.count; index++) {
    const at = Number.parseInt(record.owners.slice(index * width, (index + 1) * width), 36);
    const member = record.members[at];
    if (member !== undefined) owners.set(items[index] as string, member);
  }
  return owners;
}
