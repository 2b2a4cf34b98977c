/**
 * `zkrx ensemble` against a real reconfigurable ensemble: the configuration, each server's mode
 * and clients, which server each session under a path is on, and `--watch --json` seeing a
 * replacement (a configuration change, sessions moving).
 */
import { createClient, type ZkClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { type Ensemble, startEnsemble, uniqueRoot } from '@zkrx/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeIo } from '../test/fake-io';
import { run } from './index';

describe('zkrx ensemble', () => {
  let ensemble: Ensemble;
  const clients: ZkClient[] = [];
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await ensemble?.close();
  });

  async function client(): Promise<ZkClient> {
    const made = createClient({
      connect: ensemble.connectString,
      followEnsemble: { maxDelayMs: 50 },
    });
    clients.push(made);
    await made.connected();
    return made;
  }

  it('shows the configuration, modes and clients, and the server of each session under a path', async () => {
    const holder = await client();
    const root = uniqueRoot('cli-ensemble');
    await acquire(holder, `${root}/orders`);
    const io = fakeIo();
    const code = await run(['ensemble', root, '--connect', ensemble.connectString], io);
    expect({ code, err: io.err() }).toEqual({ code: 0, err: '' });
    const out = io.out();
    expect(out).toMatch(/^Configuration version [0-9a-f]+\n/);
    for (const server of ensemble.servers) {
      expect(out).toMatch(
        new RegExp(
          `\\n  ${server.serverId}\\s+participant\\s+${server.connectString}\\s+(leader|follower)\\s+\\d+`,
        ),
      );
    }
    const on = (await ensemble.serverOf(holder.sessionId!))! + 1;
    expect(out).toContain(`0x${holder.sessionId}  on server ${on}  ${root}/orders/`);

    const json = fakeIo();
    expect(await run(['ensemble', root, '--json', '--connect', ensemble.connectString], json)).toBe(
      0,
    );
    const [state] = json.jsonLines();
    expect(state.servers.map((server: { serverId: number }) => server.serverId)).toEqual([1, 2, 3]);
    expect(
      state.servers.filter((server: { mode: string }) => server.mode === 'leader'),
    ).toHaveLength(1);
    expect(state.sessions).toEqual([
      {
        sessionId: holder.sessionId,
        serverId: on,
        nodes: [expect.stringContaining(`${root}/orders/`)],
      },
    ]);
  });

  it('--watch --json: a replacement seen as a new configuration and a session on a new server', async () => {
    const holder = await client();
    const root = uniqueRoot('cli-ensemble');
    await acquire(holder, `${root}/orders`);
    const before = (await ensemble.serverOf(holder.sessionId!))!;
    const io = fakeIo();
    const watching = run(
      ['ensemble', root, '--watch', '--json', '--connect', ensemble.connectString],
      io,
    );
    await vi.waitUntil(() => io.jsonLines().length > 0, { timeout: 10_000 });
    const first = io.jsonLines()[0];
    const added = await ensemble.replaceServer(before);
    await vi.waitUntil(
      () =>
        io
          .jsonLines()
          .some(
            (line) =>
              line.configVersion !== first.configVersion &&
              line.sessions?.[0]?.serverId !== undefined &&
              line.sessions[0].serverId !== before + 1,
          ),
      { timeout: 30_000, interval: 100 },
    );
    const last = io.jsonLines().at(-1);
    expect(last.servers.map((server: { serverId: number }) => server.serverId)).toContain(
      added.serverId,
    );
    expect(last.servers.map((server: { serverId: number }) => server.serverId)).not.toContain(
      before + 1,
    );
    io.interrupt();
    expect(await watching).toBe(0);
  });

  it('--watch without a terminal needs --json', async () => {
    const io = fakeIo();
    expect(await run(['ensemble', '--watch', '--connect', ensemble.connectString], io)).toBe(2);
    expect(io.err()).toMatch(/--watch draws on a terminal/);
  });
});
