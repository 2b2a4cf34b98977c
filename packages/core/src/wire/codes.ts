/**
 * ZooKeeper's numbers on the wire: op codes, reserved xids, event and watcher types, watch modes
 * and create flags (from `ZooDefs`, `ClientCnxn`, `Watcher` and `CreateMode`; read, not copied),
 * and the client's own numbering of the watch a request leaves on the server.
 */

/** `ZooDefs.OpCode`. */
export const OpCode = {
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  checkWatches: 17,
  removeWatches: 18,
  createContainer: 19,
  deleteContainer: 20,
  createTTL: 21,
  multiRead: 22,
  auth: 100,
  setWatches: 101,
  sasl: 102,
  getEphemerals: 103,
  getAllChildrenNumber: 104,
  setWatches2: 105,
  addWatch: 106,
  whoAmI: 107,
  createSession: -10,
  closeSession: -11,
  error: -1,
} as const;

/** Reserved xids (ClientCnxn): replies to these are not matched against requests by order. */
export const Xid = {
  notification: -1,
  ping: -2,
  auth: -4,
  setWatches: -8,
} as const;

/** `Watcher.Event.EventType` of a notification. */
export const EventType = {
  none: -1,
  nodeCreated: 1,
  nodeDeleted: 2,
  nodeDataChanged: 3,
  nodeChildrenChanged: 4,
  dataWatchRemoved: 5,
  childWatchRemoved: 6,
  persistentWatchRemoved: 7,
} as const;

/** `Watcher.WatcherType`, as `removeWatches` names the watches to remove. */
export const WatcherType = {
  children: 1,
  data: 2,
  any: 3,
  persistent: 4,
  persistentRecursive: 5,
} as const;

/** `ZooDefs.AddWatchModes`. */
export const AddWatchMode = {
  persistent: 0,
  persistentRecursive: 1,
} as const;

/** Create flags (`CreateMode`'s wire values). */
export const CreateFlag = {
  persistent: 0,
  ephemeral: 1,
  persistentSequential: 2,
  ephemeralSequential: 3,
  container: 4,
  persistentWithTtl: 5,
  persistentSequentialWithTtl: 6,
} as const;

/** The op code a create with these flags uses: TTL and container nodes have their own. */
export function createOpCode(flags: number): number {
  if (flags === CreateFlag.container) return OpCode.createContainer;
  if (flags === CreateFlag.persistentWithTtl || flags === CreateFlag.persistentSequentialWithTtl)
    return OpCode.createTTL;
  return OpCode.create2;
}

/**
 * The watch a request registers (or removes) on the server when it succeeds, as server-watches.ts
 * records it for re-arming after a reconnect (ZooKeeper's Java client calls these
 * `WatchRegistration`s). Not the kind of a client's watch stream (`WatchKind` in
 * watch-registry.ts: `data`, `exists`, `children`).
 */
export const WatchRegistration = {
  none: 0,
  /** getData with watch: a data watch. */
  data: 1,
  /** exists with watch: a data watch if the node exists, else an exist watch. */
  exists: 2,
  /** getChildren with watch. */
  child: 3,
  /** addWatch persistent. */
  persistent: 4,
  /** addWatch persistent-recursive. */
  persistentRecursive: 5,
  /** removeWatches: the request's `type` says which. */
  remove: 6,
} as const;
