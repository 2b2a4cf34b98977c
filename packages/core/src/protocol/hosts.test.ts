import { describe, expect, it } from 'vitest';
import { HostList, parseConnectString } from './hosts';

/** A seeded generator (mulberry32): the same sequence every run. */
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

describe('parseConnectString', () => {
  it('splits servers and the chroot', () => {
    expect(parseConnectString('a:1,b:2/app/x')).toEqual({
      endpoints: [
        { host: 'a', port: 1 },
        { host: 'b', port: 2 },
      ],
      chroot: '/app/x',
    });
    expect(parseConnectString('127.0.0.1:2181/').chroot).toBe('');
    expect(parseConnectString('[::1]:2181').endpoints).toEqual([{ host: '::1', port: 2181 }]);
  });
});

describe('HostList', () => {
  const endpoints = [1, 2, 3].map((port) => ({ host: 'h', port }));

  it('shuffles once, then cycles through every server', () => {
    const hosts = new HostList(endpoints, { firstDelayMs: 50, maxDelayMs: 1_000 }, seeded(7));
    const first = [0, 1, 2].map(() => hosts.next().endpoint.port);
    expect([...first].sort()).toEqual([1, 2, 3]);
    const second = [0, 1, 2].map(() => hosts.next().endpoint.port);
    expect(second).toEqual(first);
  });

  it('tries the next server at once, and backs off (with jitter, doubling, capped) after a whole round failed', () => {
    const hosts = new HostList(endpoints, { firstDelayMs: 50, maxDelayMs: 300 }, seeded(3));
    const delays: number[] = [];
    for (let attempt = 0; attempt < 15; attempt++) {
      delays.push(hosts.next().delayMs);
      hosts.failed();
    }
    // Within a round: no wait. Each new round: between half and all of 50, 100, 200, 300, 300.
    expect(delays.filter((_, index) => index % 3 !== 0)).toEqual(Array(10).fill(0));
    expect(delays[0]).toBe(0);
    const ceilings = [50, 100, 200, 300];
    ceilings.forEach((ceiling, round) => {
      const delay = delays[(round + 1) * 3]!;
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    });
  });

  it('waits a short random time before reconnecting after a lost connection', () => {
    const hosts = new HostList(
      endpoints,
      { firstDelayMs: 50, maxDelayMs: 1_000, reconnectDelayMs: [10, 100] },
      seeded(5),
    );
    hosts.next();
    hosts.succeeded();
    hosts.lost();
    const { delayMs } = hosts.next();
    expect(delayMs).toBeGreaterThanOrEqual(10);
    expect(delayMs).toBeLessThanOrEqual(100);
    // The next server after that one failing is tried at once again.
    hosts.failed();
    expect(hosts.next().delayMs).toBe(0);
  });

  it('starts afresh after a session was established', () => {
    const hosts = new HostList(endpoints.slice(0, 1), undefined, seeded(1));
    hosts.next();
    hosts.failed();
    expect(hosts.next().delayMs).toBeGreaterThan(0);
    hosts.succeeded();
    expect(hosts.next().delayMs).toBe(0);
  });
});
