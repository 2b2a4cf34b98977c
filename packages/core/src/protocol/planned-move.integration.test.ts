/**
 * Planned moves under attack, against a real reconfigurable ensemble: a tree watch through a
 * move misses no change, and the event loop stalls at a move's worst moments — right after the
 * ping it waits for is written, and right before the reattach. A stall the bound absorbs moves
 * the session without a suspension; one that eats the bound is a suspension (the holder hears
 * it before the server could expire the session), then the same session back.
 */
import { Socket } from 'node:net';
import { type Ensemble, startEnsemble } from '@zkrx/testing';
import { filter, firstValueFrom } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  busyWait,
  connectedClient,
  memberOf,
  onCleanup,
  record,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import type { ZkClient } from '../client/client';
import type { ZkClientOptions } from '../client/client-options';
import type { ServerAddress } from '../ensemble/ensemble-config';

/** A ping request frame: length 8, xid -2, opcode 11 (ping). */
const PING = Buffer.from('00000008fffffffe0000000b', 'hex');

/** Stalls the process right after the next ping written on any socket, once. */
function stallAfterNextPing(ms: number): void {
  const write = Socket.prototype.write;
  const restore = () => {
    Socket.prototype.write = write;
  };
  Socket.prototype.write = function patchedWrite(this: Socket, chunk: unknown, ...rest: unknown[]) {
    const result = (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    if (Buffer.isBuffer(chunk) && chunk.equals(PING)) {
      restore();
      busyWait(ms);
    }
    return result;
  } as typeof write;
  onCleanup(restore);
}

/**
 * A client options' logger that runs `at` once, when a debug message starts with `prefix`, and
 * keeps the info messages in `said`.
 */
function atMessage(
  prefix: string,
  at: () => void,
  said: string[] = [],
): Pick<ZkClientOptions, 'logger' | 'logLevel'> {
  let done = false;
  const shown = process.env.DEBUG_ENS ? (message: string) => console.log(message) : () => {};
  const show = (message: string) => {
    said.push(message);
    shown(message);
  };
  return {
    logLevel: 'debug',
    logger: {
      debug: (message: string) => {
        show(message);
        if (done || !message.startsWith(prefix)) return;
        done = true;
        at();
      },
      info: show,
      warn: show,
    },
  };
}

describe.runIf(transportName === 'typescript')('a planned move', () => {
  let ensemble: Ensemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3, reconfig: true });
  });
  afterAll(() => ensemble?.close());

  /**
   * Where a client that must move (not be handed off) connects: the servers that do not lead,
   * the leader left out of what it follows too (`address`). A client on the leader is dropped
   * with every other when the leader is removed — a hand-off, not a move.
   */
  async function offTheLeader() {
    const leader = ensemble.servers[await ensemble.leaderIndex()]!.connectString;
    const connect = ensemble.connectString
      .split(',')
      .filter((host) => host !== leader)
      .join(',');
    return {
      connect,
      address: (server: ServerAddress) =>
        `${server.host}:${server.port}` === leader ? undefined : server,
    };
  }

  /** Replaces the server `client` is on (it moves off before that server stops). */
  async function moveOff(client: ZkClient): Promise<void> {
    await firstValueFrom(client.ensemble$.pipe(filter((view) => view.configVersion !== undefined)));
    await ensemble.replaceServer(await memberOf(ensemble, client));
  }

  it('misses no change of a watched tree, the changes made meanwhile read again', async () => {
    const root = await testRoot(() => ensemble.connectString);
    const { connect, address } = await offTheLeader();
    const client = await connectedClient({
      connect,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 50, address },
    });
    const writer = await connectedClient({ connect: ensemble.connectString });
    const tree = record(client.watchTree(root));
    await waitFor(() => tree.values.length === 1);
    const session = record(client.session$);
    let writing = true;
    const written: string[] = [];
    const writes = (async () => {
      for (let index = 0; writing; index++) {
        const path = `${root}/n${index}`;
        // The writer's own connection may drop (a leader's hand-off): a create whose answer
        // was lost may have been made; the node says.
        await writer.promises.create(path, 'x').catch(() => undefined);
        if (await writer.promises.exists(path)) written.push(path);
      }
    })();
    await moveOff(client);
    await firstValueFrom(client.ensemble$.pipe(filter((view) => view.moves >= 1)));
    writing = false;
    await writes;
    const last = written.at(-1)!;
    await waitFor(() =>
      tree.values.some((event) => event.type === 'created' && event.path === last),
    );
    const created = new Set(
      tree.values.filter((event) => event.type === 'created').map((event) => event.path),
    );
    expect(written.filter((path) => !created.has(path))).toEqual([]);
    expect(tree.values).toContainEqual({ type: 'resync', path: root, reason: 'moved' });
    expect(statesOf(session)).toEqual(['connected']);
  });

  it('moves without a suspension when the process stalls 2 s right after the move’s ping is written', async () => {
    const said: string[] = [];
    const { connect, address } = await offTheLeader();
    const client = await connectedClient({
      connect,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 0, address },
      ...atMessage('planned move: ping sent', () => stallAfterNextPing(2_000), said),
    });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    await moveOff(client);
    await firstValueFrom(client.ensemble$.pipe(filter((view) => view.moves >= 1)));
    expect(statesOf(session)).toEqual(['connected']);
    expect(client.sessionId).toBe(sessionId);
    // The move the stall struck completed: not given up and made again.
    expect(said.filter((message) => message.startsWith('planned move ended'))).toEqual([]);
  });

  it('is a suspension when a stall right before the reattach eats its bound, then the same session', async () => {
    // Session 6 s: the move's bound ends at most 4 s after the ping's answer. A 5.2 s stall
    // there leaves none: the holder must hear `suspended` (the server may expire the session
    // 6 s after it last heard it) — whenever the new server's answer comes.
    let stalled = false;
    const { connect, address } = await offTheLeader();
    const client = await connectedClient({
      connect,
      sessionTimeoutMs: 6_000,
      followEnsemble: { maxDelayMs: 0, address },
      ...atMessage('planned move: reattaching', () => {
        busyWait(5_200);
        stalled = true;
        // Then the process is slow again (a loaded machine) right after the reattach's
        // ConnectRequest is written (it goes out on the next setImmediate; this timer runs
        // before the grace's): the server's answer is in the socket before the grace is looked
        // at. It was asked for after the bound: still a suspension.
        setTimeout(() => busyWait(500), 0);
      }),
    });
    const root = await testRoot(() => ensemble.connectString);
    const node = await client.promises.create(`${root}/mine`, '', { mode: 'ephemeral' });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    const views = record(client.ensemble$);
    const moves = () => views.values.at(-1)?.moves ?? 0;
    await moveOff(client);
    // Replacing the server may return before the move, and its stall, even began: wait for the
    // stall, then for what came of it — a suspension, never a move — then the way back.
    await waitFor(() => stalled, 30_000);
    await waitFor(() => statesOf(session).length >= 2 || moves() > 0, 30_000);
    expect({ states: statesOf(session).slice(0, 2), moves: moves() }).toEqual({
      states: ['connected', 'suspended'],
      moves: 0,
    });
    await waitFor(
      () => statesOf(session).some((state) => state === 'reconnected' || state === 'expired'),
      30_000,
    );
    // Back on the same session, its node kept — unless the reconnection took longer than the
    // 0.8 s the stall left the session (a loaded machine): then the server expired it, after the
    // holder was told.
    if (client.state === 'reconnected') {
      expect(client.sessionId).toBe(sessionId);
      expect((await client.promises.exists(node.path))?.ephemeralOwner).toBe(sessionId);
    } else {
      expect(statesOf(session)).toContain('expired');
    }
  });
});
