/**
 * Which errors the middleware answers 503 for (ZooKeeper out of reach) and which go on to
 * Express's error handling: pure classification, no server.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { LockLostError, LockTimeoutError } from '@zkrx/lock';
import { describe, expect, it } from 'vitest';
import { isZooKeeperUnavailable } from './index';

describe('isZooKeeperUnavailable', () => {
  it.each([
    ZkErrorCode.ConnectionLoss,
    ZkErrorCode.OperationTimeout,
    ZkErrorCode.ConnectTimeout,
    ZkErrorCode.SessionExpired,
    ZkErrorCode.SessionMoved,
    ZkErrorCode.Throttled,
    ZkErrorCode.ClientClosed,
    ZkErrorCode.AuthFailed,
  ])('is true for ZkError %s', (code) => {
    expect(isZooKeeperUnavailable(new ZkError(code, code))).toBe(true);
  });

  it.each([
    ZkErrorCode.InvalidPath,
    ZkErrorCode.BadArguments,
    ZkErrorCode.NoAuth,
    ZkErrorCode.NoNode,
    ZkErrorCode.SystemError,
  ])('is false for ZkError %s (a bug or a refusal, not an outage)', (code) => {
    expect(isZooKeeperUnavailable(new ZkError(code, code))).toBe(false);
  });

  it('is false for lock outcomes and foreign errors', () => {
    expect(isZooKeeperUnavailable(new LockTimeoutError('/l', 10))).toBe(false);
    expect(isZooKeeperUnavailable(new LockLostError('/l', 'suspended'))).toBe(false);
    expect(isZooKeeperUnavailable(new Error('ConnectionLoss'))).toBe(false);
    expect(isZooKeeperUnavailable({ code: 'ConnectionLoss' })).toBe(false);
    expect(isZooKeeperUnavailable(undefined)).toBe(false);
  });
});
