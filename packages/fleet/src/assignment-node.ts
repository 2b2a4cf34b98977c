/**
 * What the coordinator writes in a member's assignment node (`<path>/assignments/<id>`) and the
 * member reads: the digest of the member's item set, the items given to it and the poison
 * items it reported that the coordinator counts, both as positions in that sorted set. Pure:
 * encode and decode. A position list is a bitmap or the gaps between positions (varints),
 * whichever is smaller: at most `n/8` bytes for a set of `n`, a few bytes an item for a share.
 */

/** An assignment node, decoded. */
export interface AssignmentNode {
  /** The digest of the item set the positions are in (the member's own, when it was written). */
  readonly set: string;
  /** How many items that set has. */
  readonly count: number;
  /** The positions of the items given to the member, ascending. */
  readonly items: readonly number[];
  /** The positions of the items it reported as poison that the coordinator counts, ascending. */
  readonly poison: readonly number[];
}

const VERSION = 2;

/** Writes ascending positions in `[0, count)` as the smaller of a bitmap and varint gaps. */
export function encodePositions(positions: readonly number[], count: number): string {
  if (positions.length === 0) return '';
  const gaps: number[] = [];
  let previous = -1;
  for (const position of positions) {
    let gap = position - previous - 1;
    previous = position;
    while (gap >= 0x80) {
      gaps.push((gap & 0x7f) | 0x80);
      gap >>>= 7;
    }
    gaps.push(gap);
  }
  const bitmapBytes = Math.ceil(count / 8);
  if (gaps.length <= bitmapBytes) return `g${Buffer.from(gaps).toString('base64url')}`;
  const bitmap = Buffer.alloc(bitmapBytes);
  for (const position of positions) {
    bitmap[position >> 3] = (bitmap[position >> 3] as number) | (1 << (position & 7));
  }
  return `b${bitmap.toString('base64url')}`;
}

/** Reads what {@link encodePositions} wrote; undefined when it is not that (or out of range). */
export function decodePositions(text: string, count: number): number[] | undefined {
  if (text === '') return [];
  const bytes = Buffer.from(text.slice(1), 'base64url');
  const positions: number[] = [];
  if (text[0] === 'g') {
    let previous = -1;
    let gap = 0;
    let shift = 0;
    for (const byte of bytes) {
      gap += (byte & 0x7f) * 2 ** shift;
      if (byte & 0x80) {
        shift += 7;
        continue;
      }
      previous += gap + 1;
      if (previous >= count) return undefined;
      positions.push(previous);
      gap = 0;
      shift = 0;
    }
    return shift === 0 ? positions : undefined;
  }
  if (text[0] !== 'b' || bytes.length !== Math.ceil(count / 8)) return undefined;
  for (let at = 0; at < bytes.length; at++) {
    const byte = bytes[at] as number;
    if (byte === 0) continue;
    for (let bit = 0; bit < 8; bit++) {
      if (byte & (1 << bit)) {
        const position = at * 8 + bit;
        if (position >= count) return undefined;
        positions.push(position);
      }
    }
  }
  return positions;
}

/** The data of an assignment node. */
export function encodeAssignmentNode(node: AssignmentNode): Buffer {
  return Buffer.from(
    JSON.stringify({
      v: VERSION,
      set: node.set,
      count: node.count,
      items: encodePositions(node.items, node.count),
      poison: encodePositions(node.poison, node.count),
    }),
    'utf8',
  );
}

/** An assignment node's data decoded; undefined when it holds none (empty: nothing written yet). */
export function decodeAssignmentNode(data: Buffer): AssignmentNode | undefined {
  if (data.length === 0 || data[0] !== 0x7b) return undefined;
  let value: { v?: unknown; set?: unknown; count?: unknown; items?: unknown; poison?: unknown };
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  if (
    value.v !== VERSION ||
    typeof value.set !== 'string' ||
    typeof value.count !== 'number' ||
    typeof value.items !== 'string' ||
    typeof value.poison !== 'string'
  ) {
    return undefined;
  }
  const items = decodePositions(value.items, value.count);
  const poison = decodePositions(value.poison, value.count);
  if (!items || !poison) return undefined;
  return { set: value.set, count: value.count, items, poison };
}
