/**
 * Integration tests of the proxy in front of the run's real server: 4lw and sessions flow,
 * pause stalls ruok, cut drops connections not sessions, long pauses expire.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fourLetterWord, mntr } from './four-letter-words';
import { startProxy, type TcpProxy } from './proxy';
import { type RawSession, startRawSession } from './raw-session';
import { testZooKeeper } from './test-zookeeper';

const { connectString } = await testZooKeeper();

let proxy: TcpProxy;
const sessions: RawSession[] = [];
beforeEach(async () => {
  proxy = await startProxy(connectString);
});
afterEach(async () => {
  for (const session of sessions.splice(0)) session.disconnect();
  await proxy.close();
});
async function session(options: Parameters<typeof startRawSession>[1] = {}) {
  const opened = await startRawSession(proxy.connectString, options);
  sessions.push(opened);
  return opened;
}

describe('startProxy in front of a real server', () => {
  it('forwards four-letter words and sessions', async () => {
    expect(await fourLetterWord(proxy.connectString, 'ruok')).toBe('imok');
    const before = (await mntr(connectString)).zk_num_alive_connections as number;
    const held = await session();
    expect(held.expired).toBe(false);
    expect(proxy.connections).toBe(1);
    expect((await mntr(connectString)).zk_num_alive_connections).toBe(before + 1);
  });

  it('pause() stalls a ruok until resume()', async () => {
    proxy.pause();
    let answer: string | undefined;
    const asking = fourLetterWord(proxy.connectString, 'ruok', 5_000).then((text) => {
      answer = text;
    });
    await sleep(500);
    expect(answer).toBeUndefined();
    proxy.resume();
    await asking;
    expect(answer).toBe('imok');
  });

  it('holdReplies() lets requests reach the server but holds its answers until lifted', async () => {
    proxy.holdReplies();
    let answer: string | undefined;
    const before = (await mntr(connectString)).zk_packets_received as number;
    const asking = fourLetterWord(proxy.connectString, 'srvr', 5_000).then((text) => {
      answer = text;
    });
    // The server gets (and answers) the request meanwhile; the answer stays held.
    await vi.waitUntil(
      async () => ((await mntr(connectString)).zk_packets_received as number) > before,
    );
    expect(answer).toBeUndefined();
    proxy.holdReplies(false);
    await asking;
    expect(answer).toContain('Mode:');
  });

  it('cut() drops the connection, not the session', async () => {
    const held = await session({ sessionTimeoutMs: 10_000 });
    proxy.cut();
    await held.closed;
    expect(proxy.connections).toBe(0);
    const resumed = await session({ sessionId: held.sessionId, password: held.password });
    expect(resumed.expired).toBe(false);
  });

  it('a pause longer than the session timeout expires the session', async () => {
    const held = await session({ sessionTimeoutMs: 1_000 });
    expect(held.timeoutMs).toBe(1_000);
    proxy.pause();
    await sleep(2_500);
    proxy.resume();
    await held.closed; // the server expired it and closed the connection
    const resumed = await session({ sessionId: held.sessionId, password: held.password });
    expect(resumed.expired).toBe(true);
  });

  it('refuse() keeps a cut client from reconnecting until lifted', async () => {
    const held = await session({ sessionTimeoutMs: 10_000 });
    proxy.refuse(true);
    proxy.cut();
    await held.closed;
    await expect(
      session({ sessionId: held.sessionId, password: held.password, connectTimeoutMs: 1_000 }),
    ).rejects.toThrow(/ECONNRESET|closed/);
    proxy.refuse(false);
    const resumed = await session({ sessionId: held.sessionId, password: held.password });
    expect(resumed.expired).toBe(false);
  });
});
