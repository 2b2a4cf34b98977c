import { describe, expect, it } from 'vitest';
import { ZkError } from '../errors/errors';
import { resolveClientOptions, validateConnectString } from './client-options';

function rejection(run: () => unknown): ZkError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ZkError);
    return error as ZkError;
  }
  throw new Error('expected a ZkError');
}

describe('resolveClientOptions', () => {
  it('fills in defaults', () => {
    const options = resolveClientOptions({ connect: '127.0.0.1:2181' });
    expect(options.sessionTimeoutMs).toBe(10_000);
    expect(options.connectTimeoutMs).toBe(15_000);
    expect(options.logLevel).toBe('warn');
    expect(options.auth).toEqual([]);
    expect(options.batchReads).toBe(true);
    expect(options.followEnsemble).toEqual({
      enabled: true,
      maxDelayMs: 1_000,
      address: undefined,
    });
    expect(options.retry.nextDelayMs(1, 0, new ZkError('ConnectionLoss', 'x'))).toBeGreaterThan(0);
  });

  it.each([
    [{ connect: '' }, 'connect must be a non-empty'],
    [{ connect: 'localhost' }, 'invalid server "localhost"'],
    [{ connect: 'a:1,b:99999' }, 'invalid server "b:99999"'],
    [{ connect: 'a:1/ch//root' }, 'invalid chroot'],
    [{ connect: 'a:1', sessionTimeoutMs: -1 }, 'sessionTimeoutMs must be'],
    [{ connect: 'a:1', sessionTimeoutMs: Number.NaN }, 'sessionTimeoutMs must be'],
    [{ connect: 'a:1', connectTimeoutMs: Number.POSITIVE_INFINITY }, 'connectTimeoutMs must be'],
    [{ connect: 'a:1', logLevel: 'loud' }, 'logLevel must be one of'],
    [{ connect: 'a:1', retry: { maxRetries: -2 } }, 'retry.maxRetries'],
    [{ connect: 'a:1', retry: 3 }, 'retry must be'],
    [{ connect: 'a:1', auth: { scheme: '', credentials: 'x' } }, 'auth.scheme'],
    [{ connect: 'a:1', defaultAcl: [] }, 'defaultAcl must be'],
    [{ connect: 'a:1', batchReads: 'yes' }, 'batchReads must be a boolean'],
    [{ connect: 'a:1', followEnsemble: 'yes' }, 'followEnsemble must be'],
    [{ connect: 'a:1', followEnsemble: { maxDelayMs: -1 } }, 'followEnsemble.maxDelayMs'],
    [{ connect: 'a:1', followEnsemble: { address: 'x' } }, 'followEnsemble.address'],
  ])('rejects %j', (options, reason) => {
    const error = rejection(() => resolveClientOptions(options as never));
    expect(error.code).toBe('BadArguments');
    expect(error.message).toContain(reason);
  });

  it('takes followEnsemble as a switch or with its delay', () => {
    const follow = (followEnsemble: unknown) =>
      resolveClientOptions({ connect: 'a:1', followEnsemble: followEnsemble as never })
        .followEnsemble;
    expect(follow(false)).toMatchObject({ enabled: false, maxDelayMs: 1_000 });
    expect(follow({ maxDelayMs: 0 })).toMatchObject({ enabled: true, maxDelayMs: 0 });
  });

  it('accepts ensembles and chroots', () => {
    expect(validateConnectString('a:1,b:2,c:3/app')).toBe('a:1,b:2,c:3/app');
  });

  it('turns retry: false into a policy that never retries', () => {
    const options = resolveClientOptions({ connect: 'a:1', retry: false });
    expect(options.retry.nextDelayMs(1, 0, new ZkError('ConnectionLoss', 'x'))).toBeUndefined();
  });
});
