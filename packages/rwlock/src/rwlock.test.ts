import { sortChildren } from '@zkrx/lock/recipe';
import { describe, expect, it } from 'vitest';
import { readRule, writeRule } from './rwlock';

const id = (n: number) => `_c_0f8fad5b-d9cb-469f-a165-${String(n).padStart(12, '0')}-`;
const read = (seq: number) => `${id(seq)}__READ__${String(seq).padStart(10, '0')}`;
const write = (seq: number) => `${id(seq)}__WRIT__${String(seq).padStart(10, '0')}`;

function decide(rule: typeof readRule, names: string[], ours: string) {
  const children = sortChildren(names);
  return rule(
    children,
    children.findIndex((child) => child.name === ours),
  );
}

describe('read-write rules', () => {
  it('lets readers share and stops them at the nearest writer before them', () => {
    expect(decide(readRule, [read(1), read(2), read(3)], read(3))).toEqual({ holds: true });
    const blocked = decide(readRule, [write(1), read(2), write(3), read(4)], read(4));
    expect(blocked).toMatchObject({ holds: false });
    expect(blocked.holds === false && blocked.waitFor !== 'children' && blocked.waitFor.name).toBe(
      write(3),
    );
  });

  it('queues a writer behind everyone before it, watching only its predecessor', () => {
    expect(decide(writeRule, [write(1)], write(1))).toEqual({ holds: true });
    const blocked = decide(writeRule, [read(1), read(2), write(3)], write(3));
    expect(blocked).toMatchObject({ holds: false });
    expect(blocked.holds === false && blocked.waitFor !== 'children' && blocked.waitFor.name).toBe(
      read(2),
    );
  });

  it('waits for the nearest writer even when it is the only one before it', () => {
    const blocked = decide(readRule, [read(1), write(2), read(3), read(4)], read(4));
    expect(blocked.holds === false && blocked.waitFor !== 'children' && blocked.waitFor.name).toBe(
      write(2),
    );
  });

  it("counts kazoo's children by sequence", () => {
    const kazooWriter = 'abcdef__lock__0000000002';
    const kazooReader = 'abcdef__rlock__0000000001';
    expect(decide(readRule, [kazooReader, kazooWriter, read(3)], read(3))).toMatchObject({
      holds: false,
    });
    expect(decide(readRule, [kazooReader, read(3)], read(3))).toEqual({ holds: true });
    expect(decide(writeRule, [kazooReader, write(3)], write(3))).toMatchObject({ holds: false });
  });

  it("keeps a downgraded writer's read node ahead of writers queued after the writer", () => {
    // The read node taken while holding write 5 carries the writer's sequence.
    const downgraded = `${id(99)}__READ__0000000005`;
    expect(decide(writeRule, [downgraded, write(8)], write(8))).toMatchObject({ holds: false });
    expect(decide(readRule, [downgraded, read(9)], read(9))).toEqual({ holds: true });
  });
});
