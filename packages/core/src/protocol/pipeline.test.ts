import { describe, expect, it } from 'vitest';
import { Rc, type ZkError } from '../errors/errors';
import { EventType, OpCode, WatcherType, WatchRegistration, Xid } from '../wire/codes';
import { JuteReader, JuteWriter, ProtocolError, ustringBytes } from '../wire/jute';
import { encodePathWatch } from '../wire/records';
import type { Connection } from './connection';
import { PendingRequest, RequestPipeline } from './pipeline';

function fakeConnection() {
  const sent: Buffer[] = [];
  const connection = { isClosed: false, send: (frame: Buffer) => sent.push(frame) };
  return { connection: connection as unknown as Connection, sent };
}

function reply(xid: number, zxid: number, err: number, body: Buffer = Buffer.alloc(0)): Buffer {
  return Buffer.concat([new JuteWriter(16).int(xid).long(zxid).int(err).finish(), body]);
}

function notification(type: number, path: string): Buffer {
  const body = new JuteWriter(8 + ustringBytes(path)).int(type).int(3).ustring(path).finish();
  return reply(Xid.notification, 50, 0, body);
}

function recorder() {
  const calls: Array<{ rc: number; value: unknown; cause: Error | undefined }> = [];
  return {
    calls,
    reply: (rc: number, value?: unknown, cause?: Error) => calls.push({ rc, value, cause }),
  };
}

const xidOf = (frame: Buffer) => frame.readInt32BE(4);

function pipeline() {
  const events: unknown[] = [];
  const auth: number[] = [];
  const instance = new RequestPipeline({
    onNotification: (event) => events.push(event),
    onAuthReply: (rc) => auth.push(rc),
  });
  return { pipeline: instance, events, auth };
}

describe('RequestPipeline', () => {
  it('holds requests until a connection, then sends auth, watches and requests in that order', () => {
    const { pipeline: requests } = pipeline();
    const first = recorder();
    const xid = requests.xid();
    requests.submit(xid, Buffer.from('request'), new PendingRequest(undefined, first.reply));
    requests.watches.data.add('/w');
    const { connection, sent } = fakeConnection();
    requests.attach(connection, [Buffer.from('auth')]);
    expect(sent[0]?.toString()).toBe('auth');
    expect(xidOf(sent[1]!)).toBe(Xid.setWatches);
    expect(sent[2]?.toString()).toBe('request');
    requests.receive(reply(Xid.setWatches, 0, 0));
    requests.receive(reply(xid, 77, 0));
    expect(first.calls).toEqual([{ rc: 0, value: undefined, cause: undefined }]);
    expect(requests.lastZxid).toBe(77);
  });

  it('matches replies by xid, decodes them, and refuses a reply nothing asked for', () => {
    const { pipeline: requests } = pipeline();
    const { connection } = fakeConnection();
    requests.attach(connection, []);
    const one = recorder();
    const two = recorder();
    const a = requests.xid();
    const b = requests.xid();
    requests.submit(a, Buffer.alloc(0), new PendingRequest((reader) => reader.int(), one.reply));
    requests.submit(b, Buffer.alloc(0), new PendingRequest((reader) => reader.int(), two.reply));
    // A server answers in order; one that does not (an unknown op answered at once) still works.
    requests.receive(reply(b, 0, 0, new JuteWriter(4).int(2).finish()));
    requests.receive(reply(a, 0, Rc.noNode));
    expect(two.calls[0]).toMatchObject({ rc: 0, value: 2 });
    expect(one.calls[0]).toMatchObject({ rc: Rc.noNode, value: undefined });
    expect(() => requests.receive(reply(a, 0, 0))).toThrow(ProtocolError);
    expect(() => requests.receive(reply(-7, 0, 0))).toThrow(ProtocolError);
    expect(() => requests.receive(reply(Xid.setWatches, 0, 0))).toThrow(ProtocolError);
  });

  it('fails a request whose reply is unreadable with ConnectionLoss (cause MarshallingError), then throws', () => {
    const { pipeline: requests } = pipeline();
    requests.attach(fakeConnection().connection, []);
    const call = recorder();
    const xid = requests.xid();
    requests.submit(
      xid,
      Buffer.alloc(0),
      new PendingRequest((reader) => reader.long(), call.reply),
    );
    expect(() => requests.receive(reply(xid, 0, 0, Buffer.alloc(3)))).toThrow(ProtocolError);
    expect(call.calls[0]?.rc).toBe(Rc.connectionLoss);
    expect((call.calls[0]!.cause as ZkError).code).toBe('MarshallingError');
  });

  it('fails everything in flight and waiting when the connection goes', () => {
    const { pipeline: requests } = pipeline();
    requests.attach(fakeConnection().connection, []);
    const sent = recorder();
    requests.submit(requests.xid(), Buffer.alloc(0), new PendingRequest(undefined, sent.reply));
    const reason = new Error('cut');
    requests.detach(Rc.connectionLoss, reason);
    const waiting = recorder();
    requests.submit(requests.xid(), Buffer.alloc(0), new PendingRequest(undefined, waiting.reply));
    requests.failAll(Rc.closing);
    expect(sent.calls).toEqual([{ rc: Rc.connectionLoss, value: undefined, cause: reason }]);
    expect(waiting.calls[0]?.rc).toBe(Rc.closing);
    expect(requests.outstanding).toBe(0);
  });

  it('records the watches the server sets, forgets those an event consumes, and re-registers the rest', () => {
    const { pipeline: requests, events } = pipeline();
    const { connection, sent } = fakeConnection();
    requests.attach(connection, []);
    const submit = (kind: number, path: string, rc: number, removes = 0) => {
      const xid = requests.xid();
      requests.submit(
        xid,
        Buffer.alloc(0),
        new PendingRequest(undefined, () => {}, kind, path, removes),
      );
      requests.receive(reply(xid, 10, rc));
    };
    submit(WatchRegistration.data, '/data', 0);
    submit(WatchRegistration.exists, '/absent', Rc.noNode);
    submit(WatchRegistration.exists, '/present', 0);
    submit(WatchRegistration.child, '/parent', 0);
    submit(WatchRegistration.child, '/missing', Rc.noNode);
    submit(WatchRegistration.persistentRecursive, '/tree', 0);
    submit(WatchRegistration.persistent, '/node', 0);
    const watches = requests.watches;
    expect([...watches.data].sort()).toEqual(['/data', '/present']);
    expect([...watches.exist]).toEqual(['/absent']);
    expect([...watches.child]).toEqual(['/parent']);
    requests.receive(notification(EventType.nodeDataChanged, '/data'));
    requests.receive(notification(EventType.nodeChildrenChanged, '/parent'));
    requests.receive(notification(EventType.nodeCreated, '/tree/x'));
    expect(events).toHaveLength(3);
    expect([...watches.data]).toEqual(['/present']);
    expect(watches.child.size).toBe(0);
    submit(WatchRegistration.remove, '/node', 0, WatcherType.persistent);
    expect(watches.persistent.size).toBe(0);

    requests.detach(Rc.connectionLoss);
    sent.length = 0;
    requests.attach(connection, []);
    expect(sent).toHaveLength(1);
    const reader = new JuteReader(sent[0]!);
    reader.skip(4);
    expect([reader.int(), reader.int()]).toEqual([Xid.setWatches, OpCode.setWatches2]);
    expect(reader.long()).toBe(10);
    expect([
      reader.strings(),
      reader.strings(),
      reader.strings(),
      reader.strings(),
      reader.strings(),
    ]).toEqual([['/present'], ['/absent'], [], [], ['/tree']]);
  });

  it('passes auth replies on, and ignores pings', () => {
    const { pipeline: requests, auth } = pipeline();
    requests.receive(reply(Xid.ping, 0, 0));
    requests.receive(reply(Xid.auth, 0, Rc.authFailed));
    expect(auth).toEqual([Rc.authFailed]);
  });
});

/**
 * Requests made while there is no connection wait in the pipeline: sent in the order they were
 * made once one is attached, and each may be withdrawn (its signal aborted) in constant time — a
 * fleet member ending thousands of acquisitions while disconnected withdraws them all.
 */
function waitingRequests(count: number) {
  const requests = new RequestPipeline(
    { onNotification: () => {}, onAuthReply: () => {} },
    { maxFrameBytes: 1024 * 1024 },
  );
  const told = new Map<number, number>();
  const made = Array.from({ length: count }, (_, at) => {
    const xid = requests.xid();
    const frame = encodePathWatch(xid, OpCode.exists, `/n${at}`, false);
    requests.submit(xid, frame, new PendingRequest(undefined, (rc: number) => told.set(xid, rc)));
    return { xid, frame };
  });
  return { requests, made, told };
}

describe('requests waiting for a connection', () => {
  it('go out in the order they were made, less the ones withdrawn', () => {
    const { requests, made, told } = waitingRequests(50_000);
    expect(requests.outstanding).toBe(50_000);
    // Every other one withdrawn, last first (the worst order for a list scanned from the front).
    for (let at = made.length - 1; at >= 0; at -= 2) {
      expect(requests.withdraw(made[at]!.xid)).toBe(true);
    }
    expect(requests.withdraw(made[1]!.xid)).toBe(false);
    expect(requests.outstanding).toBe(25_000);
    const { connection, sent } = fakeConnection();
    requests.attach(connection, []);
    expect(sent).toEqual(made.filter((_, at) => at % 2 === 0).map((request) => request.frame));
    expect(told.size).toBe(0);
  });

  it('fail with the connection, withdrawn ones untold', () => {
    const { requests, made, told } = waitingRequests(10);
    requests.withdraw(made[3]!.xid);
    requests.detach(Rc.connectionLoss);
    expect([...told.keys()]).toEqual(made.filter((_, at) => at !== 3).map(({ xid }) => xid));
    expect(new Set(told.values())).toEqual(new Set([Rc.connectionLoss]));
  });
});
