/**
 * @zkrx/core/transport — what a transport implements and the client calls: the session handle,
 * the operations it carries (their requests and results), and the return codes of its replies.
 * For transport authors; applications use `@zkrx/core`.
 */

export { Rc } from './errors/errors';
export {
  type Operation,
  type OperationInputs,
  operations,
  type PathMap,
} from './operations/operations';
export { protocolTransport } from './protocol/transport';
export type {
  ClientInfo,
  Created,
  NodeData,
  OperationName,
  OperationRequest,
  OperationResult,
  OperationTypes,
  PersistentWatchMode,
  Reply,
  SessionCredentials,
  SessionHandle,
  SessionListener,
  SessionOptions,
  Transport,
  TransportOp,
  TransportOpResult,
  WatchEventType,
} from './transport/transport';
