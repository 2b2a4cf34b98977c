import { describe, expect, it } from 'vitest';
import { errorFromRc, isZkError, ZkError } from './errors';

describe('ZkError', () => {
  it('maps C client codes and says which are retryable', () => {
    expect(errorFromRc(-101, 'get', '/a').code).toBe('NoNode');
    expect(errorFromRc(-4, 'get', '/a').isRetryable).toBe(true);
    expect(errorFromRc(-7, 'get').isRetryable).toBe(true);
    expect(errorFromRc(-112, 'get').isRetryable).toBe(false);
    expect(errorFromRc(-110, 'create', '/a').code).toBe('NodeExists');
    expect(errorFromRc(-999, 'x').code).toBe('SystemError');
    expect(errorFromRc(-101, 'get', '/a').message).toBe('get /a: NoNode (rc -101)');
  });

  it('keeps path, rc and cause', () => {
    const cause = new Error('inner');
    const error = new ZkError('BadArguments', 'bad', { path: '/p', rc: -8, cause });
    expect(error.path).toBe('/p');
    expect(error.rc).toBe(-8);
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('ZkError');
    expect(isZkError(error, 'BadArguments')).toBe(true);
    expect(isZkError(error, 'NoNode')).toBe(false);
    expect(isZkError(new Error('x'))).toBe(false);
  });
});
