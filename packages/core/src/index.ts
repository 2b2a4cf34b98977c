/**
 * @zkrx/core — Apache ZooKeeper as RxJS observables: operations, watch streams and session state.
 */

export type { Acl } from './acl';
export { CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, Permission, READ_ACL_UNSAFE } from './acl';
export type { CallOptions, ChildrenWithStat, VersionOptions, ZkPromises } from './client';
export { createClient, ZkClient } from './client';
export type { ZkAuth, ZkClientOptions, ZkSasl } from './client-options';
export { resolveClientOptions, validateConnectString } from './client-options';
export type { CreateMode, CreateOptions, MkdirpOptions } from './create-options';
export type { ConfiguredServer, EnsembleConfig, ServerAddress } from './ensemble-config';
export { clientAddressOf, formatAddress, parseEnsembleConfig } from './ensemble-config';
export type { EnsembleView } from './ensemble-follower';
export type { ZkErrorOptions } from './errors';
export { isZkError, ZkAbortError, ZkError, ZkErrorCode } from './errors';
export type { Logger, LogLevel } from './logger';
export { onAbort } from './on-abort';
export type { ZkData } from './paths';
export { joinPath, MAX_DATA_BYTES, nameOf, parentOf, toDataBuffer, validatePath } from './paths';
export { protocolTransport } from './protocol/transport';
export type { ExponentialBackoffOptions, RetryPolicy } from './retry';
export { exponentialBackoff, noRetry } from './retry';
export type { SessionEvent, SessionState } from './session-state';
export { isConnectedState, isReadWriteState, isTerminalState } from './session-state';
export type { Stat } from './stat';
export type { TransactionOp, TransactionResult } from './transaction';
export { op } from './transaction';
// What a transport implements is on the `@zkrx/core/transport` entry.
export type {
  ClientInfo,
  Created,
  NodeData,
  SessionCredentials,
  Transport,
  WatchEventType,
} from './transport';
export type { TreeChange } from './tree-snapshot';
export type { TreeEvent } from './watch-tree';
export type { ZkrxErrorOptions } from './zkrx-error';
export { ZkrxError } from './zkrx-error';
