import { describe, expect, it } from 'vitest';
import { JuteReader, JuteWriter, ProtocolError, ustringBytes } from './jute';

describe('JuteWriter', () => {
  it('writes big-endian ints, longs, booleans, strings and buffers into an exact frame', () => {
    const text = 'héllo';
    const size = 4 + 8 + 8 + 1 + ustringBytes(text) + 4 + 3 + 4;
    const frame = new JuteWriter(size)
      .int(-11)
      .long(2 ** 40 + 5)
      .long(-1)
      .boolean(true)
      .ustring(text)
      .buffer(new Uint8Array([1, 2, 3]))
      .buffer(null)
      .finish();
    expect(frame.toString('hex')).toBe(
      [
        'fffffff5',
        '0000010000000005',
        'ffffffffffffffff',
        '01',
        '00000006',
        Buffer.from(text).toString('hex'),
        '00000003010203',
        'ffffffff',
      ].join(''),
    );
  });

  it('refuses to finish a frame whose counted size was wrong', () => {
    expect(() => new JuteWriter(8).int(1).finish()).toThrow('wrote 4 bytes into a frame of 8');
  });

  it('writes 64-bit values from bigints and halves', () => {
    const frame = new JuteWriter(16).bigLong(-2n).longParts(0x7fffffff, 0xffffffff).finish();
    expect(frame.toString('hex')).toBe('fffffffffffffffe7fffffffffffffff');
  });
});

describe('JuteReader', () => {
  it('reads back what the writer wrote', () => {
    const frame = new JuteWriter(4 + 8 + 1 + ustringBytes('/a/b') + 4 + 2)
      .int(42)
      .long(123_456_789_012)
      .boolean(false)
      .ustring('/a/b')
      .buffer(Buffer.from('xy'))
      .finish();
    const reader = new JuteReader(frame);
    expect(reader.int()).toBe(42);
    expect(reader.long()).toBe(123_456_789_012);
    expect(reader.boolean()).toBe(false);
    expect(reader.ustring()).toBe('/a/b');
    expect(reader.buffer().toString()).toBe('xy');
    expect(reader.remaining).toBe(0);
  });

  it('reads jute nulls as empty', () => {
    const reader = new JuteReader(Buffer.from('ffffffffffffffffffffffff', 'hex'));
    expect(reader.ustring()).toBe('');
    expect(reader.buffer().length).toBe(0);
    expect(reader.count(4)).toBe(0);
  });

  it('formats a long as unsigned hex, as ZooKeeper prints session ids', () => {
    const reader = new JuteReader(
      Buffer.from('0100000205df00000000000000000000ffffffffffffffff', 'hex'),
    );
    expect(reader.longHex()).toBe('100000205df0000');
    expect(reader.longHex()).toBe('0');
    expect(reader.longHex()).toBe('ffffffffffffffff');
  });

  it('copies buffers out of the frame', () => {
    const frame = Buffer.from('0000000261627a', 'hex');
    const data = new JuteReader(frame).buffer();
    frame[4] = 0;
    expect(data.toString()).toBe('ab');
  });

  it.each([
    ['an int past the end', '000000', (reader: JuteReader) => reader.int()],
    ['a long past the end', '00000000000000', (reader: JuteReader) => reader.long()],
    ['a string longer than the frame', '00000005616263', (reader: JuteReader) => reader.ustring()],
    ['a negative length', 'fffffffe', (reader: JuteReader) => reader.buffer()],
    ['a boolean that is not 0 or 1', '02', (reader: JuteReader) => reader.boolean()],
    ['a vector count the frame cannot hold', '7fffffff', (reader: JuteReader) => reader.strings()],
    ['a negative vector count', 'fffffff0', (reader: JuteReader) => reader.strings()],
  ])('throws ProtocolError for %s', (_name, hex, read) => {
    expect(() => read(new JuteReader(Buffer.from(hex, 'hex')))).toThrow(ProtocolError);
  });

  it('never reads past its end, even inside a larger buffer', () => {
    const bytes = Buffer.from('00000001000000020000000300000004', 'hex');
    const reader = new JuteReader(bytes, 4, 8);
    expect(reader.int()).toBe(2);
    expect(() => reader.int()).toThrow(ProtocolError);
  });
});
