import { describe, expect, it } from 'vitest';
import { leveledLogger, nativeLineLevel } from './logger';

describe('leveledLogger', () => {
  it('writes at the level and above only', () => {
    const lines: string[] = [];
    const target = {
      debug: (m: string) => lines.push(`debug ${m}`),
      info: (m: string) => lines.push(`info ${m}`),
      warn: (m: string) => lines.push(`warn ${m}`),
      error: (m: string) => lines.push(`error ${m}`),
    };
    const log = leveledLogger(target, 'warn');
    log.debug('a');
    log.info('b');
    log.warn('c');
    log.error('d');
    expect(lines).toEqual(['warn c', 'error d']);
  });

  it('is silent without a target and survives a throwing one', () => {
    leveledLogger(undefined, 'debug').error('nothing');
    const log = leveledLogger(
      {
        error: () => {
          throw new Error('boom');
        },
      },
      'error',
    );
    expect(() => log.error('x')).not.toThrow();
  });

  it('reads the level of C client lines', () => {
    expect(
      nativeLineLevel('2026-11-21 05:56:34,620:22014:ZOO_INFO@check_events@2987: initiated'),
    ).toBe('info');
    expect(nativeLineLevel('x:ZOO_ERROR@handle_socket_error_msg@1: refused')).toBe('error');
    expect(nativeLineLevel('yield:zookeeper_process returned no response')).toBe('warn');
  });
});
