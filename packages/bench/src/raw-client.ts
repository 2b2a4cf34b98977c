/**
 * The raw calls of the floor and pipelined scenarios, behind one shape for each client measured:
 * zkrx (`client.promises`, as its users call it) and node-zookeeper-client (its callbacks, as its
 * users call it). Both go through the same harness code, so the harness's own cost is the same.
 */
import type { ZkClient } from '@zkrx/core';
import nodeZookeeperClient from 'node-zookeeper-client';
import type { ImplName } from './options';

/** One session's raw calls. */
export interface RawClient {
  /** The JSON line's `impl`. */
  readonly impl: string;
  /**
   * getData of `path` (no watch); calls `done(ticket)` when the reply came, `done(ticket, error)`
   * when it failed. A callback, not a promise: the harness adds nothing per call that one client
   * pays and the other does not.
   */
  get(path: string, ticket: number, done: (ticket: number, error?: unknown) => void): void;
  /** Creates an empty ephemeral sequential node under `prefix`; resolves its path. */
  createEphemeralSequential(prefix: string): Promise<string>;
  /** Deletes `path` (any version). */
  delete(path: string): Promise<void>;
  /** The children of `path` (no watch). */
  children(path: string): Promise<string[]>;
  /** Ends the session; resolves once it is closed (or after a bound). */
  close(): Promise<void>;
}

/** zkrx's promises, on a session the run opened. */
export function zkrxRawClient(client: ZkClient, impl: string): RawClient {
  return {
    impl,
    get(path, ticket, done) {
      client.promises.get(path).then(
        () => done(ticket),
        (error: unknown) => done(ticket, error),
      );
    },
    async createEphemeralSequential(prefix) {
      const created = await client.promises.create(prefix, undefined, {
        mode: 'ephemeral',
        sequential: true,
      });
      return created.path;
    },
    async delete(path) {
      await client.promises.delete(path);
    },
    children: (path) => client.promises.children(path),
    close: () => client.close(),
  };
}

/** The npm package's impl name in the JSON line. */
export const NODE_ZOOKEEPER_CLIENT: ImplName = 'node-zookeeper-client';

/**
 * A node-zookeeper-client session (its defaults, but the run's 10 s session timeout), connected.
 * Rejects when it is not connected within `timeoutMs`.
 */
export async function connectNodeZookeeperClient(
  connect: string,
  sessionTimeoutMs: number,
  timeoutMs: number,
): Promise<RawClient> {
  const client = nodeZookeeperClient.createClient(connect, { sessionTimeout: sessionTimeoutMs });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`node-zookeeper-client: not connected to ${connect} in ${timeoutMs} ms`));
    }, timeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  const settle =
    <T>(resolve: (value: T) => void, reject: (error: unknown) => void) =>
    (error: unknown, value: T) => {
      if (error) reject(error);
      else resolve(value);
    };
  return {
    impl: NODE_ZOOKEEPER_CLIENT,
    get(path, ticket, done) {
      client.getData(path, (error) => {
        if (error) done(ticket, error);
        else done(ticket);
      });
    },
    createEphemeralSequential: (prefix) =>
      new Promise((resolve, reject) =>
        client.create(
          prefix,
          nodeZookeeperClient.CreateMode.EPHEMERAL_SEQUENTIAL,
          settle(resolve, reject),
        ),
      ),
    delete: (path) =>
      new Promise((resolve, reject) => client.remove(path, -1, settle(resolve, reject))),
    children: (path) =>
      new Promise((resolve, reject) => client.getChildren(path, settle(resolve, reject))),
    close: () =>
      new Promise<void>((resolve) => {
        // It reports `disconnected` once the server closed the session (or the socket went).
        const timer = setTimeout(resolve, 5_000);
        client.once('disconnected', () => {
          clearTimeout(timer);
          resolve();
        });
        client.close();
      }),
  };
}
