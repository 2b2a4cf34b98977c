/**
 * Fuzzing what a server (or anything posing as one) sends: random streams, and frames recorded
 * from a real ZooKeeper, mutated. Whatever the bytes, the frame reader and the decoders either
 * succeed or throw ProtocolError (which drops the connection): never another error, never a
 * read out of bounds, never more buffered than one frame. Seeded: every run is the same.
 */
import { describe, expect, it } from 'vitest';
import { recordedFrames } from '../../test/recorded-frames';
import { Rc } from '../errors/errors';
import { WatchRegistration } from '../wire/codes';
import { JuteReader, ProtocolError } from '../wire/jute';
import {
  decodeConnectResponse,
  readAcl,
  readClientInfos,
  readMultiResults,
  readStat,
  readWatcherEvent,
} from '../wire/records';
import { FrameReader } from './frames';
import { PendingRequest, RequestPipeline } from './pipeline';

/** mulberry32: a small seeded generator. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MAX_FRAME = 64 * 1024;

/** Every decoder a reply can go through. */
const decoders: Array<(reader: JuteReader) => unknown> = [
  (reader) => readStat(reader),
  (reader) => [reader.buffer(), readStat(reader)],
  (reader) => [reader.strings(), readStat(reader)],
  (reader) => [reader.ustring(), readStat(reader)],
  (reader) => [readAcl(reader), readStat(reader)],
  (reader) => readMultiResults(reader),
  (reader) => readClientInfos(reader),
  (reader) => reader.strings(),
  (reader) => reader.int(),
  (reader) => readWatcherEvent(reader),
  (reader) => decodeConnectResponse(reader),
];

/** Runs `work`; true if it threw ProtocolError, false if it succeeded, fails on anything else. */
function onlyProtocolErrors(work: () => void): boolean {
  try {
    work();
    return false;
  } catch (error) {
    if (error instanceof ProtocolError) return true;
    throw error;
  }
}

/**
 * What a client does with a server's byte stream: frames, then the ConnectResponse, then
 * replies through a pipeline with requests in flight for xids 1..64 (each re-armed when
 * answered, with decoders taken in turn). Returns whether the stream was refused.
 */
function consume(stream: Buffer, random: () => number, decodeReplies = true): boolean {
  const frames = new FrameReader(MAX_FRAME);
  const pipeline = new RequestPipeline({ onNotification: () => {}, onAuthReply: () => {} });
  pipeline.attach({ isClosed: false, send: () => {} } as never, []);
  let answered = 0;
  const arm = (xid: number) => {
    const decode = decodeReplies ? decoders[(xid + answered) % decoders.length] : undefined;
    pipeline.submit(
      xid,
      Buffer.alloc(0),
      new PendingRequest(
        decode,
        (rc) => {
          answered += 1;
          expect(typeof rc).toBe('number');
          arm(xid);
        },
        xid % 2 === 0 ? WatchRegistration.exists : WatchRegistration.none,
        `/p${xid}`,
      ),
    );
  };
  for (let xid = 1; xid <= 64; xid++) arm(xid);
  let first = true;
  return onlyProtocolErrors(() => {
    let offset = 0;
    while (offset < stream.length) {
      const size = 1 + Math.floor(random() * 300);
      frames.push(
        stream.subarray(offset, offset + size),
        (frame) => {
          if (first) {
            first = false;
            decodeConnectResponse(new JuteReader(frame));
          } else pipeline.receive(frame);
          return true;
        },
        (header, length) => {
          // As the session does: only replies are read past the limit, never a ConnectResponse.
          if (first) throw new ProtocolError(`a ConnectResponse of ${length} bytes`);
          pipeline.receiveOversized(header, length, MAX_FRAME);
          return true;
        },
      );
      expect(frames.buffered).toBeLessThanOrEqual(MAX_FRAME);
      offset += size;
    }
  });
}

function framed(bodies: readonly Buffer[]): Buffer {
  return Buffer.concat(
    bodies.flatMap((body) => {
      const length = Buffer.alloc(4);
      length.writeInt32BE(body.length);
      return [length, body];
    }),
  );
}

const recorded = recordedFrames.map((hex) => Buffer.from(hex, 'hex'));

/** One random mutation of a byte string. */
function mutate(bytes: Buffer, random: () => number): Buffer {
  const copy = Buffer.from(bytes);
  const at = Math.floor(random() * Math.max(1, copy.length));
  switch (Math.floor(random() * 7)) {
    case 0: // flip a bit
      if (copy.length > 0) copy[at] = copy[at]! ^ (1 << Math.floor(random() * 8));
      return copy;
    case 1: // a random byte
      if (copy.length > 0) copy[at] = Math.floor(random() * 256);
      return copy;
    case 2: // an extreme int (lengths, counts, xids, types)
      if (copy.length >= at + 4) {
        const extremes = [0x7fffffff, -1, -2, 0, 0x10000, -0x80000000, 1];
        copy.writeInt32BE(extremes[Math.floor(random() * extremes.length)]!, at);
      }
      return copy;
    case 3: // truncate
      return copy.subarray(0, at);
    case 4: // drop a byte
      return Buffer.concat([copy.subarray(0, at), copy.subarray(at + 1)]);
    case 5: // insert bytes
      return Buffer.concat([
        copy.subarray(0, at),
        Buffer.from(
          Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * 256)),
        ),
        copy.subarray(at),
      ]);
    default: // duplicate a slice
      return Buffer.concat([copy.subarray(0, at), copy.subarray(Math.floor(at / 2))]);
  }
}

describe('decoder fuzz (seeded)', () => {
  it('accepts the recorded stream as it is, however it is cut', () => {
    // Replies matched by xid, notifications and auth decoded (their records are checked by the
    // integration tests, against a live server).
    expect(consume(framed(recorded), seeded(1), false)).toBe(false);
  });

  it('refuses or survives 2,000 random streams with nothing but ProtocolError', () => {
    const random = seeded(2);
    let refused = 0;
    for (let run = 0; run < 2_000; run++) {
      const length = Math.floor(random() * 600);
      const stream = Buffer.from(Array.from({ length }, () => Math.floor(random() * 256)));
      if (consume(stream, random)) refused += 1;
    }
    expect(refused).toBeGreaterThan(1_000);
  });

  it('refuses or survives 4,000 mutations of the recorded stream with nothing but ProtocolError', () => {
    const random = seeded(3);
    const stream = framed(recorded);
    let refused = 0;
    for (let run = 0; run < 4_000; run++) {
      let mutated = stream;
      const mutations = 1 + Math.floor(random() * 4);
      for (let index = 0; index < mutations; index++) mutated = mutate(mutated, random);
      if (consume(mutated, random)) refused += 1;
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('runs every decoder over 6,000 mutated recorded frames with nothing but ProtocolError', () => {
    const random = seeded(4);
    let refused = 0;
    for (let run = 0; run < 6_000; run++) {
      const frame = mutate(recorded[Math.floor(random() * recorded.length)]!, random);
      const decode = decoders[run % decoders.length]!;
      if (onlyProtocolErrors(() => decode(new JuteReader(frame, Math.min(16, frame.length))))) {
        refused += 1;
      }
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('frames over maxFrameBytes fail their own call only; one for an unknown xid is refused', () => {
    const random = seeded(6);
    const oversized = (xid: number, size: number) => {
      const frame = Buffer.alloc(16 + size, 0x5a);
      frame.writeInt32BE(xid, 0);
      frame.writeBigInt64BE(9n, 4);
      frame.writeInt32BE(0, 12);
      return frame;
    };
    for (let run = 0; run < 200; run++) {
      const pipeline = new RequestPipeline({ onNotification: () => {}, onAuthReply: () => {} });
      pipeline.attach({ isClosed: false, send: () => {} } as never, []);
      const outcomes = new Map<number, number>();
      for (let xid = 1; xid <= 3; xid++) {
        pipeline.submit(
          xid,
          Buffer.alloc(0),
          new PendingRequest(
            (reader) => reader.int(),
            (rc) => outcomes.set(xid, rc),
          ),
        );
      }
      const small = Buffer.alloc(20);
      small.writeInt32BE(1, 0);
      const unknown = random() < 0.5;
      const stream = framed([
        small,
        oversized(2, MAX_FRAME + Math.floor(random() * 3 * MAX_FRAME)),
        oversized(unknown ? 77 : 3, MAX_FRAME + 1),
      ]);
      const reader = new FrameReader(MAX_FRAME);
      const refused = onlyProtocolErrors(() => {
        for (let offset = 0; offset < stream.length; ) {
          const size = 1 + Math.floor(random() * 9_000);
          reader.push(
            stream.subarray(offset, offset + size),
            (frame) => {
              pipeline.receive(frame);
              return true;
            },
            (header, length) => {
              pipeline.receiveOversized(header, length, MAX_FRAME);
              return true;
            },
          );
          expect(reader.buffered).toBeLessThanOrEqual(MAX_FRAME);
          offset += size;
        }
      });
      expect(refused).toBe(unknown);
      expect(outcomes.get(1)).toBe(Rc.ok);
      expect(outcomes.get(2)).toBe(Rc.failedWithCause);
      expect(outcomes.get(3)).toBe(unknown ? undefined : Rc.failedWithCause);
    }
  });

  it('mutated frames of a pipeline fail the caller with a return code, never leave it hanging', () => {
    const random = seeded(5);
    for (let run = 0; run < 1_000; run++) {
      const pipeline = new RequestPipeline({ onNotification: () => {}, onAuthReply: () => {} });
      pipeline.attach({ isClosed: false, send: () => {} } as never, []);
      const outcomes: number[] = [];
      const xid = pipeline.xid();
      pipeline.submit(
        xid,
        Buffer.alloc(0),
        new PendingRequest(decoders[run % decoders.length], (rc) => outcomes.push(rc)),
      );
      const body = mutate(recorded[1 + Math.floor(random() * (recorded.length - 1))]!, random);
      if (body.length >= 4) body.writeInt32BE(xid, 0);
      const refused = onlyProtocolErrors(() => pipeline.receive(body));
      // The connection drops on a refusal: everything left fails, as the session does.
      if (refused) pipeline.detach(Rc.connectionLoss);
      expect(outcomes).toHaveLength(1);
    }
  });
});
