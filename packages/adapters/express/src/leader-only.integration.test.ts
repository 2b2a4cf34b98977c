/**
 * leaderOnly on real Express apps (5 and 4): two instances, each with its own session, one
 * election; exactly one lets requests through, and leadership moves when its client closes.
 */

import { acquireSemaphore } from '@zkrx/lock';
import { childrenOf, connectedClient, connectedClients, lockPath, sleep } from '@zkrx/test-support';
import type { RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { type Flavour, flavours } from '../test/apps';
import { type LeaderOnlyHandler, type LeaderOnlyOptions, leaderOnly } from './index';

/** An app with `POST /rebuild` behind `gate`, answering which instance ran it. */
function guardedApp(flavour: Flavour, gate: LeaderOnlyHandler, who: string) {
  const app = flavour.create();
  const handler: RequestHandler = (_request, response) => {
    response.json({ ranOn: who });
  };
  app.post('/rebuild', gate, handler);
  return app;
}

describe.each(flavours)('leaderOnly on $name', (flavour) => {
  it('lets exactly one of two instances through, and moves when the leader closes its client', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const gateA = leaderOnly({ client: a!, path, id: 'a' });
    await vi.waitUntil(() => gateA.isLeader);
    const gateB = leaderOnly({ client: b!, path, id: 'b' });
    const appA = guardedApp(flavour, gateA, 'a');
    const appB = guardedApp(flavour, gateB, 'b');

    const [fromA, fromB] = await Promise.all([
      request(appA).post('/rebuild'),
      request(appB).post('/rebuild'),
    ]);
    expect(fromA.status).toBe(200);
    expect(fromA.body).toEqual({ ranOn: 'a' });
    expect(fromB.status).toBe(503);
    expect(fromB.headers['retry-after']).toBe('5');
    expect(fromB.body).toMatchObject({ error: 'not-leader' });
    expect(gateB.isLeader).toBe(false);
    expect(gateB.signal.aborted).toBe(true);
    expect(gateA.signal.aborted).toBe(false);

    const termOfA = gateA.signal;
    await a!.close();
    expect(termOfA.aborted).toBe(true);
    await vi.waitUntil(() => gateB.isLeader, { timeout: 5_000 });
    expect((await request(appB).post('/rebuild')).body).toEqual({ ranOn: 'b' });
    expect((await request(appA).post('/rebuild')).status).toBe(503);
    expect(gateA.isLeader).toBe(false);
  });

  it('close() leaves the election: the other instance leads within a round trip', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const gateA = leaderOnly({ client: a!, path, id: 'a', retryAfterSeconds: 1 });
    await vi.waitUntil(() => gateA.isLeader);
    const gateB = leaderOnly({ client: b!, path, id: 'b' });
    const seen: boolean[] = [];
    gateB.leadership$.subscribe((leading) => seen.push(leading));
    await gateA.leave();
    await vi.waitUntil(() => gateB.isLeader);
    expect(seen).toEqual([false, true]);
    const fromA = await request(guardedApp(flavour, gateA, 'a')).post('/rebuild');
    expect(fromA.status).toBe(503);
    expect(fromA.headers['retry-after']).toBe('1');
    await gateB.leave();
  });

  it('close() waits for the requests it let through before handing leadership over', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const gateA = leaderOnly({ client: a!, path, id: 'a' });
    await vi.waitUntil(() => gateA.isLeader);
    const gateB = leaderOnly({ client: b!, path, id: 'b' });
    await vi.waitUntil(async () => (await childrenOf(a!, path)).length === 2);
    let finish = () => {};
    let signalSeen: AbortSignal | undefined;
    const appA = flavour.create();
    appA.post('/slow', gateA, (_request, response) => {
      signalSeen = gateA.signal;
      new Promise<void>((resolve) => {
        finish = resolve;
      }).then(() => response.json({ ranOn: 'a' }));
    });
    const slow = request(appA)
      .post('/slow')
      .then((response) => response);
    await vi.waitUntil(() => signalSeen !== undefined);

    const closing = gateA.leave();
    // Asked to finish, and nobody else leads while the request still runs.
    expect(signalSeen!.aborted).toBe(true);
    expect((await request(appA).post('/slow')).status).toBe(503);
    await sleep(300);
    expect(gateB.isLeader).toBe(false);

    finish();
    expect((await slow).body).toEqual({ ranOn: 'a' });
    await closing;
    await vi.waitUntil(() => gateB.isLeader);
    await gateB.leave();
  });

  it('onNotLeader answers instead of the 503', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    const gateA = leaderOnly({ client: a!, path, id: 'a' });
    await vi.waitUntil(() => gateA.isLeader);
    const gateB = leaderOnly({
      client: b!,
      path,
      id: 'b',
      onNotLeader: (_request, response) => {
        response.status(307).set('Location', 'http://leader.internal/rebuild').end();
      },
    });
    const response = await request(guardedApp(flavour, gateB, 'b')).post('/rebuild');
    expect(response.status).toBe(307);
    expect(response.headers.location).toBe('http://leader.internal/rebuild');
  });
});

describe('leaderOnly when the election fails', () => {
  it('stands again a second later, and leads once it can', async () => {
    const [a, b] = await connectedClients(2);
    const path = lockPath('election');
    // A semaphore on the path: the election there fails (LockConflictError) while it holds.
    const semaphore = await acquireSemaphore(a!, path, { leases: 1 });
    // Nothing else changes the path's children meanwhile: the semaphore holds, idle.
    const childChanges = async () => (await a!.promises.exists(path))!.cversion;
    const before = await childChanges();
    const gate = leaderOnly({ client: b!, path, id: 'b' });
    // The first attempt queued its node, saw the semaphore and took its node back: it failed.
    await vi.waitUntil(async () => (await childChanges()) >= before + 2);
    expect(gate.isLeader).toBe(false);
    await semaphore.release();
    for (const name of await childrenOf(a!, path)) {
      await a!.promises.delete(`${path}/${name}`).catch(() => {});
    }
    await vi.waitUntil(() => gate.isLeader, { timeout: 10_000 });
    await gate.leave();
    expect(gate.isLeader).toBe(false);
  });
});

describe('leaderOnly options', () => {
  it('are checked when the middleware is created, with errors naming the option', async () => {
    const client = await connectedClient();
    const path = lockPath('election');
    const cases: [unknown, RegExp][] = [
      [undefined, /leaderOnly: expected an options object/],
      [{ path }, /leaderOnly: client must be a ZkClient/],
      [{ client }, /leaderOnly: Invalid path undefined: must be a string/],
      [{ client, path: 'relative' }, /leaderOnly: Invalid path "relative": must start with "\/"/],
      [{ client, path: '/' }, /leaderOnly: Invalid lock path "\/": the root cannot be a lock/],
      [{ client, path, id: '' }, /id must be a non-empty string/],
      [{ client, path, retryAfterSeconds: -1 }, /retryAfterSeconds must be a whole number/],
      [{ client, path, onNotLeader: 503 }, /onNotLeader must be a function/],
    ];
    for (const [options, message] of cases) {
      expect(() => leaderOnly(options as LeaderOnlyOptions), String(message)).toThrow(message);
    }
  });
});
