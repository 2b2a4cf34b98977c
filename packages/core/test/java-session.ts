/**
 * Apache's Java client (installed with ZooKeeper) run beside zkrx as a control: one session with
 * one ephemeral node, its session events as lines (`test/JavaSession.java`).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { locateZooKeeper } from '@zkrx/testing';
import { onCleanup } from './support';

const SOURCE = new URL('./JavaSession.java', import.meta.url).pathname;

/** A running Java session and what it said. */
export interface JavaSession {
  /** Every line it printed so far. */
  readonly lines: readonly string[];
  /** Its session id (hex), once its node is made. */
  readonly sessionId: string;
  /** Resolves with the first line (from `from` on) that `match` accepts. */
  line(match: (line: string) => boolean, from?: number): Promise<string>;
  /** The ephemeral owner of `path` as the Java session reads it (`none` when absent). */
  owner(path: string): Promise<string>;
  readonly process: ChildProcessWithoutNullStreams;
}

/**
 * Starts the Java control: connects to `connect`, creates the ephemeral node `path`; stopped
 * after the test.
 */
export async function startJavaSession(
  connect: string,
  sessionTimeoutMs: number,
  path: string,
): Promise<JavaSession> {
  const installation = locateZooKeeper();
  const child = spawn(
    installation.java,
    [
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      '-Xmx128m',
      '-cp',
      installation.classpath.join(':'),
      SOURCE,
      connect,
      String(sessionTimeoutMs),
      path,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  child.stderr.resume();
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const wake of [...waiters]) wake();
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
    for (const wake of [...waiters]) wake();
  });
  onCleanup(async () => {
    if (exited) return;
    child.stdin.end('quit\n');
    await new Promise((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(undefined);
      });
    });
  });
  const line = (match: (line: string) => boolean, from = 0) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const found = lines.slice(from).find(match);
        if (found !== undefined) {
          waiters.delete(check);
          resolve(found);
        } else if (exited) {
          waiters.delete(check);
          reject(new Error(`the Java session exited; it said:\n${lines.join('\n')}`));
        }
      };
      waiters.add(check);
      check();
    });
  const created = await line((text) => text.startsWith('created '));
  const sessionId = created.split(' ')[2]!;
  return {
    lines,
    sessionId,
    line,
    process: child,
    async owner(node) {
      const from = lines.length;
      child.stdin.write(`owner ${node}\n`);
      const answer = await line((text) => text.startsWith(`owner ${node} `), from);
      return answer.slice(`owner ${node} `.length);
    },
  };
}
