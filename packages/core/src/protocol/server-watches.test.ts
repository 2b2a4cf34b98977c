import { describe, expect, it } from 'vitest';
import { Rc } from '../errors/errors';
import { EventType, OpCode, WatcherType, WatchRegistration, Xid } from '../wire/codes';
import { JuteReader } from '../wire/jute';
import { ServerWatches } from './server-watches';

const set = (watchRegistration: number, watchPath: string, removes = 0) => ({
  watchRegistration,
  watchPath,
  removes,
});

/** The path lists of each setWatches frame (five in setWatches2, with the persistent ones). */
function lists(frames: Buffer[]): string[][][] {
  return frames.map((frame) => {
    const reader = new JuteReader(frame);
    reader.skip(4);
    expect(reader.int()).toBe(Xid.setWatches);
    const count = reader.int() === OpCode.setWatches2 ? 5 : 3;
    reader.long();
    return Array.from({ length: count }, () => reader.strings());
  });
}

describe('ServerWatches', () => {
  it('records a watch by its reply: exists on a missing node is an exist watch, a failed read none', () => {
    const watches = new ServerWatches();
    watches.register(set(WatchRegistration.data, '/data'), Rc.ok);
    watches.register(set(WatchRegistration.data, '/gone'), Rc.noNode);
    watches.register(set(WatchRegistration.exists, '/present'), Rc.ok);
    watches.register(set(WatchRegistration.exists, '/absent'), Rc.noNode);
    watches.register(set(WatchRegistration.child, '/parent'), Rc.ok);
    watches.register(set(WatchRegistration.persistent, '/node'), Rc.ok);
    watches.register(set(WatchRegistration.persistentRecursive, '/tree'), Rc.ok);
    watches.register(set(WatchRegistration.none, '/plain'), Rc.ok);
    expect([...watches.data].sort()).toEqual(['/data', '/present']);
    expect([...watches.exist]).toEqual(['/absent']);
    expect([...watches.child]).toEqual(['/parent']);
    expect([...watches.persistent]).toEqual(['/node']);
    expect([...watches.persistentRecursive]).toEqual(['/tree']);
    expect(watches.size).toBe(6);
  });

  it('forgets the one-shot watches an event consumes, and those a removeWatches removed', () => {
    const watches = new ServerWatches();
    for (const path of ['/a', '/b']) watches.register(set(WatchRegistration.data, path), Rc.ok);
    watches.register(set(WatchRegistration.child, '/a'), Rc.ok);
    watches.register(set(WatchRegistration.persistent, '/p'), Rc.ok);
    watches.consume(EventType.nodeDataChanged, '/b');
    expect([...watches.data]).toEqual(['/a']);
    watches.consume(EventType.nodeDeleted, '/a');
    expect(watches.size).toBe(1);
    // The server answers NoWatcher for a watch it no longer holds: forgotten all the same.
    watches.register(set(WatchRegistration.remove, '/p', WatcherType.persistent), Rc.noWatcher);
    expect(watches.size).toBe(0);
  });

  it('sends them all again in setWatches frames of at most 128 KiB of paths, none when there are none', () => {
    const watches = new ServerWatches();
    expect(watches.setWatchesFrames(10)).toEqual([]);
    watches.register(set(WatchRegistration.exists, '/absent'), Rc.noNode);
    watches.register(set(WatchRegistration.persistentRecursive, '/tree'), Rc.ok);
    expect(lists(watches.setWatchesFrames(10))).toEqual([[[], ['/absent'], [], [], ['/tree']]]);

    watches.clear();
    const paths = Array.from({ length: 3000 }, (_, i) => `/${String(i).padStart(99, '0')}`);
    for (const path of paths) watches.register(set(WatchRegistration.data, path), Rc.ok);
    const frames = lists(watches.setWatchesFrames(10));
    expect(frames.length).toBe(3);
    expect(frames.flatMap((frame) => frame[0])).toEqual(paths);
  });
});
