/**
 * How one operation of the table becomes a request of a session's pipeline: the chroot applied,
 * the frame encoded, the reply decoded and timed, the watch it sets recorded — and withdrawn if
 * its caller aborts before it was written.
 */

import { Rc, ZkError, ZkErrorCode } from '../errors/errors';
import { type Operation, operations, type PathMap } from '../operations/operations';
import { timedReply } from '../telemetry/telemetry';
import { onAbort } from '../transport/on-abort';
import type {
  OperationName,
  OperationRequest,
  OperationResult,
  Reply,
} from '../transport/transport';
import { WatcherType } from '../wire/codes';
import { PendingRequest, type RequestPipeline } from './pipeline';

/** The chroot of a connect string (`''` for none) as a {@link PathMap}. */
export function chrootPaths(chroot: string): PathMap {
  if (chroot === '') return { toServer: (path) => path, fromServer: (path) => path };
  return {
    toServer: (path) => (path === '/' ? chroot : chroot + path),
    fromServer(path) {
      if (path === chroot) return '/';
      if (path.startsWith(chroot) && path.charCodeAt(chroot.length) === 47) {
        return path.slice(chroot.length);
      }
      return undefined;
    },
  };
}

/** The reply of a request withdrawn before it was written: never sent, so never applied. */
export function abortedUnsent(signal: AbortSignal): ZkError {
  return new ZkError(ZkErrorCode.Aborted, 'aborted before it was sent: not applied', {
    cause: signal.reason,
  });
}

/**
 * Encodes operation `name` and submits it to `pipeline`: sent at once when connected, else when
 * the next connection comes. A `signal` that aborts while the request still waits withdraws it
 * (the reply says it was never sent).
 */
export function submitOperation<N extends OperationName>(
  pipeline: RequestPipeline,
  paths: PathMap,
  name: N,
  request: OperationRequest<N>,
  reply: Reply<OperationResult<N>>,
  signal?: AbortSignal,
): void {
  const operation = operations[name] as Operation<N>;
  const timed = timedReply(operation.wireName, reply);
  if (signal?.aborted) {
    queueMicrotask(() => timed(Rc.failedWithCause, undefined, abortedUnsent(signal)));
    return;
  }
  const xid = pipeline.xid();
  const frame = operation.encode(xid, request, paths);
  const watch = operation.watch?.(request, paths);
  const decode = operation.decode;
  let stopListening: (() => void) | undefined;
  const settle: Reply<OperationResult<N>> = (rc, value, cause) => {
    stopListening?.();
    timed(rc, value, cause);
  };
  pipeline.submit(
    xid,
    frame,
    new PendingRequest(
      decode && ((reader) => decode(reader, paths)),
      settle as Reply<unknown>,
      watch?.kind,
      watch?.path,
      watch?.removes,
      operation.batchPath?.(request, paths),
    ),
  );
  if (signal) {
    stopListening = onAbort(signal, () => {
      if (pipeline.withdraw(xid)) settle(Rc.failedWithCause, undefined, abortedUnsent(signal));
    });
  }
}

/**
 * `removeWatches`, with what ZooKeeper 3.8 and older lack: they know no persistent watcher type
 * there (MarshallingError, or NoWatcher) and remove a persistent watch only as part of "any"
 * (every watch of the session on the path) — done so when the session has no other watch there.
 */
export function submitRemoveWatches(
  pipeline: RequestPipeline,
  paths: PathMap,
  request: OperationRequest<'removeWatches'>,
  reply: Reply<void>,
  signal?: AbortSignal,
): void {
  const { type } = request;
  const persistent = type === WatcherType.persistent || type === WatcherType.persistentRecursive;
  if (!persistent) return submitOperation(pipeline, paths, 'removeWatches', request, reply, signal);
  const serverPath = paths.toServer(request.path);
  submitOperation(
    pipeline,
    paths,
    'removeWatches',
    request,
    (rc, value, cause) => {
      const watches = pipeline.watches;
      const alone =
        !watches.data.has(serverPath) &&
        !watches.exist.has(serverPath) &&
        !watches.child.has(serverPath) &&
        (type === WatcherType.persistent
          ? !watches.persistentRecursive.has(serverPath)
          : !watches.persistent.has(serverPath));
      const refused = rc === Rc.noWatcher || rc === Rc.marshallingError;
      if (!refused || !alone) return reply(rc, value, cause);
      submitOperation(
        pipeline,
        paths,
        'removeWatches',
        { path: request.path, type: WatcherType.any },
        reply,
        signal,
      );
    },
    signal,
  );
}
