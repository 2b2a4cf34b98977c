/**
 * Integration tests of expireSession against the run's real server: the session becomes
 * invalid, through a proxy, and waiting on a client's session$.
 */
import { BehaviorSubject } from 'rxjs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { expireSession, type SessionCredentials } from './expire-session';
import { startProxy, type TcpProxy } from './proxy';
import { type RawSession, startRawSession } from './raw-session';
import type {} from './vitest-global-setup';

// The server of the test run, from the global setup (typed by its ProvidedContext augmentation).
const { connectString } = inject('zookeeper');

const open: RawSession[] = [];
afterEach(() => {
  for (const session of open.splice(0)) session.disconnect();
});
async function session(hostPort: string, resume?: SessionCredentials) {
  const opened = await startRawSession(hostPort, { sessionTimeoutMs: 10_000, ...resume });
  open.push(opened);
  return opened;
}

describe('expireSession against a real server', () => {
  it('(control) a live session can be resumed from another connection', async () => {
    const original = await session(connectString);
    expect(original.expired).toBe(false);
    expect(original.sessionId).toMatch(/^[0-9a-f]+$/);
    expect(original.password).toMatch(/^[0-9a-f]{32}$/);
    const resumed = await session(connectString, original);
    expect(resumed.expired).toBe(false);
    expect(resumed.sessionId).toBe(original.sessionId);
  });

  it('makes the session invalid: resuming it gets timeOut 0, and its connection is dropped', async () => {
    const original = await session(connectString);
    const started = Date.now();
    await expireSession({ connectString, ...original });
    const expiredAfter = Date.now() - started;
    await original.closed;
    const resumed = await session(connectString, original);
    expect(resumed.expired).toBe(true);
    expect(resumed.response.timeOut).toBe(0);
    expect(resumed.response.sessionId).toBe(0n);
    console.info(`session closed on the server ${expiredAfter} ms after expireSession was called`);
  });

  it('resolves for a session that is already gone', async () => {
    const original = await session(connectString);
    await original.close();
    await expireSession({ connectString, ...original });
  });

  describe('with a client that reconnects through a proxy', () => {
    let proxy: TcpProxy;
    afterEach(() => proxy?.close());

    /** A minimal client: a raw session that resumes itself through the proxy when dropped. */
    async function reconnectingClient(through: string) {
      const session$ = new BehaviorSubject<{ state: string }>({ state: 'connecting' });
      let credentials: SessionCredentials | undefined;
      let stopped = false;
      const connectOnce = async (): Promise<void> => {
        if (stopped) return;
        const current = await session(through, credentials).catch(() => undefined);
        if (!current) {
          setTimeout(connectOnce, 100);
          return;
        }
        if (current.expired) {
          session$.next({ state: 'expired' });
          stopped = true;
          return;
        }
        credentials = { sessionId: current.sessionId, password: current.password };
        session$.next({ state: 'connected' });
        current.closed.then(() => {
          if (stopped) return;
          session$.next({ state: 'disconnected' });
          setTimeout(connectOnce, 50);
        });
      };
      await connectOnce();
      return {
        connectString: through,
        sessionCredentials: () => credentials,
        session$,
        stop: () => {
          stopped = true;
        },
      };
    }

    it("goes through the client's connect string and waits until session$ says 'expired'", async () => {
      proxy = await startProxy(connectString);
      const client = await reconnectingClient(proxy.connectString);
      const states: string[] = [];
      client.session$.subscribe(({ state }) => states.push(state));
      try {
        await expireSession(client, { timeoutMs: 10_000 });
        expect(client.session$.value.state).toBe('expired');
        expect(states).toEqual(['connected', 'disconnected', 'expired']);
      } finally {
        client.stop();
      }
    });

    it("rejects if session$ never says 'expired' (the client cannot reconnect)", async () => {
      proxy = await startProxy(connectString);
      const client = await reconnectingClient(proxy.connectString);
      proxy.refuse(true);
      try {
        await expect(expireSession(client, { connectString, timeoutMs: 1_000 })).rejects.toThrow(
          /did not emit \{ state: 'expired' \} within 1000 ms/,
        );
        expect(client.session$.value.state).toBe('disconnected');
      } finally {
        client.stop();
      }
    });
  });
});
