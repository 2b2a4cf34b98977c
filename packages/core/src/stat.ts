/**
 * A znode's metadata (ZooKeeper's Stat) in JavaScript types.
 */
import type { NativeStat } from './binding';

/** A znode's metadata. Zxids are numbers: exact while the epoch stays below 2^21. */
export interface Stat {
  /** Zxid of the transaction that created the node: strictly increasing across creations. */
  readonly czxid: number;
  /** Zxid of the last change of the node's data. */
  readonly mzxid: number;
  /** Zxid of the last change of the node's children. */
  readonly pzxid: number;
  /** Creation time, ms since the epoch. */
  readonly ctime: number;
  /** Last modification time, ms since the epoch. */
  readonly mtime: number;
  /** Number of changes to the data. */
  readonly version: number;
  /** Number of changes to the children (also the next sequence number). */
  readonly cversion: number;
  /** Number of changes to the ACL. */
  readonly aversion: number;
  /** Owning session id in hex for ephemeral nodes, `'0'` otherwise. */
  readonly ephemeralOwner: string;
  readonly dataLength: number;
  readonly numChildren: number;
}

function toMillis(value: Date | number): number {
  return typeof value === 'number' ? value : value.getTime();
}

/** Copies the binding's Stat into a plain object. */
export function toStat(stat: NativeStat): Stat {
  return {
    czxid: stat.czxid,
    mzxid: stat.mzxid,
    pzxid: stat.pzxid,
    ctime: toMillis(stat.ctime),
    mtime: toMillis(stat.mtime),
    version: stat.version,
    cversion: stat.cversion,
    aversion: stat.aversion,
    ephemeralOwner: stat.ephemeralOwner,
    dataLength: stat.dataLength,
    numChildren: stat.numChildren,
  };
}
