import { describe, expect, it } from 'vitest';
import { ioDelta, ioFields } from './io-trace';

describe('ioFields', () => {
  it('gives requests per write, replies per read and bytes per read of a phase', () => {
    const before = { reads: 5, bytesRead: 1000, writes: 2, bytesWritten: 100 };
    const after = { reads: 15, bytesRead: 6000, writes: 22, bytesWritten: 4100 };
    expect(ioFields(ioDelta(before, after), 100)).toEqual({
      ops_per_read: 10,
      ops_per_write: 5,
      bytes_per_read: 500,
    });
    expect(ioFields({ reads: 0, bytesRead: 0, writes: 0, bytesWritten: 0 }, 10)).toEqual({
      ops_per_read: 0,
      ops_per_write: 0,
      bytes_per_read: 0,
    });
  });
});
