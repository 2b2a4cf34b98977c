import { describe, expect, it } from 'vitest';
import { ZkError } from '../errors/errors';
import { joinPath, MAX_DATA_BYTES, nameOf, parentOf, toDataBuffer, validatePath } from './paths';

function codeOf(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ZkError);
    return { code: (error as ZkError).code, message: (error as ZkError).message };
  }
  throw new Error('expected a ZkError');
}

describe('validatePath', () => {
  it.each(['/', '/a', '/a/b', '/locks/orders-42', '/x/_c_1234-lock-0000000001', '/ä/ü'])(
    'accepts %s',
    (path) => {
      expect(validatePath(path)).toBe(path);
    },
  );

  it.each([
    ['', 'must not be empty'],
    ['a/b', 'must start with "/"'],
    ['/a/', 'must not end with "/"'],
    ['/a//b', 'empty segment at index 3'],
    ['/a/./b', 'relative segment "." at index 3'],
    ['/a/..', 'relative segment ".." at index 3'],
    ['/a\u0000b', 'forbidden character NUL at index 2'],
    ['/a\nb', 'forbidden character U+000A at index 2'],
    ['/a\u007fb', 'forbidden character U+007F at index 2'],
    ['/a\ud800b', 'forbidden character U+D800 at index 2'],
    ['/a\ufff5', 'forbidden character U+FFF5 at index 2'],
  ])('rejects %j: %s', (path, reason) => {
    const { code, message } = codeOf(() => validatePath(path));
    expect(code).toBe('InvalidPath');
    expect(message).toContain(reason);
  });

  it('rejects a non-string', () => {
    expect(codeOf(() => validatePath(42)).code).toBe('InvalidPath');
    expect(codeOf(() => validatePath(undefined)).message).toContain('must be a string');
  });

  it('lets a sequential create end with "/" only when asked', () => {
    expect(validatePath('/queue/', { sequential: true })).toBe('/queue/');
    expect(codeOf(() => validatePath('/queue/')).code).toBe('InvalidPath');
    expect(codeOf(() => validatePath('/queue//', { sequential: true })).code).toBe('InvalidPath');
  });
});

describe('toDataBuffer', () => {
  it('encodes text as UTF-8 and passes bytes through', () => {
    expect(toDataBuffer('hé').equals(Buffer.from([0x68, 0xc3, 0xa9]))).toBe(true);
    expect(toDataBuffer(new Uint8Array([1, 2])).equals(Buffer.from([1, 2]))).toBe(true);
    expect(toDataBuffer(null).length).toBe(0);
    expect(toDataBuffer(undefined).length).toBe(0);
  });

  it('accepts exactly the limit and rejects one byte more', () => {
    expect(toDataBuffer(Buffer.alloc(MAX_DATA_BYTES)).length).toBe(MAX_DATA_BYTES);
    const { code, message } = codeOf(() => toDataBuffer(Buffer.alloc(MAX_DATA_BYTES + 1), '/big'));
    expect(code).toBe('BadArguments');
    expect(message).toContain('/big');
  });

  it('rejects other types', () => {
    expect(codeOf(() => toDataBuffer(42 as never)).code).toBe('BadArguments');
  });
});

describe('path arithmetic', () => {
  it('finds parents, names and joins', () => {
    expect(parentOf('/a/b/c')).toBe('/a/b');
    expect(parentOf('/a')).toBe('/');
    expect(nameOf('/a/b/c')).toBe('c');
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('/a', 'b')).toBe('/a/b');
  });
});
