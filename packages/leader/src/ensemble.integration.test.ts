import { connectedClient, lockPath, sleep } from '@zkrx/test-support';
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { leadership } from './index';

describe('leadership on a 3-server ensemble', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3 });
  });
  afterAll(async () => {
    await ensemble?.close();
  });

  it("survives the leader's server stopping, with the session (onSuspended: 'continue')", async () => {
    const a = await connectedClient({ connect: ensemble.connectString, sessionTimeoutMs: 8_000 });
    const b = await connectedClient({ connect: ensemble.connectString, sessionTimeoutMs: 8_000 });
    const path = lockPath('election');
    const aStates: boolean[] = [];
    const bStates: boolean[] = [];
    leadership(a, path, { id: 'a', onSuspended: 'continue' }).subscribe((leading) =>
      aStates.push(leading),
    );
    await vi.waitUntil(() => aStates.at(-1) === true);
    leadership(b, path, { id: 'b' }).subscribe((leading) => bStates.push(leading));
    const sessionStates: string[] = [];
    a.session$.subscribe(({ state }) => sessionStates.push(state));
    const sessionId = a.sessionId as string;
    const attached = (await ensemble.serverOf(sessionId)) as number;
    await ensemble.stopServer(attached);
    await vi.waitUntil(() => sessionStates.includes('reconnected'), {
      timeout: 15_000,
      interval: 50,
    });
    await sleep(200);
    expect(a.sessionId).toBe(sessionId);
    expect(aStates).toEqual([false, true]);
    expect(bStates).toEqual([false]);
    await ensemble.startServer(attached);
  });
});
