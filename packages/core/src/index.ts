/**
 * @zkrx/core — Apache ZooKeeper as RxJS observables: operations, watch streams and session state.
 */

export type { CallOptions, ChildrenWithStat, VersionOptions, ZkPromises } from './client/client';
export { createClient, ZkClient } from './client/client';
export type { ZkAuth, ZkClientOptions, ZkSasl } from './client/client-options';
export { resolveClientOptions, validateConnectString } from './client/client-options';
export type { ExponentialBackoffOptions, RetryPolicy } from './client/retry';
export { exponentialBackoff, noRetry } from './client/retry';
export type { ConfiguredServer, EnsembleConfig, ServerAddress } from './ensemble/ensemble-config';
export { clientAddressOf, formatAddress, parseEnsembleConfig } from './ensemble/ensemble-config';
export type { EnsembleView } from './ensemble/ensemble-follower';
export type { ZkErrorOptions } from './errors/errors';
export { isZkError, ZkAbortError, ZkError, ZkErrorCode } from './errors/errors';
export type { ZkrxErrorOptions } from './errors/zkrx-error';
export { ZkrxError } from './errors/zkrx-error';
export type { CreateMode, CreateOptions, MkdirpOptions } from './operations/create-options';
export type { TransactionOp, TransactionResult } from './operations/transaction';
export { op } from './operations/transaction';
export { protocolTransport } from './protocol/transport';
export type { SessionEvent, SessionState } from './session/session-state';
export { isConnectedState, isReadWriteState, isTerminalState } from './session/session-state';
export type { Logger, LogLevel } from './transport/logger';
export { onAbort } from './transport/on-abort';
// What a transport implements is on the `@zkrx/core/transport` entry.
export type {
  ClientInfo,
  Created,
  NodeData,
  SessionCredentials,
  Transport,
  WatchEventType,
} from './transport/transport';
export type { TreeChange } from './watches/tree-snapshot';
export type { TreeEvent } from './watches/watch-tree';
export type { Acl } from './znode/acl';
export { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, Permission, READ_ACL_UNSAFE } from './znode/acl';
export type { ZkData } from './znode/paths';
export {
  joinPath,
  MAX_DATA_BYTES,
  nameOf,
  parentOf,
  toDataBuffer,
  validatePath,
} from './znode/paths';
export type { Stat } from './znode/stat';
