/**
 * A znode's metadata (ZooKeeper's Stat) in JavaScript types.
 */
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
