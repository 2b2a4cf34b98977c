/** Unit tests of lostToReconfig: an expiry only a replacement explains, and those it does not. */
import { describe, expect, it } from 'vitest';
import type { FaultRecord } from './history';
import { lostToReconfig } from './reconfig-losses';

const fault = (kind: FaultRecord['kind'], start: number, healedAt: number, target?: number) =>
  ({ id: 1, kind, target, start, healedAt, lossReference: start, detail: '' }) as FaultRecord;

describe('lostToReconfig', () => {
  const replacement = fault('reconfig', 10_000, 14_000);

  it('counts an expiry during a replacement, up to a session timeout after it', () => {
    expect(lostToReconfig([{ worker: 1, at: 12_000 }], [replacement], 6_000)).toHaveLength(1);
    expect(lostToReconfig([{ worker: 1, at: 19_000 }], [replacement], 6_000)).toHaveLength(1);
    expect(lostToReconfig([{ worker: 1, at: 21_000 }], [replacement], 6_000)).toHaveLength(0);
    expect(lostToReconfig([{ worker: 1, at: 9_000 }], [replacement], 6_000)).toHaveLength(0);
  });

  it("leaves out what another fault explains: the worker's blackhole, any server fault", () => {
    const expiry = [{ worker: 1, at: 12_000 }];
    expect(
      lostToReconfig(expiry, [replacement, fault('blackhole', 3_000, 11_000, 1)], 6_000),
    ).toHaveLength(0);
    expect(
      lostToReconfig(expiry, [replacement, fault('blackhole', 3_000, 11_000, 2)], 6_000),
    ).toHaveLength(1);
    expect(
      lostToReconfig(expiry, [replacement, fault('quorum-loss', 9_000, 10_000)], 6_000),
    ).toHaveLength(0);
  });
});
