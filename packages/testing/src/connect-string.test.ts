/**
 * Unit tests of connect-string parsing: host:port, IPv6 brackets, chroot suffix,
 * and the errors for malformed input.
 */
import { describe, expect, it } from 'vitest';
import { formatHostPort, parseConnectString, parseHostPort } from './connect-string';

describe('parseHostPort', () => {
  it('splits host and port, IPv6 in brackets, 2181 by default', () => {
    expect(parseHostPort('127.0.0.1:2182')).toEqual({ host: '127.0.0.1', port: 2182 });
    expect(parseHostPort('[::1]:2183')).toEqual({ host: '::1', port: 2183 });
    expect(parseHostPort('zk1')).toEqual({ host: 'zk1', port: 2181 });
  });

  it('rejects bad ports and bare IPv6', () => {
    expect(() => parseHostPort('a:0')).toThrow(/Invalid port/);
    expect(() => parseHostPort('a:70000')).toThrow(/Invalid port/);
    expect(() => parseHostPort('a:12x')).toThrow(/Invalid port/);
    expect(() => parseHostPort('::1:2181')).toThrow(/brackets/);
    expect(() => parseHostPort(':2181')).toThrow(/no host/);
  });
});

describe('parseConnectString', () => {
  it('lists servers in order and drops the chroot', () => {
    expect(parseConnectString('a:1, b:2,[::1]:3/app/x')).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
      { host: '::1', port: 3 },
    ]);
  });

  it('rejects a connect string without a server', () => {
    expect(() => parseConnectString('/chroot')).toThrow(/no server/);
  });

  it('formats back, bracketing IPv6', () => {
    expect(formatHostPort({ host: '::1', port: 3 })).toBe('[::1]:3');
    expect(formatHostPort({ host: 'a', port: 1 })).toBe('a:1');
  });
});
