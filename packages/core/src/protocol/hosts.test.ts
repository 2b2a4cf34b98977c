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
  const endpoints = [1, 2, 3].map((port) => ({ host: '10.0.0.1', port }));
  const noBackoff = { firstDelayMs: 50, maxDelayMs: 1_000 };

  it('shuffles once, then cycles through every server', async () => {
    const hosts = new HostList(endpoints, noBackoff, seeded(7));
    const first: number[] = [];
    for (let index = 0; index < 3; index++) first.push((await hosts.next()).endpoint.port);
    expect([...first].sort()).toEqual([1, 2, 3]);
    const second: number[] = [];
    for (let index = 0; index < 3; index++) second.push((await hosts.next()).endpoint.port);
    expect(second).toEqual(first);
  });

  it('tries the next server at once, and backs off (with jitter, doubling, capped) after a whole round failed', async () => {
    const hosts = new HostList(endpoints, { firstDelayMs: 50, maxDelayMs: 300 }, seeded(3));
    const delays: number[] = [];
    for (let attempt = 0; attempt < 15; attempt++) {
      delays.push((await hosts.next()).delayMs);
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

  it('waits a short random time before reconnecting after a lost connection', async () => {
    const hosts = new HostList(
      endpoints,
      { firstDelayMs: 50, maxDelayMs: 1_000, reconnectDelayMs: [10, 100] },
      seeded(5),
    );
    await hosts.next();
    hosts.succeeded();
    hosts.lost();
    const { delayMs } = await hosts.next();
    expect(delayMs).toBeGreaterThanOrEqual(10);
    expect(delayMs).toBeLessThanOrEqual(100);
    // The next server after that one failing is tried at once again.
    hosts.failed();
    expect((await hosts.next()).delayMs).toBe(0);
  });

  it('starts afresh after a session was established', async () => {
    const hosts = new HostList(endpoints.slice(0, 1), undefined, seeded(1));
    await hosts.next();
    hosts.failed();
    expect((await hosts.next()).delayMs).toBeGreaterThan(0);
    hosts.succeeded();
    expect((await hosts.next()).delayMs).toBe(0);
  });

  it('tries every address of every host name, shuffled, and resolves the names again each round', async () => {
    const answers: Record<string, string[][]> = {
      'zk-a': [
        ['10.0.1.1', '10.0.1.2', '10.0.1.3'],
        ['10.0.1.4', '10.0.1.1'],
      ],
      'zk-b': [['10.0.2.1'], ['10.0.2.1']],
    };
    const asked: string[] = [];
    const lookup = (name: string) => {
      asked.push(name);
      return answers[name]!.shift()!;
    };
    const hosts = new HostList(
      [
        { host: 'zk-a', port: 2181 },
        { host: 'zk-b', port: 2182 },
        { host: '10.0.3.1', port: 2183 },
      ],
      noBackoff,
      seeded(11),
      lookup,
    );
    const round = async (size: number) => {
      const tried: string[] = [];
      for (let index = 0; index < size; index++) {
        const { endpoint } = await hosts.next();
        tried.push(`${endpoint.name ?? '-'} ${endpoint.host}:${endpoint.port}`);
        hosts.failed();
      }
      return tried;
    };
    const first = await round(5);
    expect([...first].sort()).toEqual([
      '- 10.0.3.1:2183',
      'zk-a 10.0.1.1:2181',
      'zk-a 10.0.1.2:2181',
      'zk-a 10.0.1.3:2181',
      'zk-b 10.0.2.1:2182',
    ]);
    // One host's addresses come one after the other.
    const ofA = first.map((entry, index) => (entry.startsWith('zk-a') ? index : -1));
    const positions = ofA.filter((index) => index >= 0);
    expect(positions[2]! - positions[0]!).toBe(2);
    const second = await round(4);
    expect([...second].sort()).toEqual([
      '- 10.0.3.1:2183',
      'zk-a 10.0.1.1:2181',
      'zk-a 10.0.1.4:2181',
      'zk-b 10.0.2.1:2182',
    ]);
    expect(asked.sort()).toEqual(['zk-a', 'zk-a', 'zk-b', 'zk-b']);
  });

  it("keeps a name that does not resolve, so the attempt fails with the resolver's error", async () => {
    const hosts = new HostList([{ host: 'nowhere', port: 2181 }], noBackoff, seeded(2), () => {
      throw new Error('ENOTFOUND');
    });
    expect((await hosts.next()).endpoint).toEqual({ host: 'nowhere', port: 2181 });
  });

  it('skips a name whose lookup hangs, for the round, without holding up the hosts after it', async () => {
    const asked: string[] = [];
    const hosts = new HostList(
      [
        { host: 'hung.example', port: 2181 },
        { host: '10.0.0.9', port: 2182 },
      ],
      noBackoff,
      () => 0.999, // no shuffle: the hung name comes first
      (name) => {
        asked.push(name);
        return new Promise<never>(() => {});
      },
      () => 20,
    );
    const first = await hosts.next();
    expect(first.endpoint).toEqual({ host: '10.0.0.9', port: 2182 });
    hosts.failed();
    // The next round asks the name again (and skips it again): every attempt failed, a backoff.
    const second = await hosts.next();
    expect(second.endpoint).toEqual({ host: '10.0.0.9', port: 2182 });
    expect(second.delayMs).toBeGreaterThan(0);
    expect(asked).toEqual(['hung.example', 'hung.example']);
  });
});
