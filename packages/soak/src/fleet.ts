/**
 * The worker processes of a run: forked from `worker.ts` (TypeScript run by tsx, on the
 * workspace's sources), talking JSON over IPC. None outlives the coordinator: they are killed
 * when it exits, and each ends itself when its IPC channel closes (the coordinator died).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CoordinatorMessage, WorkerConfig, WorkerMessage } from './protocol';

const here = dirname(fileURLToPath(import.meta.url));
const packageDir = resolve(here, '..');
const workerScript = resolve(here, 'worker.ts');

const live = new Set<ChildProcess>();
let exitHook = false;

function installExitHook(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/** One worker process. */
export interface WorkerProcess {
  readonly index: number;
  readonly pid: number | undefined;
  /** Resolves with how it ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly hasExited: boolean;
  send(message: CoordinatorMessage): void;
  /** The last lines it wrote on stderr. */
  stderr(): string;
  kill(): void;
}

/**
 * Forks a worker.
 *
 * @param config Its configuration.
 * @param onMessage Called with each of its messages.
 * @return The process.
 */
export function forkWorker(
  config: WorkerConfig,
  onMessage: (message: WorkerMessage) => void,
): WorkerProcess {
  installExitHook();
  const child = fork(workerScript, [], {
    cwd: packageDir,
    execArgv: ['--conditions=@zkrx/source', '--import', 'tsx'],
    env: { ...process.env, ZKRX_SOAK_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'json',
  });
  live.add(child);
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    tail = (tail + chunk).slice(-8_000);
  });
  let hasExited = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once('exit', (code, signal) => {
      hasExited = true;
      live.delete(child);
      done({ code, signal });
    });
  });
  child.on('message', (message) => onMessage(message as WorkerMessage));
  child.on('error', () => {});
  return {
    index: config.index,
    pid: child.pid,
    exited,
    get hasExited() {
      return hasExited;
    },
    send(message) {
      if (child.connected) child.send(message, (error) => void error);
    },
    stderr: () => tail,
    kill() {
      if (!hasExited) child.kill('SIGKILL');
    },
  };
}
