/**
 * `zkrx dev-server`: a serving ZooKeeper on the port asked for, until interrupted; then stopped
 * and its directory removed. Usage errors before anything starts.
 */
import { existsSync } from 'node:fs';
import { fourLetterWord, freePorts } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { fakeIo } from '../test/fake-io';
import { Terminal, tmuxAvailability, zkrxFromSource } from '../test/terminal';
import { run } from './index';

describe('zkrx dev-server', () => {
  it('serves on the port until Ctrl-C, then stops and removes its data', async () => {
    const [port] = await freePorts(1);
    const io = fakeIo();
    const running = run(['dev-server', '--port', String(port)], io);
    await vi.waitUntil(() => io.out().includes('Ctrl-C stops it.'), { timeout: 60_000 });
    expect(io.out()).toContain(`ZK_CONNECT=127.0.0.1:${port}`);
    expect(await fourLetterWord(`127.0.0.1:${port}`, 'ruok')).toBe('imok');
    const dir = /data in (\S+),/.exec(io.out())?.[1] as string;
    expect(existsSync(dir)).toBe(true);
    io.interrupt();
    expect(await running).toBe(0);
    expect(io.out()).toMatch(/stopped\n$/);
    expect(existsSync(dir)).toBe(false);
  });

  // The command as a person runs it, in its own process: the server's child process is
  // unreferenced, so nothing but the command's own wait may keep it alive until Ctrl-C.
  const tmux = tmuxAvailability();
  it.skipIf(!tmux.available)(
    `keeps serving in a terminal until Ctrl-C${tmux.available ? '' : ` (skipped: ${tmux.reason})`}`,
    async () => {
      const [port] = await freePorts(1);
      using terminal = Terminal.start(zkrxFromSource(['dev-server', '--port', String(port)]));
      await terminal.until((screen) => screen.includes('Ctrl-C stops it.'), 'the server ready');
      expect(await fourLetterWord(`127.0.0.1:${port}`, 'ruok')).toBe('imok');
      terminal.keys('C-c');
      await terminal.until(
        (screen) => screen.includes('stopped') && screen.includes('[exited 0]'),
        'stopped by Ctrl-C',
      );
    },
  );

  it('refuses what it cannot use, before starting anything', async () => {
    for (const argv of [
      ['dev-server', '--connect', '127.0.0.1:2181'],
      ['dev-server', '--port', 'soon'],
      ['dev-server', '/extra'],
    ]) {
      const io = fakeIo();
      expect(await run(argv, io)).toBe(2);
      expect(io.err()).toMatch(/^zkrx: /);
    }
  });
});
