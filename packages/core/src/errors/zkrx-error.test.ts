import {
  InvalidOptionError,
  ReconfigurationError,
  ZooKeeperNotFoundError,
  ZooKeeperStartError,
} from '@zkrx/testing';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../wire/jute';
import { ZkAbortError, ZkError } from './errors';
import { ZkrxError } from './zkrx-error';

class QuotaError extends ZkrxError<'Quota'> {
  protected static override readonly marker = '@zkrx/test.QuotaError';
  declare static readonly isInstance: (value: unknown) => value is QuotaError;
  override readonly name = 'QuotaError';
  constructor(readonly tenant: string) {
    super('Quota', `tenant ${tenant} is over its quota`);
  }
}

/** A subclass that declares no marker of its own. */
class UnmarkedError extends QuotaError {}

/** The error another copy of the package would make: an object with the same marks. */
function fromAnotherCopy(...markers: string[]): object {
  const error = new Error('from another copy');
  for (const marker of markers) {
    Object.defineProperty(error, Symbol.for(`zkrx.error:${marker}`), { value: true });
  }
  return error;
}

describe('ZkrxError', () => {
  it('carries its code, message and cause', () => {
    const cause = new Error('inner');
    const error = new ZkrxError('Something', 'it broke', { cause });
    expect(error.code).toBe('Something');
    expect(error.message).toBe('it broke');
    expect(error.cause).toBe(cause);
    expect(error.name).toBe('ZkrxError');
    expect('cause' in new ZkrxError('Something', 'no cause')).toBe(false);
    expect(Object.keys(error)).not.toContainEqual(expect.stringContaining('zkrx'));
  });

  it('marks an error for its class and every class above it', () => {
    const aborted = new ZkAbortError('get', '/a', false, 'stop');
    expect(ZkAbortError.isInstance(aborted)).toBe(true);
    expect(ZkError.isInstance(aborted)).toBe(true);
    expect(ZkrxError.isInstance(aborted)).toBe(true);
    expect(aborted instanceof ZkError).toBe(true);
    expect(aborted instanceof ZkrxError).toBe(true);
    const plain = new ZkError('NoNode', 'gone');
    expect(ZkAbortError.isInstance(plain)).toBe(false);
    expect(plain instanceof ZkAbortError).toBe(false);
    expect(QuotaError.isInstance(plain)).toBe(false);
    expect(ZkError.isInstance(new QuotaError('acme'))).toBe(false);
    expect(ZkrxError.isInstance(new Error('plain'))).toBe(false);
    expect(ZkrxError.isInstance(undefined)).toBe(false);
  });

  it('recognises an error by its marks, whichever copy made it', () => {
    const other = fromAnotherCopy('@zkrx/core.ZkrxError', '@zkrx/test.QuotaError');
    expect(QuotaError.isInstance(other)).toBe(true);
    expect(other instanceof QuotaError).toBe(true);
    expect(ZkrxError.isInstance(other)).toBe(true);
    expect(ZkError.isInstance(other)).toBe(false);
    // Errors made before the base existed carry their own class's mark only.
    expect(ZkError.isInstance(fromAnotherCopy('@zkrx/core.ZkError'))).toBe(true);
  });

  it('answers isInstance unbound, as a callback', () => {
    const errors: unknown[] = [new QuotaError('a'), new ZkError('NoNode', 'x'), 'text'];
    const quotas: QuotaError[] = errors.filter(QuotaError.isInstance);
    expect(quotas).toHaveLength(1);
    expect(errors.filter(ZkrxError.isInstance)).toHaveLength(2);
    const { isInstance } = ZkError;
    expect(isInstance(errors[1]) && !isInstance(errors[0])).toBe(true);
    expect(QuotaError.isInstance).toBe(QuotaError.isInstance); // made once per class
  });

  it('falls back to the prototype chain for a subclass without a marker', () => {
    expect(new UnmarkedError('a') instanceof UnmarkedError).toBe(true);
    expect(new QuotaError('a') instanceof UnmarkedError).toBe(false);
    expect(UnmarkedError.isInstance(new QuotaError('a'))).toBe(false);
    expect(QuotaError.isInstance(new UnmarkedError('a'))).toBe(true);
  });

  it('gives the internal ProtocolError the code of what it causes', () => {
    const error = new ProtocolError('bad frame');
    expect(error.code).toBe('MarshallingError');
    expect(ProtocolError.isInstance(error) && ZkrxError.isInstance(error)).toBe(true);
  });
});

// @zkrx/testing cannot import core (core's tests depend on it): its errors follow the same
// convention by hand. This is where the two are held together.
describe("@zkrx/testing's errors", () => {
  const errors = [
    [new ZooKeeperNotFoundError('no java', []), 'ZooKeeperNotFound', ZooKeeperNotFoundError],
    [
      new ZooKeeperStartError('exited', { logTail: '', exitCode: 1 }),
      'ZooKeeperStartFailed',
      ZooKeeperStartError,
    ],
    [
      new InvalidOptionError('startZooKeeper', 'port', 'a number', '"x"'),
      'InvalidOption',
      InvalidOptionError,
    ],
    [new ReconfigurationError('reconfig', -123), 'ReconfigurationFailed', ReconfigurationError],
  ] as const;

  it.each(errors)('%s is a ZkrxError with its code', (error, code, type) => {
    expect(ZkrxError.isInstance(error)).toBe(true);
    expect(error instanceof ZkrxError).toBe(true);
    expect(error.code).toBe(code);
    expect(type.isInstance(error)).toBe(true);
    expect(error instanceof type).toBe(true);
    expect(type.isInstance(new ZkrxError(code, 'not that class'))).toBe(false);
    expect(type.isInstance(fromAnotherCopy(`@zkrx/testing.${error.name}`))).toBe(true);
  });
});
