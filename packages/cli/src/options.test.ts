import { describe, expect, it } from 'vitest';
import { CliError } from './errors';
import { DEFAULT_CONNECT, DEFAULT_TIMEOUT_MS, parseCommandLine } from './options';

const usageError = (argv: string[], env: Record<string, string> = {}) => {
  try {
    parseCommandLine(argv, env);
  } catch (error) {
    expect(CliError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'BadUsage', exitCode: 2 });
    return (error as CliError).message;
  }
  throw new Error(`no error for ${argv.join(' ')}`);
};

describe('the command line', () => {
  it('reads a command, its path and options, anywhere on the line', () => {
    expect(parseCommandLine(['locks', '/locks', '--watch', '-c', 'zk:2181'], {})).toMatchObject({
      command: 'locks',
      target: '/locks',
      watch: true,
      json: false,
      connect: 'zk:2181',
      timeoutMs: DEFAULT_TIMEOUT_MS,
      colour: true,
    });
    expect(parseCommandLine(['--json', 'leaders', '/e'], {})).toMatchObject({
      command: 'leaders',
      target: '/e',
      json: true,
    });
    expect(parseCommandLine(['release', '/l/n', '--force', '-y'], {})).toMatchObject({
      force: true,
      yes: true,
    });
  });

  it('connects to --connect, else ZK_CONNECT, else 127.0.0.1:2181; NO_COLOR and --no-color', () => {
    expect(parseCommandLine(['locks', '/'], {}).connect).toBe(DEFAULT_CONNECT);
    expect(parseCommandLine(['locks', '/'], { ZK_CONNECT: 'a:1' }).connect).toBe('a:1');
    expect(parseCommandLine(['locks', '/', '-c', 'b:2'], { ZK_CONNECT: 'a:1' }).connect).toBe(
      'b:2',
    );
    expect(parseCommandLine(['locks', '/'], { NO_COLOR: '1' }).colour).toBe(false);
    expect(parseCommandLine(['locks', '/', '--no-color'], {}).colour).toBe(false);
    expect(parseCommandLine(['locks', '/', '--timeout', '2500'], {}).timeoutMs).toBe(2500);
  });

  it('says what is wrong, and where to look', () => {
    expect(usageError(['frob'])).toBe(
      'zkrx has no command "frob": use locks, leaders, members, partitions, release, revoke, console, dev-server, help (zkrx --help)',
    );
    expect(usageError(['locks', '/a', '--frob'])).toMatch(/^Unknown option '--frob'/);
    expect(usageError(['revoke', '/a/b', '--watch'])).toBe(
      'zkrx revoke does not take --watch (zkrx revoke --help)',
    );
    expect(usageError(['locks', '--force', '/a'])).toMatch(/does not take --force/);
    expect(usageError(['locks', '/a', '/b'])).toMatch(/unexpected argument "\/b"/);
    expect(usageError(['locks', '/a', '--timeout', 'soon'])).toMatch(
      /--timeout takes milliseconds/,
    );
    expect(usageError(['locks', '/a', '--timeout', '0'])).toMatch(/--timeout takes milliseconds/);
    expect(usageError(['locks', '/a', '--connect', ' '])).toMatch(/--connect .* is empty/);
    expect(usageError(['locks', '/a', '--connect'])).toMatch(/argument missing/);
  });
});
