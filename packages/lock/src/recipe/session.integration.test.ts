/**
 * The session view every recipe reads its session through: its done signal fires once, with why
 * the session ended for its holders, under each suspension policy — against a real ZooKeeper,
 * its connection cut by a proxy, its session expired on the server.
 */
import { isZkError, ZkErrorCode } from '@zkrx/core';
import { connectedClient, proxiedClient } from '@zkrx/test-support';
import { expireSession } from '@zkrx/testing';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { type Session, sessionOf } from './session';

/** Resolves the reason once the view's signal aborts. */
function aborted(session: Session): Promise<unknown> {
  return new Promise((resolve) => {
    if (session.signal.aborted) return resolve(session.signal.reason);
    session.signal.addEventListener('abort', () => resolve(session.signal.reason), { once: true });
  });
}

describe('a session view', () => {
  it('is the current session when no id is given, shared by every reader of it', async () => {
    const client = await connectedClient();
    const session = sessionOf(client) as Session;
    expect(session.id).toBe(client.sessionId);
    expect(session.status).toBe('connected');
    expect(session.ended).toBeUndefined();
    expect(sessionOf(client, { id: client.sessionId })).toBe(session);
    expect(sessionOf(client, { onSuspended: 'continue' })).not.toBe(session);
  });

  it('ends session-expired when the server expires the session, its signal a ZkError SessionExpired', async () => {
    const client = await connectedClient();
    const session = sessionOf(client, { onSuspended: 'wait' }) as Session;
    const statuses = firstValueFrom(session.status$.pipe(toArray()));
    const reason = aborted(session);
    await expireSession(client);
    expect(isZkError(await reason, ZkErrorCode.SessionExpired)).toBe(true);
    expect(session.ended).toBe('session-expired');
    // Its connection went first (suspended, reconnecting), then the server said it expired.
    expect((await statuses)[0]).toBe('connected');
    expect(session.status).toBe('ended');
    // The client moved on to a new session: its view is another one.
    await client.connected();
    const next = sessionOf(client) as Session;
    expect(next.id).not.toBe(session.id);
    expect(next.status).toBe('connected');
  });

  it("ends 'suspended' at the first lost connection under release; waits it out under wait", async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 10_000 });
    const released = sessionOf(client, { onSuspended: 'release' }) as Session;
    const waiting = sessionOf(client, { onSuspended: 'wait' }) as Session;
    const statuses: string[] = [];
    waiting.status$.subscribe((status) => statuses.push(status));
    const reason = aborted(released);
    proxy.cut();
    expect(isZkError(await reason, ZkErrorCode.ConnectionLoss)).toBe(true);
    expect(released.ended).toBe('suspended');
    expect(waiting.status).toBe('suspended');
    expect(waiting.suspensions).toBe(1);
    await vi.waitUntil(() => waiting.status === 'connected', { timeout: 10_000 });
    expect(statuses).toEqual(['connected', 'suspended', 'connected']);
    expect(waiting.ended).toBeUndefined();
    expect(waiting.signal.aborted).toBe(false);
    // A view asked for now, of the same session under release, is a new one: connected.
    expect(sessionOf(client, { onSuspended: 'release' })?.status).toBe('connected');
  });

  it("under continue, ends 'suspended' before the server could expire the session, unheard", async () => {
    const { client, proxy } = await proxiedClient({ sessionTimeoutMs: 4_000 });
    const session = sessionOf(client, { onSuspended: 'continue' }) as Session;
    const reason = aborted(session);
    // The server hears the client, the client hears nothing: its session lives on, unknown to it.
    proxy.holdReplies(true);
    expect(isZkError(await reason, ZkErrorCode.ConnectionLoss)).toBe(true);
    expect(session.ended).toBe('suspended');
    expect(client.state).toBe('suspended');
    proxy.holdReplies(false);
  });

  it('ends closed when the client closes, before the session goes', async () => {
    const client = await connectedClient();
    const session = sessionOf(client) as Session;
    const seen: string[] = [];
    session.status$.subscribe({ complete: () => seen.push(`${session.ended} ${client.state}`) });
    await client.close();
    expect(seen).toEqual(['closed closed']);
    expect(isZkError(session.signal.reason, ZkErrorCode.ClientClosed)).toBe(true);
  });

  it('is born ended when asked for a session that is over', async () => {
    const client = await connectedClient();
    const first = client.sessionId as string;
    await expireSession(client);
    await client.connected();
    const old = sessionOf(client, { id: first, onSuspended: 'wait' }) as Session;
    expect(old.ended).toBe('session-expired');
    expect(old.signal.aborted).toBe(true);
    expect(old.status).toBe('ended');
    expect(await firstValueFrom(old.status$.pipe(toArray()))).toEqual([]);
  });
});
