/**
 * Nothing the client does blocks the event loop: a 1 ms interval runs through a connection, a
 * partition, a session expiry, a reconnection and a close against a blackholed server. The
 * largest gap between two ticks is reported (printed), not asserted: timings are the machine's.
 */
import { describe, expect, it } from 'vitest';
import {
  openClient,
  proxyTo,
  record,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';

/** A 1 ms interval that records the largest gap between ticks, per phase. */
function ticker() {
  let last = performance.now();
  let ticks = 0;
  let phaseGap = 0;
  const gaps: Record<string, { maxGapMs: number; ticks: number }> = {};
  const timer = setInterval(() => {
    const now = performance.now();
    phaseGap = Math.max(phaseGap, now - last);
    last = now;
    ticks += 1;
  }, 1);
  return {
    /** Closes the current phase: its largest gap and its number of ticks. */
    phase(name: string) {
      gaps[name] = { maxGapMs: Math.round(phaseGap * 10) / 10, ticks };
      phaseGap = 0;
      ticks = 0;
    },
    stop() {
      clearInterval(timer);
      return gaps;
    },
  };
}

describe('the event loop', () => {
  it('keeps turning through connect, partition, expiry, reconnection and a close with no answer', async () => {
    const proxy = await proxyTo();
    const loop = ticker();
    const client = await openClient({ connect: proxy.connectString, sessionTimeoutMs: 2_000 });
    const session = record(client.session$);
    await client.connected(10_000);
    loop.phase('connect');

    const observer = await openClient();
    await observer.connected(10_000);
    const root = await testRoot();
    const node = await client.promises.create(`${root}/mine`, '', { mode: 'ephemeral' });
    // A blackhole: the socket stays open, nothing goes through, new connections are held.
    proxy.pause();
    await waitFor(() => client.state === 'suspended', 20_000);
    // The server expires the session behind it (the client learns it once through).
    await waitFor(async () => (await observer.promises.exists(node.path)) === null, 20_000);
    loop.phase('partition until expiry');

    proxy.resume();
    await waitFor(() => client.state === 'connected' && statesOf(session).length >= 5, 20_000);
    loop.phase('new session');

    // Close while the server is blackholed: closeSession gets no answer.
    proxy.pause();
    const closeStarted = performance.now();
    await client.close();
    const closeMs = Math.round(performance.now() - closeStarted);
    // A few more ticks, so a block at the very end shows up as a gap.
    await new Promise((resolve) => setTimeout(resolve, 20));
    loop.phase('close, blackholed');
    const gaps = loop.stop();

    expect(client.state).toBe('closed');
    for (const [phase, { ticks }] of Object.entries(gaps)) {
      expect({ phase, fired: ticks > 0 }).toEqual({ phase, fired: true });
    }
    // The measurement, for the record (BENCHMARKS.md quotes it).
    console.log(
      `event loop, ${transportName} transport: close took ${closeMs} ms; ${JSON.stringify(gaps)}`,
    );
    proxy.resume();
  });
});
