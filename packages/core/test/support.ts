/**
 * Test support for @zkrx/core's integration tests: clients, proxies and test roots that are
 * closed or removed after each test, stream recorders, and small waiting helpers.
 */
import { connect, createServer, type Socket } from 'node:net';
import {
  type Ensemble,
  fourLetterWord,
  startProxy,
  type TcpProxy,
  testZooKeeper,
  uniqueRoot,
} from '@zkrx/testing';
import type { Observable, Subscription } from 'rxjs';
import { afterAll, afterEach, expect, vi } from 'vitest';
import {
  type Acl,
  createClient,
  type SessionEvent,
  type SessionState,
  type Transport,
  type ZkClient,
  type ZkClientOptions,
  ZkError,
} from '../src/index';
import { NativeSession, nativeTransport } from '../src/native/native-transport';
import { ProtocolSession } from '../src/protocol/session';
import type { SessionHandle } from '../src/transport-spi';

/**
 * The transport the conformance suite runs on: the default (TypeScript) one, or the native one
 * when `ZKRX_TRANSPORT=native` (core's `integration-native` vitest project).
 */
export const transportName: 'typescript' | 'native' =
  process.env.ZKRX_TRANSPORT === 'native' ? 'native' : 'typescript';

/** The transport of clients made by {@link openClient}. */
export function testTransport(): Transport | undefined {
  return transportName === 'native' ? nativeTransport() : undefined;
}

/** The session class of the transport under test, to spy on its calls. */
export function sessionPrototype(): SessionHandle {
  return (
    transportName === 'native' ? NativeSession.prototype : ProtocolSession.prototype
  ) as SessionHandle;
}

const clients = new Set<ZkClient>();
const proxies = new Set<TcpProxy>();
const cleanups: Array<() => unknown> = [];
/** A root's server, read at clean-up (an ensemble's members may change meanwhile). */
const roots: Array<{ root: string; connectString: string | (() => string) }> = [];
const removedRoots: Array<{ root: string; connectString: string }> = [];

afterEach(async () => {
  // Clients first (their ephemeral nodes go), then proxies and servers, then the test roots.
  // A client behind one of our proxies would block ~1.5 s in the C client's close waiting for
  // a reply the in-process proxy cannot forward meanwhile: cut it off first (its session then
  // ends on the server by timeout; the root's removal takes its ephemeral nodes).
  for (const proxy of proxies) {
    proxy.refuse(true);
    proxy.cut();
  }
  proxies.clear();
  const open = [...clients];
  clients.clear();
  await Promise.all(open.map((client) => client.close()));
  while (cleanups.length > 0) await cleanups.pop()?.();
  const owned = roots.splice(0);
  for (const { root, connectString: where } of owned) {
    const connectString = typeof where === 'function' ? where() : where;
    const admin = createClient({ connect: connectString, sessionTimeoutMs: 4_000 });
    try {
      await admin.connected(5_000);
      await removeTree(admin, root);
      expect(await admin.promises.exists(root), `${root} left behind`).toBeNull();
    } finally {
      await admin.close();
    }
    removedRoots.push({ root, connectString });
  }
});

afterAll(async () => {
  // Nothing of this file's test roots may be left on the shared server.
  const { connectString } = await testZooKeeper();
  const shared = removedRoots.filter((entry) => entry.connectString === connectString);
  if (shared.length === 0) return;
  const admin = createClient({ connect: connectString, sessionTimeoutMs: 4_000 });
  try {
    await admin.connected(5_000);
    const top = new Set(await admin.promises.children('/'));
    const left = shared.map(({ root }) => root.slice(1)).filter((name) => top.has(name));
    expect(left, 'test roots left on the server').toEqual([]);
  } finally {
    await admin.close();
  }
});

/** Runs `cleanup` after the current test (after its clients are closed). */
export function onCleanup(cleanup: () => unknown): void {
  cleanups.push(cleanup);
}

/** A client (not yet connected) closed after the test; on the run's ZooKeeper by default. */
export async function openClient(options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  const connect = options.connect ?? (await testZooKeeper()).connectString;
  const client = createClient({
    sessionTimeoutMs: 4_000,
    transport: testTransport(),
    ...options,
    connect,
  });
  clients.add(client);
  return client;
}

/**
 * Resolves once the configuration read a client makes on connecting is answered, for a client
 * made with `followEnsemble: { maxDelayMs: 0 }` (the follower reads `sync` + `getConfig` after
 * every connection, up to 1 s later by default): the follower's 0 ms timer was set when the
 * session connected, before this 1 ms one, and Node fires timers in the order they fall due, so
 * the `exists` sent after it follows them on the wire, and ZooKeeper answers a session in order.
 * A test that counts a session's requests starts counting after it.
 */
export async function configurationRead(client: ZkClient): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  await client.promises.exists('/');
}

/** A connected client, closed after the test. */
export async function connectedClient(options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  const client = await openClient(options);
  await client.connected(10_000);
  return client;
}

/**
 * A connected client whose connection batches reads (`batchReads`): resolved once its server
 * said it knows multiRead (`srvr`), so that the gets of a turn go as one request from then on.
 */
export async function batchingClient(options: Partial<ZkClientOptions> = {}): Promise<ZkClient> {
  let batching: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    batching = resolve;
  });
  const client = await connectedClient({
    ...options,
    logLevel: 'debug',
    logger: {
      debug: (message: string) => {
        if (message.startsWith('batching reads on')) batching();
      },
    },
  });
  await ready;
  return client;
}

/**
 * A fresh, created test root (`/core-<random>`) on the given server (the run's by default),
 * removed with everything under it after the test. A function is asked for the connect string
 * again at clean-up (an ensemble whose servers were replaced meanwhile).
 */
export async function testRoot(connectString?: string | (() => string)): Promise<string> {
  const where = connectString ?? (await testZooKeeper()).connectString;
  const connect = typeof where === 'function' ? where() : where;
  const root = uniqueRoot('core');
  roots.push({ root, connectString: where });
  const admin = createClient({ connect, sessionTimeoutMs: 4_000 });
  try {
    await admin.connected(5_000);
    await admin.promises.create(root);
  } finally {
    await admin.close();
  }
  return root;
}

/** A TCP proxy to the run's ZooKeeper (or `target`), closed after the test. */
export async function proxyTo(target?: string): Promise<TcpProxy> {
  const proxy = await startProxy(target ?? (await testZooKeeper()).connectString);
  proxies.add(proxy);
  onCleanup(() => proxy.close());
  return proxy;
}

/**
 * Creates a node with an ACL: in the create itself, or — on the native transport, whose stock
 * binding always creates with the open ACL — by a setAcl right after it.
 */
export async function createWithAcl(
  client: ZkClient,
  path: string,
  data: string,
  acl: readonly Acl[],
): Promise<void> {
  if (transportName === 'native') {
    await client.promises.create(path, data);
    await client.promises.setAcl(path, acl);
    return;
  }
  await client.promises.create(path, data, { acl });
}

/** Deletes a node and everything under it (nodes vanishing meanwhile are fine). */
export async function removeTree(client: ZkClient, path: string): Promise<void> {
  let children: string[];
  try {
    children = await client.promises.children(path);
  } catch (error) {
    if (error instanceof ZkError && error.code === 'NoNode') return;
    // A node we may not read: deleting it needs only the parent's permission.
    if (!(error instanceof ZkError && error.code === 'NoAuth')) throw error;
    children = [];
  }
  for (const child of children) await removeTree(client, `${path}/${child}`);
  try {
    await client.promises.delete(path);
  } catch (error) {
    if (!(error instanceof ZkError && error.code === 'NoNode')) throw error;
  }
}

/** Every path under `root` (relative, sorted), for "nothing was created" checks. */
export async function listTree(client: ZkClient, root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string, relative: string): Promise<void> => {
    for (const child of await client.promises.children(path)) {
      const childRelative = `${relative}/${child}`;
      found.push(childRelative);
      await walk(`${path}/${child}`, childRelative);
    }
  };
  await walk(root, '');
  return found.sort();
}

/** What a subscription to an observable has seen so far. */
export interface Recording<T> {
  readonly values: T[];
  error: unknown;
  completed: boolean;
  readonly subscription: Subscription;
}

/** Subscribes to `observable` and records what it emits; unsubscribed after the test. */
export function record<T>(observable: Observable<T>): Recording<T> {
  const recording = { values: [] as T[], error: undefined as unknown, completed: false };
  const subscription = observable.subscribe({
    next: (value) => recording.values.push(value),
    error: (error: unknown) => {
      recording.error = error;
    },
    complete: () => {
      recording.completed = true;
    },
  });
  onCleanup(() => subscription.unsubscribe());
  return Object.assign(recording, { subscription });
}

/** The states of a recorded `session$`. */
export function statesOf(recording: Recording<SessionEvent>): SessionState[] {
  return recording.values.map((event) => event.state);
}

/** A full partition of the client behind `proxy` (new connections refused, the current one cut): suspended when this resolves. */
export async function partition(proxy: TcpProxy, client: ZkClient): Promise<void> {
  proxy.refuse(true);
  proxy.cut();
  await waitFor(() => client.state === 'suspended');
}

/** Waits until `predicate` holds (polling every 10 ms). */
export function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<true> {
  return vi.waitUntil(async () => (await predicate()) === true, {
    timeout: timeoutMs,
    interval: 10,
  });
}

/** Resolves with the error `promise` rejects with; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<ZkError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ZkError);
    return error as ZkError;
  }
  throw new Error('expected a rejection with a ZkError, but the call succeeded');
}

/** Resolves with the error an observable fails with; fails the test if it emits or completes. */
export function observableErrorOf(observable: Observable<unknown>): Promise<ZkError> {
  return new Promise<ZkError>((resolve, reject) => {
    observable.subscribe({
      next: (value) =>
        reject(new Error(`expected an error, got a value: ${JSON.stringify(value)}`)),
      error: (error: unknown) => {
        if (error instanceof ZkError) resolve(error);
        else reject(new Error(`expected a ZkError, got ${String(error)}`));
      },
      complete: () => reject(new Error('expected an error, the observable completed')),
    });
  });
}

/** The paths a session watches on a server, from the `wchc` four-letter word. */
export async function watchedPaths(connectString: string, sessionId: string): Promise<string[]> {
  const text = await fourLetterWord(connectString, 'wchc');
  const paths: string[] = [];
  let inSession = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('0x')) inSession = BigInt(line.trim()) === BigInt(`0x${sessionId}`);
    else if (inSession && line.trim().startsWith('/')) paths.push(line.trim());
  }
  return paths;
}

/** Stalls the process for `ms` (no timer, no I/O meanwhile), as a sync parse or a GC pause does. */
export function busyWait(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // the process is stalled
  }
}

/** One line a client logged, as {@link logCollector} keeps it. */
export interface LoggedLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly context: Record<string, unknown> | undefined;
  /** When, in ms after the collector was made. */
  readonly atMs: number;
}

/**
 * A logger that keeps every line it is given (`lines`), for a test to look for one, or for a
 * check to print them all when it fails: `connectedClient({ logger: log.logger, logLevel:
 * 'debug' })`, then `expect(value, log.text()).toBe(...)` — a flake seen once in CI then explains
 * itself. `DEBUG_ENS=1` prints each line as it comes too.
 */
export function logCollector() {
  const lines: LoggedLine[] = [];
  const started = performance.now();
  const format = (line: LoggedLine) =>
    `${`${Math.round(line.atMs)}`.padStart(6)} ms ${line.level} ${line.message}${line.context ? ` ${JSON.stringify(line.context)}` : ''}`;
  const at =
    (level: LoggedLine['level']) =>
    (message: string, context?: Record<string, unknown>): void => {
      const line = { level, message, context, atMs: performance.now() - started };
      lines.push(line);
      if (process.env.DEBUG_ENS) console.log(format(line));
    };
  return {
    lines,
    logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    text: () => `the client's log:\n${lines.map(format).join('\n')}`,
  };
}

/** The index of the ensemble member `client`'s session is on (its `cons`), once one lists it. */
export async function memberOf(ensemble: Ensemble, client: ZkClient): Promise<number> {
  let index: number | undefined;
  await waitFor(async () => {
    index = await ensemble.serverOf(client.sessionId!);
    return index !== undefined;
  });
  return index!;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** One request a client sent, as {@link requestTap} saw it on the wire. */
export interface TappedRequest {
  readonly xid: number;
  /** ZooKeeper's OpCode (4 getData, 22 multiRead, ...). */
  readonly type: number;
  /** For a multiRead: the OpCode of each of its ops. */
  readonly ops?: readonly number[];
  /** For getData, exists, getChildren(2): whether it sets a watch. */
  readonly watch?: boolean;
}

/**
 * A relay to the run's ZooKeeper that records every request a client sends through it, in
 * order (after each connection's ConnectRequest; pings left out): what went on the wire, not
 * what the client says it did. Closed after the test.
 */
export async function requestTap(): Promise<{ connectString: string; requests: TappedRequest[] }> {
  const target = (await testZooKeeper()).connectString.split(',')[0]!;
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.split(':').pop())];
  const requests: TappedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host, port });
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    let first = true;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const body = pending.subarray(4, 4 + pending.readInt32BE(0));
        pending = pending.subarray(4 + body.length);
        if (first) {
          first = false;
          continue;
        }
        const xid = body.readInt32BE(0);
        const type = body.readInt32BE(4);
        if (xid === -2) continue;
        if (type === 22) requests.push({ xid, type, ops: multiReadOps(body) });
        else if ([3, 4, 8, 12].includes(type)) {
          requests.push({ xid, type, watch: body[body.length - 1] !== 0 });
        } else requests.push({ xid, type });
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    for (const [one, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      one.on('error', () => other.destroy());
      one.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  const address = server.address() as { port: number };
  return { connectString: `127.0.0.1:${address.port}`, requests };
}

/** The op types of a multiRead request body (after xid and type): MultiHeader, path, watch... */
function multiReadOps(body: Buffer): number[] {
  const ops: number[] = [];
  let offset = 8;
  for (;;) {
    const type = body.readInt32BE(offset);
    const done = body[offset + 4] !== 0;
    offset += 9;
    if (done) return ops;
    ops.push(type);
    offset += 4 + body.readInt32BE(offset) + 1; // path, watch flag
  }
}
