import {
  connectedClient,
  lockPath,
  recordTelemetry,
  type TelemetryRecorder,
} from '@zkrx/test-support';
import { NEVER } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinElection, whileLeader } from './index';

let telemetry: TelemetryRecorder;
beforeAll(() => {
  telemetry = recordTelemetry();
});
afterAll(async () => {
  await telemetry.stop();
});

describe('leader telemetry', () => {
  it('counts a term of joinElection (elected, then ended) and is-leader back to 0', async () => {
    const client = await connectedClient();
    const path = lockPath('election');
    const name = `election-${process.pid}-elect`;
    const election = joinElection(client, path, { name });
    await election.joined;
    await election.whenLeader();
    const match = {
      'zkrx.lock.kind': 'leader-latch',
      'zkrx.lock.name': name,
      'zkrx.lock.path': path,
    };
    expect(await telemetry.total('zkrx.leader.is_leader', match)).toBe(1);
    expect(
      await telemetry.total('zkrx.leader.transitions', {
        ...match,
        'zkrx.leader.transition': 'elected',
      }),
    ).toBe(1);
    await election.leave();
    expect(await telemetry.total('zkrx.leader.is_leader', match)).toBe(0);
    expect(
      await telemetry.total('zkrx.leader.transitions', {
        ...match,
        'zkrx.leader.transition': 'ended',
      }),
    ).toBe(1);
    // The election's queue is a lock like any other.
    expect(
      await telemetry.total('zkrx.lock.acquire.duration', {
        ...match,
        'zkrx.lock.outcome': 'acquired',
      }),
    ).toBe(1);
  });

  it('counts a term of whileLeader, ended when the work is unsubscribed', async () => {
    const client = await connectedClient();
    const name = `election-${process.pid}-while`;
    let started!: () => void;
    const working = new Promise<void>((resolve) => {
      started = resolve;
    });
    const subscription = whileLeader(
      client,
      lockPath('election'),
      () => {
        started();
        return NEVER;
      },
      { name },
    ).subscribe();
    await working;
    const match = { 'zkrx.lock.kind': 'leader-selector', 'zkrx.lock.name': name };
    expect(await telemetry.total('zkrx.leader.is_leader', match)).toBe(1);
    subscription.unsubscribe();
    expect(await telemetry.total('zkrx.leader.is_leader', match)).toBe(0);
    expect(await telemetry.total('zkrx.leader.transitions', match)).toBe(2);
  });

  it('leaves the path out unless the election is named', async () => {
    const client = await connectedClient();
    const election = joinElection(client, lockPath('election'));
    await election.joined;
    await election.whenLeader();
    await election.leave();
    const points = await telemetry.points('zkrx.leader.transitions');
    const unnamed = points.filter((point) => point.attributes['zkrx.lock.name'] === undefined);
    expect(unnamed.length).toBeGreaterThan(0);
    for (const point of unnamed) expect(point.attributes['zkrx.lock.path']).toBeUndefined();
  });
});
