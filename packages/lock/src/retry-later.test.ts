/**
 * The answers the adapters share (pure) and the node names lock paths are built from.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { describe, expect, it } from 'vitest';
import { retryLaterOf } from './adapter';
import {
  isZooKeeperUnavailable,
  LockBusyError,
  LockConflictError,
  LockLostError,
  LockTimeoutError,
  nodeName,
} from './index';
import { validateLockPath } from './recipe';

describe('retryLaterOf', () => {
  it('answers 409 for a busy lock and a timeout, 503 for a lost lock and an outage', () => {
    const reasonAndStatus = (error: unknown) => {
      const answer = retryLaterOf(error);
      return answer && `${answer.status} ${answer.reason}`;
    };
    expect(reasonAndStatus(new LockBusyError('/a'))).toBe('409 lock-busy');
    expect(reasonAndStatus(new LockTimeoutError('/a', 10))).toBe('409 lock-timeout');
    // A timeout while ZooKeeper was out of reach the whole wait is an outage, not contention.
    const unreachable = new ZkError(ZkErrorCode.ConnectTimeout, 'never connected');
    expect(reasonAndStatus(new LockTimeoutError('/a', 10, { cause: unreachable }))).toBe(
      '503 zookeeper-unavailable',
    );
    expect(reasonAndStatus(new LockLostError('/a', 'suspended'))).toBe('503 lock-lost');
    for (const code of [
      ZkErrorCode.ConnectionLoss,
      ZkErrorCode.SessionExpired,
      ZkErrorCode.ClientClosed,
    ]) {
      expect(reasonAndStatus(new ZkError(code, 'x'))).toBe('503 zookeeper-unavailable');
    }
    expect(retryLaterOf(new ZkError(ZkErrorCode.NoNode, 'x'))).toBeUndefined();
    expect(retryLaterOf(new LockConflictError('/a', 'mutex', 'semaphore'))).toBeUndefined();
    expect(retryLaterOf(new Error('other'))).toBeUndefined();
  });
});

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

describe('nodeName', () => {
  it('makes one valid node name of any string, a different one for each', () => {
    const inputs = [
      '42',
      'order-42',
      'a/b',
      '/',
      '',
      '%',
      '.',
      '..',
      '...',
      'a b',
      'zookeeper',
      'ü',
      '\u0000',
      '\uD800', // a lone surrogate: read as U+FFFD
      '_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-lock-0000000001',
      'x__lock__0000000001',
      'x__rlock__-000000005',
      '%5F',
      '%2E',
    ];
    const names = inputs.map((input) => nodeName(input));
    for (const name of names) {
      expect(name).not.toContain('/');
      expect(name.length).toBeGreaterThan(0);
      // A lock path of its own under any base: never InvalidPath, never another recipe's node.
      expect(validateLockPath(`/locks/${name}`)).toBe(`/locks/${name}`);
    }
    expect(new Set(names).size).toBe(inputs.length);
    expect(names.slice(0, 9)).toEqual([
      '42',
      'order-42',
      'a%2Fb',
      '%2F',
      '%',
      '%25',
      '%2E',
      '%2E%2E',
      '...',
    ]);
    expect(nodeName('\uD800')).toBe(nodeName('\uFFFD'));
    expect(() => nodeName(42 as never)).toThrow(expect.objectContaining({ code: 'BadArguments' }));
  });
});
