import { describe, expect, it } from 'vitest';
import { cpuTicks, listeningInodes } from './server-cpu';

describe('listeningInodes', () => {
  it('finds the listening sockets of a port in /proc/net/tcp', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:0957 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 48211 1 0000000000000000 100 0 0 10 0',
      '   1: 0100007F:0957 0100007F:B2C4 01 00000000:00000000 00:00000000 00000000     0        0 48300 1 0000000000000000 20 4 30 10 -1',
      '   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1234 1 0000000000000000 100 0 0 10 0',
      '',
    ].join('\n');
    expect(listeningInodes(table, 2391)).toEqual([48211]);
    expect(listeningInodes(table, 22)).toEqual([1234]);
    expect(listeningInodes(table, 2181)).toEqual([]);
  });
});

describe('cpuTicks', () => {
  it('adds utime and stime, whatever the command name holds', () => {
    expect(cpuTicks('42 (java) S 1 42 42 0 -1 4194560 10 0 0 0 150 25 0 0 20 0')).toBe(175);
    expect(cpuTicks('7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0')).toBe(7);
    expect(() => cpuTicks('garbage')).toThrow(/not a \/proc\/PID\/stat line/);
  });
});
