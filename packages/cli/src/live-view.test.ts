import { LiveState } from '@zkrx/console';
import { describe, expect, it } from 'vitest';
import { lock, participant } from '../../console/test/locks';
import { noColours } from './format';
import { eventLine } from './live-view';

describe('the live view: the lines of recent changes', () => {
  it('marks the lost holds, and draws them', () => {
    const state = new LiveState();
    const c1 = participant('/root/a', 'c', { data: 'worker-c:3' });
    const c2 = participant('/root/b', 'c', { data: 'worker-c:3' });
    const d = participant('/root/a', 'd', { data: 'worker-d:4' });
    state.update([lock('/root/a', [c1], [d]), lock('/root/b', [c2])], 1_000);
    const events = state.update([lock('/root/a', [d], [], { pzxid: 9 })], 2_000, () => 9);
    expect(events).toMatchObject([
      { kind: 'handed-over', path: '/root/a', from: c1, to: d, lost: true },
      { kind: 'ended', path: '/root/b', from: c2, lost: true },
    ]);
    const line = eventLine(events[0]!, noColours, 'locks', '/root');
    expect(line).toMatch(
      /^\d\d:\d\d:\d\d {2}a {3}LOST {2}0xc \(worker-c:3\): session ended while holding \(held ≤\S+\); now 0xd \(worker-d:4\) holds$/,
    );
    expect(eventLine(events[1]!, noColours, 'leaders', '/')).toMatch(/ \/root\/b {3}LOST /);
  });
});
