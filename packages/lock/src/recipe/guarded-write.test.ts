import { op, ZkError, ZkErrorCode } from '@zkrx/core';
import { describe, expect, it } from 'vitest';
import { classifyGuardFailure, validateGuardOps } from './guarded-write';

const node = '/locks/a/_c_0f8fad5b-d9cb-469f-a165-70867728950e-lock-0000000000';

function failedOp(code: ZkErrorCode, opIndex: number, type = 'set', path = '/data') {
  return new ZkError(
    code,
    `multi: op ${opIndex} (${type}) ${path}: ${code} (rc -101); no op was applied`,
    { path, rc: -101, opIndex },
  );
}

describe('classifyGuardFailure', () => {
  it('a failed check of hold i is that hold lost, its reason left to the lease', () => {
    expect(classifyGuardFailure(failedOp('NoNode', 1, 'check', node), 2, 'guard')).toEqual({
      kind: 'lost',
      index: 1,
      reason: undefined,
    });
  });

  it('SessionExpired, for the request or for a check, is the session lost: nothing written', () => {
    const whole = new ZkError(ZkErrorCode.SessionExpired, 'multi: SessionExpired');
    expect(classifyGuardFailure(whole, 1, 'guard')).toEqual({
      kind: 'lost',
      index: 0,
      reason: 'session-expired',
    });
    expect(classifyGuardFailure(failedOp('SessionExpired', 0, 'check', node), 1, 'g')).toEqual({
      kind: 'lost',
      index: 0,
      reason: 'session-expired',
    });
  });

  it('a connection lost with the transaction in flight is unknown, not lost', () => {
    for (const code of [ZkErrorCode.ConnectionLoss, ZkErrorCode.OperationTimeout]) {
      expect(classifyGuardFailure(new ZkError(code, 'lost'), 1, 'guard')).toEqual({
        kind: 'in-flight',
      });
    }
  });

  it("the caller's failing op keeps its code, path and rc, indexed in the caller's ops", () => {
    const failure = classifyGuardFailure(failedOp('NoNode', 3, 'delete', '/x'), 2, 'guard of /l');
    expect(failure.kind).toBe('op');
    const error = (failure as { error: ZkError }).error;
    expect(ZkError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'NoNode', path: '/x', rc: -101, opIndex: 1 });
    expect(error.message).toBe(
      'guard of /l: op 1 (delete) /x: NoNode (rc -101); no op was applied',
    );
    expect(error.cause).toBeInstanceOf(ZkError);
  });

  it('passes other failures through as they are', () => {
    const closed = new ZkError(ZkErrorCode.ClientClosed, 'closed');
    expect(classifyGuardFailure(closed, 1, 'g')).toEqual({ kind: 'other', error: closed });
    const noAuth = failedOp('NoAuth', 0, 'check', node);
    expect(classifyGuardFailure(noAuth, 1, 'g')).toEqual({ kind: 'other', error: noAuth });
    const plain = new Error('boom');
    expect(classifyGuardFailure(plain, 1, 'g')).toEqual({ kind: 'other', error: plain });
  });
});

describe('validateGuardOps', () => {
  const bad = (ops: unknown) => {
    try {
      validateGuardOps(ops, [node], 'guard');
    } catch (error) {
      return error as ZkError;
    }
    throw new Error('accepted');
  };

  it("accepts core's op builders' results, a check of any path included", () => {
    const ops = [
      op.create('/a', 'x'),
      op.set('/b', 'y', 2),
      op.delete('/c'),
      op.check('/d'),
      op.check(node),
    ];
    expect(validateGuardOps(ops, [node], 'guard')).toBe(ops);
    expect(validateGuardOps([], [node], 'guard')).toEqual([]);
  });

  it('refuses what is not an array of ops, naming the index', () => {
    expect(bad('not ops')).toMatchObject({ code: 'BadArguments', opIndex: undefined });
    expect(bad(op.set('/a', 'x'))).toMatchObject({ code: 'BadArguments' });
    expect(bad([op.set('/a', 'x'), null])).toMatchObject({ code: 'BadArguments', opIndex: 1 });
    expect(bad([{ type: 'get', path: '/a' }])).toMatchObject({
      code: 'BadArguments',
      opIndex: 0,
    });
    expect(bad(['/a'])).toMatchObject({ code: 'BadArguments', opIndex: 0 });
  });

  it('refuses to rewrite or delete a held lock node', () => {
    expect(bad([op.set(node, 'mine')])).toMatchObject({ code: 'BadArguments', path: node });
    expect(bad([op.create('/a'), op.delete(node)])).toMatchObject({
      code: 'BadArguments',
      opIndex: 1,
    });
  });
});
