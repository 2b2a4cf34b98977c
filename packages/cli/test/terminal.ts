/**
 * A terminal for tests, as a person has one: tmux runs a command in a pane of a fixed size on a
 * private tmux server; the test types keys (`send-keys`) and reads the screen (`capture-pane`),
 * waiting for what it expects to appear (a gate, never a sleep).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** Whether tmux runs here, and if not why (the tests that need it skip with this reason). */
export function tmuxAvailability(): { available: boolean; reason: string } {
  const probe = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    return {
      available: false,
      reason: 'tmux is not installed (./scripts/bootstrap.sh installs it: apt-get install tmux)',
    };
  }
  return { available: true, reason: probe.stdout.trim() };
}

/** Quotes `word` for the shell tmux runs the command with. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

const packageDir = fileURLToPath(new URL('..', import.meta.url));

/** The `zkrx` command line run from this package's sources (no build needed). */
export function zkrxFromSource(args: readonly string[]): string[] {
  return [process.execPath, '--conditions=@zkrx/source', '--import', 'tsx', 'src/bin.ts', ...args];
}

export class Terminal {
  private readonly socket = `zkrx-test-${randomBytes(4).toString('hex')}`;
  private closed = false;

  private constructor() {}

  /**
   * Runs `command` in a new `width` × `height` pane; when it exits, the pane shows
   * `[exited <code>]` and stays.
   */
  static start(
    command: readonly string[],
    options: { width?: number; height?: number } = {},
  ): Terminal {
    const terminal = new Terminal();
    const line = `${command.map(quote).join(' ')}; echo "[exited $?]"; sleep 3600`;
    terminal.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(options.width ?? 160),
      '-y',
      String(options.height ?? 48),
      '-c',
      packageDir,
      line,
    );
    return terminal;
  }

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], {
      encoding: 'utf8',
    });
  }

  /** What the pane shows now, as text (no colours), trailing blank lines removed. */
  screen(): string {
    return this.tmux('capture-pane', '-p', '-t', 'main').replace(/\s+$/, '');
  }

  /** Types `keys` (tmux key names: `Enter`, `C-c`, or literal text). */
  keys(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  /**
   * Resolves the screen once `expected` says it shows what the test waits for; rejects after
   * `timeoutMs` with the screen as it was (so a failure shows what a person would have seen).
   */
  async until(
    expected: (screen: string) => boolean,
    what: string,
    timeoutMs = 30_000,
  ): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (expected(screen)) return screen;
      if (Date.now() > deadline) {
        throw new Error(`the terminal never showed ${what}; it shows:\n${screen}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ends the tmux server and everything running in it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}
