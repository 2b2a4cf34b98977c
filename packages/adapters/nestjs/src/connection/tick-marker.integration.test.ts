/**
 * The tick marker's safety argument, attacked: two claims of one tick that read the same
 * version (or both find no marker) — one wins; an earlier tick after a later one, and a
 * candidate that does not lead, claim nothing.
 */
import { joinElection } from '@zkrx/leader';
import { connectedClients, lockPath } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { claimTick, tickMarkerPath } from './tick-marker';

describe('claimTick', () => {
  it('lets one of two concurrent claims of a tick win, and no earlier tick after it', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const leader = joinElection(a!, path, { id: 'a' });
    await leader.whenLeader();
    const follower = joinElection(b!, path, { id: 'b' });
    await follower.joined;
    const marker = tickMarkerPath(path, 'Job.run');

    // No marker yet: both create, one gets NodeExists.
    const first = await Promise.all([
      claimTick(a!, leader, marker, 1_000),
      claimTick(a!, leader, marker, 1_000),
    ]);
    expect(first.sort()).toEqual([false, true]);
    // A marker at version 0: both set at the version read, one gets BadVersion.
    const second = await Promise.all([
      claimTick(a!, leader, marker, 2_000),
      claimTick(a!, leader, marker, 2_000),
    ]);
    expect(second.sort()).toEqual([false, true]);
    expect(await claimTick(a!, leader, marker, 2_000)).toBe(false);
    expect(await claimTick(a!, leader, marker, 1_500)).toBe(false);
    // Not the leader: its guard refuses, nothing is written.
    expect(await claimTick(b!, follower, marker, 3_000)).toBe(false);
    expect((await a!.promises.get(marker)).data.toString()).toBe('2000');

    await Promise.all([leader.leave(), follower.leave()]);
    await a!.promises.delete(marker);
    await a!.promises.delete(marker.slice(0, marker.lastIndexOf('/')));
  });
});
