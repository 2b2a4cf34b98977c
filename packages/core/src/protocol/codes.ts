/**
 * ZooKeeper's numbers on the wire: op codes, reserved xids, event and watcher types, watch modes
 * and create flags (from `ZooDefs`, `ClientCnxn`, `Watcher` and `CreateMode`; read, not copied).
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
