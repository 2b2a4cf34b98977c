/**
 * Unit tests of the jute codec: exact bytes of ConnectRequest and RequestHeader, decoding
 * of ConnectResponse and ReplyHeader, packet splitting, session id formats.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeConnectResponse,
  decodeReplyHeader,
  encodeConnectRequest,
  encodeRequestHeader,
  formatSessionId,
  OpCode,
  PacketSplitter,
  parsePassword,
  parseSessionId,
} from './jute';

describe('encodeConnectRequest', () => {
  it('writes the fields of zookeeper.jute in order, big-endian, behind an int length', () => {
    const packet = encodeConnectRequest({
      protocolVersion: 0,
      lastZxidSeen: 0x0102n,
      timeOut: 4000,
      sessionId: 0x100000205df0000n,
      passwd: Buffer.from('00112233445566778899aabbccddeeff', 'hex'),
      readOnly: false,
    });
    expect(packet.toString('hex')).toBe(
      [
        '0000002d', // length: 45
        '00000000', // protocolVersion
        '0000000000000102', // lastZxidSeen
        '00000fa0', // timeOut 4000
        '0100000205df0000', // sessionId
        '00000010', // passwd length 16
        '00112233445566778899aabbccddeeff',
        '00', // readOnly
      ].join(''),
    );
  });

  it('encodes an empty password as length 0', () => {
    const packet = encodeConnectRequest({
      protocolVersion: 0,
      lastZxidSeen: 0n,
      timeOut: 1,
      sessionId: 0n,
      passwd: new Uint8Array(0),
      readOnly: true,
    });
    expect(packet.readInt32BE(0)).toBe(29);
    expect(packet.subarray(-5).toString('hex')).toBe('0000000001');
  });
});

describe('decodeConnectResponse', () => {
  const body = Buffer.from(
    ['00000000', '00000fa0', '0100000205df0000', '00000010', 'ff'.repeat(16), '01'].join(''),
    'hex',
  );

  it('reads protocolVersion, timeOut, sessionId, passwd and readOnly', () => {
    const response = decodeConnectResponse(body);
    expect(response).toEqual({
      protocolVersion: 0,
      timeOut: 4000,
      sessionId: 0x100000205df0000n,
      passwd: Buffer.alloc(16, 0xff),
      readOnly: true,
    });
  });

  it('accepts a response without the trailing readOnly byte (pre-3.4 servers)', () => {
    expect(decodeConnectResponse(body.subarray(0, -1)).readOnly).toBe(false);
  });

  it('reports a truncated record', () => {
    expect(() => decodeConnectResponse(body.subarray(0, 10))).toThrow(/Truncated ConnectResponse/);
  });
});

describe('request and reply headers', () => {
  it('encodes closeSession as xid then type -11', () => {
    expect(encodeRequestHeader(1, OpCode.closeSession).toString('hex')).toBe(
      '0000000800000001fffffff5',
    );
  });

  it('decodes a ReplyHeader: xid, zxid, err', () => {
    const body = Buffer.from(['00000001', '0000000500000007', 'ffffff90'].join(''), 'hex');
    expect(decodeReplyHeader(body)).toEqual({ xid: 1, zxid: 0x500000007n, err: -112 });
  });
});

describe('PacketSplitter', () => {
  const packet = (hex: string) => {
    const body = Buffer.from(hex, 'hex');
    const length = Buffer.alloc(4);
    length.writeInt32BE(body.length);
    return Buffer.concat([length, body]);
  };

  it('returns whole packets, however the bytes are chunked', () => {
    const stream = Buffer.concat([packet('aabb'), packet(''), packet('ccddeeff')]);
    for (let split = 0; split <= stream.length; split++) {
      const splitter = new PacketSplitter();
      const bodies = [
        ...splitter.push(stream.subarray(0, split)),
        ...splitter.push(stream.subarray(split)),
      ].map((body) => body.toString('hex'));
      expect(bodies).toEqual(['aabb', '', 'ccddeeff']);
    }
  });

  it('rejects a negative or oversized length', () => {
    expect(() => new PacketSplitter().push(Buffer.from('ffffffff', 'hex'))).toThrow(/Invalid/);
    expect(() => new PacketSplitter(10).push(Buffer.from('0000000b', 'hex'))).toThrow(/Invalid/);
  });
});

describe('session ids and passwords', () => {
  it('parses and formats ids as the C client prints them', () => {
    expect(parseSessionId('100000205df0000')).toBe(0x100000205df0000n);
    expect(parseSessionId('0x100000205DF0000')).toBe(0x100000205df0000n);
    expect(formatSessionId(0x100000205df0000n)).toBe('100000205df0000');
  });

  it('round-trips ids with the sign bit set (server ids above 127)', () => {
    const id = parseSessionId('ff00000205df0000');
    expect(id).toBeLessThan(0n);
    expect(formatSessionId(id)).toBe('ff00000205df0000');
  });

  it('rejects ids that are not hex', () => {
    expect(() => parseSessionId('xyz')).toThrow(/Invalid session id/);
    expect(() => parseSessionId('1'.repeat(17))).toThrow(/Invalid session id/);
  });

  it('parses a hex password to bytes', () => {
    expect(parsePassword('00ff'.repeat(8))).toEqual(Buffer.from('00ff'.repeat(8), 'hex'));
    expect(() => parsePassword('abc')).toThrow(/not hex/);
  });
});
