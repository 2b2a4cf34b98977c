import { describe, expect, it } from 'vitest';
import { CreateFlag, OpCode, Xid } from './codes';
import { JuteReader, JuteWriter, ustringBytes } from './jute';
import {
  decodeConnectResponse,
  encodeAuth,
  encodeConnectRequest,
  encodeCreate,
  encodeHeaderOnly,
  encodeMulti,
  encodePathWatch,
  encodeSetWatches,
  readMultiResults,
  readStat,
  sessionIdHex,
} from './records';

/** A frame's length, xid and op code, and a reader at its body. */
function open(frame: Buffer) {
  const reader = new JuteReader(frame);
  const length = reader.int();
  expect(length).toBe(frame.length - 4);
  return { xid: reader.int(), type: reader.int(), reader };
}

const statBytes = (czxid: number) =>
  new JuteWriter(68)
    .long(czxid)
    .long(czxid + 1)
    .long(1_700_000_000_000)
    .long(1_700_000_000_001)
    .int(2)
    .int(3)
    .int(4)
    .longParts(0x1000002, 0x05df0000)
    .int(5)
    .int(6)
    .long(czxid + 2)
    .finish();

describe('requests', () => {
  it('encodes a ConnectRequest as the Java client does (49 bytes with a 16-byte password)', () => {
    const frame = encodeConnectRequest({
      lastZxidSeen: 0x1_0000_0005,
      timeOut: 4_000,
      sessionId: 0x100000205df0000n,
      password: Buffer.alloc(16, 0xab),
      readOnly: true,
    });
    expect(frame.length).toBe(49);
    const reader = new JuteReader(frame);
    expect(reader.int()).toBe(45);
    expect(reader.int()).toBe(0); // protocol version
    expect(reader.long()).toBe(0x1_0000_0005);
    expect(reader.int()).toBe(4_000);
    expect(reader.longHex()).toBe('100000205df0000');
    expect(reader.buffer()).toEqual(Buffer.alloc(16, 0xab));
    expect(reader.boolean()).toBe(true);
  });

  it('encodes header-only requests', () => {
    expect(encodeHeaderOnly(1, OpCode.closeSession).toString('hex')).toBe(
      '0000000800000001fffffff5',
    );
    expect(encodeHeaderOnly(Xid.ping, OpCode.ping).toString('hex')).toBe(
      '00000008fffffffe0000000b',
    );
  });

  it('encodes reads with their watch flag', () => {
    const { xid, type, reader } = open(encodePathWatch(7, OpCode.getData, '/a/é', true));
    expect([xid, type]).toEqual([7, OpCode.getData]);
    expect(reader.ustring()).toBe('/a/é');
    expect(reader.boolean()).toBe(true);
    expect(reader.remaining).toBe(0);
  });

  it.each([
    [CreateFlag.persistent, OpCode.create2, false],
    [CreateFlag.ephemeralSequential, OpCode.create2, false],
    [CreateFlag.container, OpCode.createContainer, false],
    [CreateFlag.persistentWithTtl, OpCode.createTTL, true],
    [CreateFlag.persistentSequentialWithTtl, OpCode.createTTL, true],
  ])('encodes a create with flags %i as op %i', (flags, opCode, withTtl) => {
    const acl = [{ permissions: 31, scheme: 'world', id: 'anyone' }];
    const { type, reader } = open(encodeCreate(3, '/n', Buffer.from('data'), acl, flags, 5_000));
    expect(type).toBe(opCode);
    expect(reader.ustring()).toBe('/n');
    expect(reader.buffer().toString()).toBe('data');
    expect(reader.int()).toBe(1);
    expect([reader.int(), reader.ustring(), reader.ustring()]).toEqual([31, 'world', 'anyone']);
    expect(reader.int()).toBe(flags);
    if (withTtl) expect(reader.long()).toBe(5_000);
    expect(reader.remaining).toBe(0);
  });

  it('encodes auth packets with the reserved xid', () => {
    const { xid, type, reader } = open(encodeAuth('digest', Buffer.from('u:p')));
    expect([xid, type, reader.int(), reader.ustring(), reader.buffer().toString()]).toEqual([
      Xid.auth,
      OpCode.auth,
      0,
      'digest',
      'u:p',
    ]);
  });

  it('uses setWatches for one-shot watches and setWatches2 once a persistent one is among them', () => {
    const lists = {
      data: ['/d'],
      exist: ['/e'],
      child: ['/c'],
      persistent: [],
      persistentRecursive: [],
    };
    const plain = open(encodeSetWatches(99, lists));
    expect([plain.xid, plain.type]).toEqual([Xid.setWatches, OpCode.setWatches]);
    expect(plain.reader.long()).toBe(99);
    expect([plain.reader.strings(), plain.reader.strings(), plain.reader.strings()]).toEqual([
      ['/d'],
      ['/e'],
      ['/c'],
    ]);
    expect(plain.reader.remaining).toBe(0);
    const withTree = open(encodeSetWatches(5, { ...lists, persistentRecursive: ['/t'] }));
    expect(withTree.type).toBe(OpCode.setWatches2);
    withTree.reader.skip(8);
    for (let list = 0; list < 3; list++) withTree.reader.strings();
    expect([withTree.reader.strings(), withTree.reader.strings()]).toEqual([[], ['/t']]);
  });

  it('encodes a transaction: each op behind a MultiHeader, then the closing header', () => {
    const frame = encodeMulti(9, [
      { type: 'check', path: '/a', version: 3 },
      { type: 'create', path: '/b', data: Buffer.from('x'), acl: [], flags: 1, ttlMs: -1 },
      { type: 'set', path: '/c', data: Buffer.alloc(0), version: -1 },
      { type: 'delete', path: '/d', version: 0 },
    ]);
    const { xid, type, reader } = open(frame);
    expect([xid, type]).toEqual([9, OpCode.multi]);
    const header = () => [reader.int(), reader.boolean(), reader.int()];
    expect(header()).toEqual([OpCode.check, false, -1]);
    expect([reader.ustring(), reader.int()]).toEqual(['/a', 3]);
    expect(header()).toEqual([OpCode.create2, false, -1]);
    expect([reader.ustring(), reader.buffer().toString(), reader.int(), reader.int()]).toEqual([
      '/b',
      'x',
      0,
      1,
    ]);
    expect(header()).toEqual([OpCode.setData, false, -1]);
    expect([reader.ustring(), reader.buffer().length, reader.int()]).toEqual(['/c', 0, -1]);
    expect(header()).toEqual([OpCode.delete, false, -1]);
    expect([reader.ustring(), reader.int()]).toEqual(['/d', 0]);
    expect(header()).toEqual([-1, true, -1]);
    expect(reader.remaining).toBe(0);
  });
});

describe('replies', () => {
  it('decodes a ConnectResponse, with or without the readOnly flag', () => {
    const body = new JuteWriter(4 + 4 + 8 + 4 + 16 + 1)
      .int(0)
      .int(4_000)
      .bigLong(0x100000205df0000n)
      .buffer(Buffer.alloc(16, 1))
      .boolean(false)
      .finish();
    const response = decodeConnectResponse(new JuteReader(body));
    expect(response).toEqual({
      timeOut: 4_000,
      sessionId: 0x100000205df0000n,
      password: Buffer.alloc(16, 1),
      readOnly: false,
    });
    expect(sessionIdHex(response.sessionId)).toBe('100000205df0000');
    expect(decodeConnectResponse(new JuteReader(body.subarray(0, body.length - 1))).readOnly).toBe(
      false,
    );
  });

  it('decodes a Stat field by field', () => {
    expect(readStat(new JuteReader(statBytes(10)))).toEqual({
      czxid: 10,
      mzxid: 11,
      pzxid: 12,
      ctime: 1_700_000_000_000,
      mtime: 1_700_000_000_001,
      version: 2,
      cversion: 3,
      aversion: 4,
      ephemeralOwner: '100000205df0000',
      dataLength: 5,
      numChildren: 6,
    });
  });

  it('decodes a transaction reply: results, and errors with their codes', () => {
    const path = '/b0000000001';
    const body = Buffer.concat([
      new JuteWriter(9 + ustringBytes(path))
        .int(OpCode.create2)
        .boolean(false)
        .int(0)
        .ustring(path)
        .finish(),
      statBytes(1),
      new JuteWriter(9).int(OpCode.delete).boolean(false).int(0).finish(),
      new JuteWriter(9).int(OpCode.setData).boolean(false).int(0).finish(),
      statBytes(2),
      new JuteWriter(13).int(OpCode.error).boolean(false).int(-101).int(-101).finish(),
      new JuteWriter(13).int(OpCode.error).boolean(false).int(-2).int(-2).finish(),
      new JuteWriter(9).int(-1).boolean(true).int(-1).finish(),
    ]);
    const results = readMultiResults(new JuteReader(body));
    expect(results.map((result) => result.type)).toEqual([
      'create',
      'delete',
      'set',
      'error',
      'error',
    ]);
    expect(results[0]).toMatchObject({ type: 'create', path, stat: { czxid: 1 } });
    expect(results[3]).toEqual({ type: 'error', rc: -101 });
    expect(results[4]).toEqual({ type: 'error', rc: -2 });
  });
});
