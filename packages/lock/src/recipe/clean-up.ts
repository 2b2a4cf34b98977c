/**
 * Leaving nothing behind: the one place a node of ours is removed (deleted, or handed over to a
 * waiter of our own client), and the removal of the node a create with an unknown outcome may
 * have made, and of a lock path an acquisition made and never used.
 */
import { isReadWriteState, isZkError, joinPath, op, type ZkClient, ZkErrorCode } from '@zkrx/core';
import type { Subscription } from 'rxjs';
import { type LocalNode, localNodes } from './local-hand-off';

const ignore = () => {};

/**
 * Removes every child of `path` whose name starts with `prefix`: the node a create may have
 * made when its outcome was unknown (Curator's protected clean-up). The prefix holds a UUID
 * made for that one create, so only that create can have made such a node. Retried across
 * disconnections while the session that sent the create lives (the node, if any, is an
 * ephemeral of that session: it blocks the queue until removed or the session ends).
 */
export function removeOrphan(
  client: ZkClient,
  path: string,
  prefix: string,
  sessionId: string | undefined,
): Promise<void> {
  const work = (async () => {
    let owner = sessionId;
    for (;;) {
      if (client.isClosed) return;
      try {
        await client.connected();
      } catch {
        if (client.isClosed) return;
        continue;
      }
      // A create sent before the first session existed went out on the first session.
      owner ??= client.sessionId;
      if (client.sessionId !== owner) return;
      try {
        const children = await client.promises.children(path);
        for (const name of children) {
          if (name.startsWith(prefix)) await deleteQuietly(client, joinPath(path, name));
        }
        return;
      } catch (error) {
        if (!isZkError(error) || !error.isRetryable) return;
      }
    }
  })();
  client.track(work);
  return work;
}

/**
 * Removes a node of ours for as long as the session that owns it lives: retried across
 * disconnections (an orphan of a live session would block the queue), done once the node, the
 * session or the client is gone. The delete is sent at once when connected, so whatever this
 * client sends next reaches the server after it. Tracked, so `client.close()` waits for it.
 *
 * A node of this client's queue that held first, with a waiter of this client right behind it,
 * is removed by `multi(check(waiter), delete(node))` instead, which hands the lock over to that
 * waiter (see `local-hand-off.ts`); its local waiter, if any, hears of the removal either way.
 *
 * Resolves once the node is gone for everyone: the server removed it (its reply read: a read by
 * any session after that sees it gone), found it gone, or its session ended — or may have ended:
 * while the connection is down, once the servers have not heard from the session for a whole
 * session timeout (`client.sessionSurvivesMs` run out), when they expire it with its ephemeral
 * nodes. Retries go on after that, in case the session lived after all. Never rejects on a
 * ZooKeeper error.
 */
export function removeOwnNode(client: ZkClient, node: string, sessionId: string): Promise<void> {
  const local = localNodes(client).get(node);
  const waiter = local?.startRemoval();
  // Callbacks, not an async loop: every release goes this way, and each await is a promise more.
  const work = new Promise<void>((resolve, reject) => {
    let removed = false;
    /** Waits for the session's servers-may-expire point, only while the connection is down. */
    let sessionClock: ReturnType<typeof setTimeout> | undefined;
    /** The connection dropping with the delete in flight starts the clock too (see below). */
    let states: Subscription | undefined;
    const settle = () => {
      removed = true;
      clearTimeout(sessionClock);
      states?.unsubscribe();
    };
    const done = () => {
      settle();
      local?.removed();
      resolve();
    };
    const over = () => client.isClosed || client.sessionId !== sessionId;
    /**
     * The connection is down: resolve (the retries go on) once the servers may have expired the
     * session — checked again when the clock says so, for a reconnection may have renewed it.
     */
    const watchSessionClock = (): void => {
      if (removed || sessionClock !== undefined) return;
      const left = over() ? undefined : client.sessionSurvivesMs;
      if (left === undefined || left <= 0) return resolve();
      sessionClock = setTimeout(() => {
        sessionClock = undefined;
        if (!isReadWriteState(client.state)) watchSessionClock();
      }, left);
      sessionClock.unref?.();
    };
    const remove = (): void => {
      if (!isReadWriteState(client.state)) watchSessionClock();
      client.promises.delete(node).then(done, (error: unknown) => {
        // Gone already (or with its session), or a failure no retry mends: done. Only a lost
        // connection is retried, once connected again, while the session that owns it lives.
        if (
          !isZkError(error) ||
          !error.isRetryable ||
          isZkError(
            error,
            ZkErrorCode.NoNode,
            ZkErrorCode.ClientClosed,
            ZkErrorCode.SessionExpired,
          ) ||
          over()
        ) {
          return done();
        }
        watchSessionClock();
        client
          .connected()
          .catch(ignore)
          .then(() => (over() ? done() : remove()));
      });
    };
    // A delete in flight when the connection drops is retried by the client itself (its retry
    // policy: up to 30 s by default) before it fails here: the clock starts on the drop, not on
    // that failure, or the release would wait the retries out instead of the session timeout.
    states = client.session$.subscribe(({ state }) => {
      if (!isReadWriteState(state)) watchSessionClock();
    });
    if (!waiter) return remove();
    // The hand-off (its safety argument: `local-hand-off.ts`), sent now, before anything this
    // client sends next. All or nothing: applied, the waiter holds; not applied — the waiter's
    // node is gone (its check failed), ours is, the session ended, or the connection was lost
    // with it in flight (applied or not) — the node is deleted plainly, and the waiter lists.
    client.promises.multi([op.check(waiter.node), op.delete(node)]).then(
      () => {
        settle();
        (local as LocalNode).handedTo(waiter);
        resolve();
      },
      (error: unknown) => {
        if (isZkError(error)) return remove();
        settle();
        local?.removed();
        reject(error);
      },
    );
  });
  client.track(work);
  return work;
}

/**
 * Removes the lock path `path` if it is still the container this acquisition made (its data is
 * `mark`, a UUID made for that one create) and no node ever went into it: the acquisition gave up
 * before its node went in. ZooKeeper's reaper removes only containers whose child count once
 * moved (`cversion` > 0), so such a container would stay for good — one znode per path given up
 * on that way. The mark also recognises a path whose create's reply was lost.
 *
 * Safe because it does only what the reaper does at any moment: it deletes an empty container,
 * and every recipe already copes with its lock path vanishing (a create that meets NoNode makes
 * the path again; `container-reaped.integration.test.ts`). The mark names the very znode we
 * made (a path made again by anyone else carries other data), `cversion` 0 says no node was ever
 * in it, and the delete fails with NotEmpty if a node went in since the read (one that came and
 * went since leaves an empty container: the reaper's to delete too, so deleting it is as safe).
 * Retried across disconnections until done or the client closes; tracked, so `close()` waits.
 */
export function removeUnusedContainer(client: ZkClient, path: string, mark: string): Promise<void> {
  const work = (async () => {
    for (;;) {
      if (client.isClosed) return;
      try {
        await client.connected();
        const found = await client.promises.get(path);
        const { stat } = found;
        if (found.data.toString('utf8') !== mark || stat.cversion > 0 || stat.numChildren > 0)
          return;
        await client.promises.delete(path, stat.version);
        return;
      } catch (error) {
        if (client.isClosed || !isZkError(error) || !error.isRetryable) return;
      }
    }
  })();
  client.track(work);
  return work;
}

/** Deletes a node; a node already gone (or a closed client, whose session took it) is fine. */
export async function deleteQuietly(client: ZkClient, node: string): Promise<void> {
  try {
    await client.promises.delete(node);
  } catch (error) {
    if (isZkError(error, ZkErrorCode.NoNode, ZkErrorCode.ClientClosed, ZkErrorCode.SessionExpired))
      return;
    throw error;
  }
}
