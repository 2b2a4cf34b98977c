/**
 * Test support shared by the zkrx packages' integration tests.
 */
export {
  childrenOf,
  configurationRead,
  connectedClient,
  connectedClients,
  lockPath,
  proxiedClient,
  readsConfigurationAtOnce,
  sleep,
} from './clients';
export { deferred, type Gate } from './gates';
export { type HoldRecord, IntervalLog } from './intervals';
export { countedClient, type PacketCount } from './packets';
export {
  reapingClients,
  reapingZooKeeper,
  untilEmpty,
  untilGone,
  untilWatching,
  watchersOf,
} from './reaping';
export {
  frameRelay,
  type RelayHooks,
  type RelayLink,
  readOnlyOnReconnect,
  SRVR_3_5,
  zooKeeper35,
} from './relay';
export { type Point, recordTelemetry, type TelemetryRecorder } from './telemetry';
