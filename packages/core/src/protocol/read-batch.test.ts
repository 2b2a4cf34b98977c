import { describe, expect, it } from 'vitest';
import { Rc, type ZkError } from '../errors/errors';
import { OpCode } from '../wire/codes';
import { JuteWriter, ProtocolError } from '../wire/jute';
import { encodePathWatch, readNodeData } from '../wire/records';
import type { Connection } from './connection';
import { PendingRequest, RequestPipeline } from './pipeline';
import { batchLimit, isDataRead, MAX_BATCH_READS, RecentLargest } from './read-batch';

/** A connection that records frames, and runs the pre-flush hook when told (end of the turn). */
function fakeConnection() {
  const sent: Buffer[] = [];
  let hook: (() => void) | undefined;
  const connection = {
    isClosed: false,
    send: (frame: Buffer) => sent.push(frame),
    beforeFlush: (next: () => void) => {
      hook = next;
    },
  };
  const endTurn = () => {
    const run = hook;
    hook = undefined;
    run?.();
  };
  return { connection: connection as unknown as Connection, sent, endTurn };
}

function batchingPipeline(maxFrameBytes = 4 * 1024 * 1024, onNotification = () => {}) {
  const requests = new RequestPipeline(
    { onNotification, onAuthReply: () => {} },
    { maxFrameBytes },
  );
  const wire = fakeConnection();
  requests.attach(wire.connection, []);
  requests.allowBatches(wire.connection);
  return { requests, ...wire };
}

function recorder() {
  const calls: Array<{ rc: number; value: unknown; cause: Error | undefined }> = [];
  return {
    calls,
    reply: (rc: number, value?: unknown, cause?: Error) => calls.push({ rc, value, cause }),
  };
}

/** A watchless get of `path`, submitted: its xid, frame and what it was told. */
function get(requests: RequestPipeline, path: string) {
  const xid = requests.xid();
  const frame = encodePathWatch(xid, OpCode.getData, path, false);
  const told = recorder();
  requests.submit(xid, frame, new PendingRequest(readNodeData, told.reply, 0, '', 0, path));
  return { xid, frame, told };
}

const typeOf = (frame: Buffer) => frame.readInt32BE(8);
/** The data a get was answered with, as text. */
const dataOf = (told: ReturnType<typeof recorder>) =>
  (told.calls[0]!.value as { data: Buffer }).data.toString();
const xidOf = (frame: Buffer) => frame.readInt32BE(4);
const header = (xid: number, err: number) => new JuteWriter(16).int(xid).long(9).int(err).finish();

/** A MultiResponse: for each entry, data (a GetDataResult) or an error code (ErrorResult). */
function multiResponse(xid: number, results: Array<string | number>): Buffer {
  const parts = [header(xid, 0)];
  for (const result of results) {
    if (typeof result === 'number') {
      parts.push(new JuteWriter(13).int(-1).boolean(false).int(result).int(result).finish());
    } else {
      const data = Buffer.from(result);
      const w = new JuteWriter(9 + 4 + data.length + 68).int(OpCode.getData).boolean(false).int(0);
      w.buffer(data);
      for (let i = 0; i < 4; i++) w.long(0);
      for (let i = 0; i < 3; i++) w.int(0);
      w.long(0).int(data.length).int(0).long(0);
      parts.push(w.finish());
    }
  }
  parts.push(new JuteWriter(9).int(-1).boolean(true).int(-1).finish());
  return Buffer.concat(parts);
}

describe('a batch of reads in the pipeline', () => {
  it('answers each get from its own result, in order, an error for that get only', () => {
    const { requests, sent, endTurn } = batchingPipeline();
    const a = get(requests, '/a');
    const b = get(requests, '/b');
    const c = get(requests, '/c');
    expect(sent).toEqual([]);
    endTurn();
    expect(sent.map(typeOf)).toEqual([OpCode.multiRead]);
    requests.receive(multiResponse(xidOf(sent[0]!), ['A', Rc.noNode, 'C']));
    expect(dataOf(a.told)).toBe('A');
    expect(b.told.calls[0]).toMatchObject({ rc: Rc.noNode, value: undefined });
    expect(dataOf(c.told)).toBe('C');
    expect(requests.outstanding).toBe(0);
  });

  it.each([
    ['Unimplemented', Rc.unimplemented],
    ['no results', Rc.ok],
  ])('sends the gets again alone, and batches no more, when the server answers %s', (_, rc) => {
    const { requests, sent, endTurn } = batchingPipeline();
    const a = get(requests, '/a');
    const b = get(requests, '/b');
    endTurn();
    // A server before 3.6: Unimplemented (or a reply with no MultiResponse in it).
    requests.receive(header(xidOf(sent[0]!), rc));
    expect(sent.slice(1)).toEqual([a.frame, b.frame]);
    get(requests, '/c');
    get(requests, '/d');
    endTurn();
    expect(sent.slice(3).map(typeOf)).toEqual([OpCode.getData, OpCode.getData]);
  });

  it('fails the gets it cannot answer when the reply does not fit the batch, then throws', () => {
    const { requests, sent, endTurn } = batchingPipeline();
    const a = get(requests, '/a');
    const b = get(requests, '/b');
    endTurn();
    const short = multiResponse(xidOf(sent[0]!), ['A']);
    expect(() => requests.receive(short)).toThrow(ProtocolError);
    expect(dataOf(a.told)).toBe('A');
    expect(b.told.calls[0]?.rc).toBe(Rc.connectionLoss);
    expect((b.told.calls[0]!.cause as ZkError).code).toBe('MarshallingError');
  });

  it('leaves out a get withdrawn before the turn ended; a lone get goes as it is', () => {
    const { requests, sent, endTurn } = batchingPipeline();
    const a = get(requests, '/a');
    const b = get(requests, '/b');
    expect(requests.withdraw(b.xid)).toBe(true);
    endTurn();
    expect(sent).toEqual([a.frame]);
  });

  it('tells a get never sent from one in flight when the connection goes', () => {
    const { requests, sent, endTurn } = batchingPipeline();
    const a = get(requests, '/a');
    const b = get(requests, '/b');
    endTurn();
    expect(sent).toHaveLength(1);
    const c = get(requests, '/c');
    const unsent = new Error('never sent');
    const inFlight = new Error('maybe answered');
    requests.detach(Rc.connectionLoss, unsent, inFlight);
    expect(a.told.calls[0]?.cause).toBe(inFlight);
    expect(b.told.calls[0]?.cause).toBe(inFlight);
    expect(c.told.calls[0]?.cause).toBe(unsent);
    expect(requests.outstanding).toBe(0);
  });

  it('closes the run before any other request, so the order on the wire is the order made', () => {
    const { requests, sent, endTurn } = batchingPipeline();
    get(requests, '/a');
    get(requests, '/b');
    const write = requests.xid();
    requests.submit(write, Buffer.from('write'), new PendingRequest(undefined, () => {}));
    get(requests, '/c');
    endTurn();
    expect(sent.map((frame) => (frame.length > 8 ? typeOf(frame) : frame.toString()))).toEqual([
      OpCode.multiRead,
      'write',
      OpCode.getData,
    ]);
  });

  it('holds at most as many gets as twice the largest result seen fits in maxFrameBytes', () => {
    expect(batchLimit(4 * 1024 * 1024, 0)).toBe(MAX_BATCH_READS);
    expect(batchLimit(4 * 1024 * 1024, 200 * 1024)).toBe(10);
    expect(batchLimit(64 * 1024, 20 * 1024)).toBe(1);
    expect(batchLimit(64 * 1024, 10)).toBe(MAX_BATCH_READS);
  });

  it('counts only requests that change nothing as data reads', () => {
    const frameOf = (type: number) => encodePathWatch(1, type, '/p', false);
    expect(isDataRead(frameOf(OpCode.getData))).toBe(true);
    expect(isDataRead(frameOf(OpCode.getChildren2))).toBe(true);
    expect(isDataRead(frameOf(OpCode.setData))).toBe(false);
    expect(isDataRead(frameOf(OpCode.sync))).toBe(false);
    expect(isDataRead(Buffer.alloc(0))).toBe(false);
  });

  it('answers gets sent again after an unusable batch reply before the requests made after them', () => {
    // get(a); get(b); children(c): the batch's reply is over maxFrameBytes, a and b go again,
    // alone, after c — whose reply comes first. a and b are still answered first, and an event
    // read among those replies keeps its place behind c's.
    const order: string[] = [];
    const { requests, sent, endTurn } = batchingPipeline(64 * 1024, () => order.push('event'));
    const told = (name: string) => () => order.push(name);
    const submitGet = (path: string) => {
      const xid = requests.xid();
      const frame = encodePathWatch(xid, OpCode.getData, path, false);
      requests.submit(xid, frame, new PendingRequest(readNodeData, told(path), 0, '', 0, path));
      return xid;
    };
    const a = submitGet('/a');
    const b = submitGet('/b');
    const c = requests.xid();
    requests.submit(
      c,
      encodePathWatch(c, OpCode.getChildren2, '/c', false),
      new PendingRequest(undefined, told('/c')),
    );
    endTurn();
    expect(sent.map(typeOf)).toEqual([OpCode.multiRead, OpCode.getChildren2]);
    requests.receiveOversized(header(xidOf(sent[0]!), 0), 1024 * 1024, 64 * 1024);
    expect(sent.slice(2).map(xidOf)).toEqual([a, b]);
    // On the wire: c's reply, an event, then a's and b's.
    requests.receive(header(c, 0));
    requests.receive(
      new JuteWriter(30).int(-1).long(-1).int(0).int(3).int(3).ustring('/x').finish(),
    );
    expect(order).toEqual([]);
    requests.receive(getReply(a, 'A'));
    expect(order).toEqual(['/a']);
    requests.receive(getReply(b, 'B'));
    expect(order).toEqual(['/a', '/b', '/c', 'event']);
    expect(requests.outstanding).toBe(0);
  });

  it('delivers what it held before failing the rest when the connection goes meanwhile', () => {
    const { requests, sent, endTurn } = batchingPipeline(64 * 1024);
    const order: string[] = [];
    const a = requests.xid();
    requests.submit(
      a,
      encodePathWatch(a, OpCode.getData, '/a', false),
      new PendingRequest(readNodeData, (rc) => order.push(`/a ${rc}`), 0, '', 0, '/a'),
    );
    const b = requests.xid();
    requests.submit(
      b,
      encodePathWatch(b, OpCode.getData, '/b', false),
      new PendingRequest(readNodeData, (rc) => order.push(`/b ${rc}`), 0, '', 0, '/b'),
    );
    const c = requests.xid();
    requests.submit(
      c,
      encodePathWatch(c, OpCode.getChildren2, '/c', false),
      new PendingRequest(undefined, (rc) => order.push(`/c ${rc}`)),
    );
    endTurn();
    requests.receiveOversized(header(xidOf(sent[0]!), 0), 1024 * 1024, 64 * 1024);
    requests.receive(header(c, 0));
    requests.detach(Rc.connectionLoss);
    expect(order).toEqual(['/c 0', `/a ${Rc.connectionLoss}`, `/b ${Rc.connectionLoss}`]);
  });

  it('bounds the batches by the large replies of late, not by one long ago', () => {
    const largest = new RecentLargest();
    largest.note(200 * 1024);
    expect(batchLimit(4 * 1024 * 1024, largest.value)).toBe(10);
    // Two windows of small replies later, the one large reply no longer counts.
    largest.note(100, 1_024);
    expect(largest.value).toBe(200 * 1024);
    largest.note(100, 1_024);
    expect(largest.value).toBe(100);
    expect(batchLimit(4 * 1024 * 1024, largest.value)).toBe(MAX_BATCH_READS);
  });
});

/** A getData reply: header, the data, a Stat. */
function getReply(xid: number, text: string): Buffer {
  const data = Buffer.from(text);
  const w = new JuteWriter(16 + 4 + data.length + 68).int(xid).long(9).int(0);
  w.buffer(data);
  for (let i = 0; i < 4; i++) w.long(0);
  for (let i = 0; i < 3; i++) w.int(0);
  w.long(0).int(data.length).int(0).long(0);
  return w.finish();
}
