/**
 * The driver of a Curator or kazoo peer: spawns it, speaks its JSON-line protocol (replies
 * correlated by id), and makes sure the process is gone after `close()` or when Node exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  PeerError,
  type PeerErrorCode,
  PeerErrorCode as PeerErrorCodes,
  type PeerKind,
} from './errors';
import { type PeerCommand, type PeerCommandOptions, peerCommand } from './launch';

/** The recipes a peer can acquire and release (`selector` is Curator only). */
export type PeerRecipe = 'mutex' | 'read' | 'write' | 'semaphore' | 'selector';

export interface StartPeerOptions extends PeerCommandOptions, LaunchOptions {}

export interface LaunchOptions {
  /** How long the peer may take to start and connect (default 30 s). */
  startTimeoutMs?: number;
  /** How long `close()` waits for the peer to quit before killing it (default 5 s). */
  closeTimeoutMs?: number;
}

export interface PeerAcquireOptions {
  /** Give up after this long: the promise rejects with PeerError `timeout`. Default: wait. */
  timeoutMs?: number;
  /** The peer's session to use, by name (created on first use; default `default`). */
  session?: string;
  /** Semaphore: the number of leases (required). */
  leases?: number;
  /** The participant id: LeaderSelector's id (Curator), the lock node's identifier (kazoo). */
  participantId?: string;
  /**
   * kazoo only: the `extra_lock_patterns` of the Lock (default `["-lock-"]` for mutex,
   * `["__WRIT__"]` for read, `["__WRIT__", "__READ__"]` for write; `[]` = plain kazoo).
   */
  extraLockPatterns?: readonly string[];
  /**
   * Curator only (mutex, read, write): `makeRevocable`: a revocation request on the hold's node
   * is told as a `revoked` event; the hold stays until released.
   */
  revocable?: boolean;
  /**
   * Aborting it while the acquire waits cancels it in the peer (which removes its node): the
   * promise rejects with PeerError `cancelled`. Aborting after the acquire has no effect.
   */
  signal?: AbortSignal;
}

/** An acquired recipe in the peer: release it by `id`. */
export interface PeerHold {
  /** The handle to release. */
  readonly id: string;
  /** The full path of the node that holds it (null where the recipe hides it). */
  readonly node: string | null;
}

/** What a peer sees queued on a path, in its own order. */
export interface PeerParticipants {
  /** Curator: the node names in Curator's order (the holder first). */
  readonly nodes?: string[];
  /** kazoo: the contenders' identifiers (node data) in kazoo's order. */
  readonly contenders?: string[];
  /** Curator latch: participant ids, leader first. */
  readonly participants?: { id: string; isLeader: boolean }[];
}

/** A Curator LeaderLatch's state. */
export interface LatchStatus {
  readonly hasLeadership: boolean;
  /** `getLeader().getId()` ('' when there is none). */
  readonly leader: string;
  readonly participants: { id: string; isLeader: boolean }[];
  /** The latch's node, once created. */
  readonly node: string | null;
  /** LATENT, STARTED or CLOSED. */
  readonly state: string;
}

/** What a peer tells without being asked. */
export type PeerEvent =
  | { readonly event: 'leadership'; readonly handle: string; readonly isLeader: boolean }
  | { readonly event: 'lost'; readonly handle: string }
  | { readonly event: 'revoked'; readonly handle: string }
  | { readonly event: 'connection'; readonly session: string; readonly state: string };

/** A session's id (hex) and password (hex), for `expireSession` of @zkrx/testing. */
export interface PeerSessionCredentials {
  readonly sessionId: string;
  readonly password: string;
}

/** A running peer. */
export interface Peer {
  readonly kind: PeerKind;
  readonly pid: number;
  /** The library's version (Curator's or kazoo's). */
  readonly version: string;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Acquires a recipe in the peer (on its own peer thread); resolves once the peer holds it.
   * Rejects with PeerError `timeout` after `timeoutMs`, `cancelled` when `signal` aborts.
   */
  acquire(recipe: PeerRecipe, path: string, options?: PeerAcquireOptions): Promise<PeerHold>;
  /** Releases what `acquire` took; resolves once the peer has deleted its node. */
  release(id: string): Promise<void>;
  /**
   * The library's own view of a hold: Curator's `isAcquiredInThisProcess()` (LeaderSelector:
   * `hasLeadership()`), kazoo's `is_acquired`. It may say true after the session was lost.
   */
  isHeld(id: string): Promise<boolean>;
  /**
   * Curator only: the holder of a `write` hold takes the read lock on its own thread, then
   * releases the write lock (Curator's documented downgrade). `id` then names the read hold.
   * Resolves the read lock's node.
   */
  downgrade(id: string): Promise<{ node: string }>;
  /** Curator only: `Revoker.attemptRevoke(node)`, asking the node's holder to release. */
  revoke(node: string, options?: { session?: string }): Promise<void>;
  /**
   * What the peer's recipe sees queued on `path`. Curator's `read` / `write` list only their own
   * side's nodes (its getParticipantNodes()); `rwlock` (Curator only) lists every reader and
   * writer in the order its read-write lock decides by.
   */
  participants(
    recipe: PeerRecipe | 'latch' | 'rwlock',
    path: string,
    options?: Pick<PeerAcquireOptions, 'session' | 'extraLockPatterns'>,
  ): Promise<PeerParticipants>;
  /** Starts a Curator LeaderLatch; resolves its handle. */
  latchStart(path: string, options?: { participantId?: string; session?: string }): Promise<string>;
  /** Waits (up to `timeoutMs`) for the latch to lead; resolves whether it does. */
  latchAwait(handle: string, timeoutMs?: number): Promise<boolean>;
  latchStatus(handle: string): Promise<LatchStatus>;
  /** Closes the latch (its node is gone when this resolves). */
  latchClose(handle: string): Promise<void>;
  /** The credentials of one of the peer's sessions (to expire it). */
  sessionCredentials(session?: string): Promise<PeerSessionCredentials>;
  /** Closes one of the peer's sessions: its ephemeral nodes go, its waiters fail. */
  closeSession(session: string): Promise<void>;
  ping(): Promise<void>;
  /** Listens to the peer's events; returns the unsubscribe function. */
  onEvent(listener: (event: PeerEvent) => void): () => void;
  /** The last lines the peer wrote to stderr. */
  stderr(): string;
  /** Asks the peer to quit (and closes its stdin), kills it after `closeTimeoutMs`; resolves once it is gone. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const STDERR_TAIL_CHARS = 8_000;
/** How long a command that does not wait on a recipe may take. */
const COMMAND_DEADLINE_MS = 30_000;
/** Extra time over a command's own timeoutMs before the driver gives up on the reply. */
const DEADLINE_SLACK_MS = 20_000;

// Every live peer process: killed when Node exits, whatever the tests did.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * Starts a Curator (Java) or kazoo (Python) peer connected to `connectString`.
 *
 * ## Example
 * ```ts
 * await using curator = await startPeer('curator', { connectString });
 * const hold = await curator.acquire('mutex', '/locks/orders', { timeoutMs: 5_000 });
 * console.log(hold.node);
 * await curator.release(hold.id);
 * // Output: /locks/orders/_c_3d1f...-lock-0000000000
 * ```
 *
 * @param kind `curator` or `kazoo`.
 * @param options The server, session timeout (4 s), runtimes, start timeout.
 * @return The running peer; rejects with InteropUnavailableError when it cannot run here,
 *   PeerError `start-failed` when it does not get ready.
 */
export async function startPeer(kind: PeerKind, options: StartPeerOptions): Promise<Peer> {
  const command = await peerCommand(kind, options);
  return launchPeer(kind, command, options);
}

interface Pending {
  readonly command: string;
  readonly resolve: (reply: Record<string, unknown>) => void;
  readonly reject: (error: PeerError) => void;
  readonly timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Spawns a program that speaks the peer protocol and waits for its `ready` line (exported
 * for the driver's own tests, which use a fake peer).
 */
export function launchPeer(
  kind: PeerKind,
  command: PeerCommand,
  options: LaunchOptions = {},
): Promise<Peer> {
  const startTimeoutMs = options.startTimeoutMs ?? 30_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000;
  installExitHook();
  const child = spawn(command.command, [...command.args], { stdio: ['pipe', 'pipe', 'pipe'] });
  live.add(child);
  let stderrTail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  child.stdin.on('error', () => {}); // EPIPE after the peer died: reported through `exited`
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    const done = (code: number | null, signal: NodeJS.Signals | null) => {
      live.delete(child);
      resolve({ code, signal });
    };
    child.once('exit', done);
    child.once('close', done); // alone when the spawn failed
  });
  // 'exit' may come before the streams end; 'close' after both. Wait for 'close' to have stderr.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));

  const pending = new Map<string, Pending>();
  const listeners = new Set<(event: PeerEvent) => void>();
  let nextId = 1;
  let gone: PeerError | undefined;

  const failAll = (error: (command: string) => PeerError) => {
    for (const [id, request] of pending) {
      pending.delete(id);
      clearTimeout(request.timer);
      request.reject(error(request.command));
    }
  };

  let onReady: ((message: Record<string, unknown>) => void) | undefined;

  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      stderrTail = `${stderrTail}[non-JSON line on stdout] ${line}\n`.slice(-STDERR_TAIL_CHARS);
      return;
    }
    if (typeof message.event === 'string') {
      if (message.event === 'ready' || message.event === 'error') onReady?.(message);
      else for (const listener of listeners) listener(message as unknown as PeerEvent);
      return;
    }
    const id = message.id;
    const request = typeof id === 'string' ? pending.get(id) : undefined;
    if (!request) return;
    pending.delete(id as string);
    clearTimeout(request.timer);
    if (message.ok === true) request.resolve(message);
    else {
      request.reject(
        new PeerError(
          kind,
          request.command,
          (message.error as PeerErrorCode) ?? PeerErrorCodes.failed,
          String(message.message ?? 'failed'),
        ),
      );
    }
  });

  void closed.then(() => {
    gone = new PeerError(kind, 'peer', PeerErrorCodes.exited, 'the peer exited', stderrTail);
    failAll(
      (name) =>
        new PeerError(
          kind,
          name,
          PeerErrorCodes.exited,
          'the peer exited before answering',
          stderrTail,
        ),
    );
  });

  const request = (
    cmd: string,
    fields: Record<string, unknown>,
    deadlineMs: number | undefined,
    id = `${nextId++}`,
  ): Promise<Record<string, unknown>> => {
    const name = typeof fields.recipe === 'string' ? `${cmd} ${fields.recipe}` : cmd;
    if (gone)
      return Promise.reject(new PeerError(kind, name, gone.code, 'the peer is gone', stderrTail));
    return new Promise((resolve, reject) => {
      const timer =
        deadlineMs === undefined
          ? undefined
          : setTimeout(() => {
              pending.delete(id);
              reject(
                new PeerError(
                  kind,
                  name,
                  PeerErrorCodes.noReply,
                  `no reply within ${deadlineMs} ms`,
                  stderrTail,
                ),
              );
            }, deadlineMs);
      pending.set(id, { command: name, resolve, reject, timer });
      child.stdin.write(`${JSON.stringify({ id, cmd, ...fields })}\n`);
    });
  };

  const deadlineAfter = (timeoutMs: number | undefined) =>
    timeoutMs === undefined ? undefined : timeoutMs + DEADLINE_SLACK_MS;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        request('quit', {}, closeTimeoutMs).catch(() => {});
        child.stdin.end();
        const killer = setTimeout(() => child.kill('SIGKILL'), closeTimeoutMs);
        await exited;
        clearTimeout(killer);
      }
      await closed;
      lines.close();
    })();
    return closing;
  };

  const ready = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new PeerError(
          kind,
          'start',
          PeerErrorCodes.startFailed,
          `not ready within ${startTimeoutMs} ms`,
          stderrTail,
        ),
      );
    }, startTimeoutMs);
    onReady = (message) => {
      clearTimeout(timer);
      if (message.event === 'ready') resolve(message);
      else {
        reject(
          new PeerError(
            kind,
            'start',
            PeerErrorCodes.startFailed,
            String(message.message),
            stderrTail,
          ),
        );
      }
    };
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new PeerError(kind, 'start', PeerErrorCodes.startFailed, error.message, stderrTail));
    });
    void closed.then(() => {
      clearTimeout(timer);
      reject(
        new PeerError(
          kind,
          'start',
          PeerErrorCodes.startFailed,
          'the peer exited while starting',
          stderrTail,
        ),
      );
    });
  });

  return ready.then(
    (message): Peer => ({
      kind,
      pid: child.pid as number,
      version: String(message.version ?? 'unknown'),
      exited,
      async acquire(recipe, path, options = {}) {
        const { signal, ...fields } = options;
        signal?.throwIfAborted();
        const id = `${recipe}-${nextId++}`;
        const cancel = () => {
          request('release', { handle: id }, COMMAND_DEADLINE_MS).catch(() => {});
        };
        signal?.addEventListener('abort', cancel, { once: true });
        try {
          const reply = await request(
            'acquire',
            { recipe, path, ...fields },
            deadlineAfter(options.timeoutMs),
            id,
          );
          return { id, node: (reply.node as string | null | undefined) ?? null };
        } finally {
          signal?.removeEventListener('abort', cancel);
        }
      },
      async release(id) {
        await request('release', { handle: id }, COMMAND_DEADLINE_MS);
      },
      async revoke(node, options = {}) {
        await request('revoke', { node, ...options }, COMMAND_DEADLINE_MS);
      },
      async isHeld(id) {
        const reply = await request('held', { handle: id }, COMMAND_DEADLINE_MS);
        return reply.held === true;
      },
      async downgrade(id) {
        const reply = await request('downgrade', { handle: id }, COMMAND_DEADLINE_MS);
        return { node: String(reply.node) };
      },
      async participants(recipe, path, options = {}) {
        const reply = await request(
          'participants',
          { recipe, path, ...options },
          COMMAND_DEADLINE_MS,
        );
        const { nodes, contenders, participants } = reply as PeerParticipants;
        return { nodes, contenders, participants };
      },
      async latchStart(path, options = {}) {
        const id = `latch-${nextId++}`;
        await request('latch-start', { path, ...options }, COMMAND_DEADLINE_MS, id);
        return id;
      },
      async latchAwait(handle, timeoutMs) {
        const reply = await request('latch-await', { handle, timeoutMs }, deadlineAfter(timeoutMs));
        return reply.hasLeadership === true;
      },
      async latchStatus(handle) {
        const reply = await request('latch-status', { handle }, COMMAND_DEADLINE_MS);
        return {
          hasLeadership: reply.hasLeadership === true,
          leader: String(reply.leader ?? ''),
          participants: (reply.participants as LatchStatus['participants']) ?? [],
          node: (reply.node as string | null | undefined) ?? null,
          state: String(reply.state),
        };
      },
      async latchClose(handle) {
        await request('latch-close', { handle }, COMMAND_DEADLINE_MS);
      },
      async sessionCredentials(session = 'default') {
        const reply = await request('session', { session }, COMMAND_DEADLINE_MS);
        return { sessionId: String(reply.sessionId), password: String(reply.password) };
      },
      async closeSession(session) {
        await request('session-close', { session }, COMMAND_DEADLINE_MS);
      },
      async ping() {
        await request('ping', {}, COMMAND_DEADLINE_MS);
      },
      onEvent(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      stderr: () => stderrTail,
      close,
      [Symbol.asyncDispose]: close,
    }),
    async (error: unknown) => {
      child.kill('SIGKILL');
      await closed;
      throw error;
    },
  );
}
