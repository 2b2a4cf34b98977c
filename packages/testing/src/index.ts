/**
 * @zkrx/testing: a real ZooKeeper 3.8 on demand for tests and demos (single server or ensemble),
 * session expiry, a fault-injecting proxy and four-letter words. No runtime dependency.
 */

export {
  type CertificateAndKey,
  createTestCertificates,
  type TestCertificates,
  type TestCertificatesOptions,
} from './certificates';
export type { HostPort } from './connect-string';
export { parseConnectString, parseHostPort } from './connect-string';
export {
  type AddServerOptions,
  type Ensemble,
  type EnsembleServer,
  type EnsembleTlsOptions,
  type RemoveServerOptions,
  type StartEnsembleOptions,
  startEnsemble,
} from './ensemble';
export {
  InvalidOptionError,
  ReconfigurationError,
  ZooKeeperNotFoundError,
  ZooKeeperStartError,
} from './errors';
export {
  type ExpirableClient,
  type ExpireSessionOptions,
  type ExpireSessionTarget,
  expireSession,
  type SessionCredentials,
  type Subscribable,
} from './expire-session';
export { fourLetterWord, mntr, parseMntr } from './four-letter-words';
export { freePorts } from './free-port';
export {
  type LocateZooKeeperOptions,
  locateZooKeeper,
  type ZooKeeperInstallation,
  type ZooKeeperLogging,
} from './locate';
export {
  type GarbageKind,
  garbageBytes,
  startProxy,
  type TcpProxy,
  type TcpProxyOptions,
} from './proxy';
export { type RawSession, type RawSessionOptions, startRawSession } from './raw-session';
export {
  type ConfiguredServer,
  type EnsembleConfiguration,
  parseConfiguration,
} from './reconfiguration';
export {
  type ServerTlsOptions,
  type StartZooKeeperOptions,
  startZooKeeper,
  type ZooKeeperServer,
} from './server';
export type { ZooKeeperLogLevel } from './server-process';
export { TEST_CONNECT_ENV, type TestZooKeeper, testZooKeeper } from './test-zookeeper';
export { uniqueRoot } from './unique-root';
