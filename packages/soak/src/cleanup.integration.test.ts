/**
 * No worker outlives the coordinator: `pnpm soak` killed outright (SIGKILL, no exit hook runs)
 * leaves no worker process and no ZooKeeper JVM behind.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The processes whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it.skipIf(process.platform !== 'linux')(
  'a coordinator killed outright leaves no worker and no ZooKeeper behind',
  async () => {
    const coordinator = spawn(
      process.execPath,
      [
        '--conditions=@zkrx/source',
        '--import',
        'tsx',
        'src/cli.ts',
        '--modes',
        'mutex',
        '--workers',
        '2',
        '--session-timeout',
        '2000',
        '--duration',
        '60',
      ],
      { cwd: packageDir, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise((done) => coordinator.once('exit', done));
    // Gate: the first progress line, once workers run.
    await new Promise<void>((ready, fail) => {
      let text = '';
      coordinator.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('[soak mutex +')) ready();
      });
      coordinator.once('exit', () => fail(new Error(`the soak ended early:\n${text}`)));
    });
    const pid = coordinator.pid as number;
    const children = childrenOf(pid);
    const family = [...children, ...children.flatMap(childrenOf)];
    // 2 workers and 3 ZooKeeper JVMs at least (and the JVMs' watchdogs).
    expect(family.length).toBeGreaterThanOrEqual(5);
    coordinator.kill('SIGKILL');
    await exited;
    for (let wait = 0; wait < 150 && family.some(alive); wait++) await sleep(100);
    expect(family.filter(alive)).toEqual([]);
  },
);
