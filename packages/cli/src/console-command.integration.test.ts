/**
 * `zkrx console`: the web console on 127.0.0.1, read-only unless `--actions` (then a token is
 * made and printed, or taken from ZKRX_CONSOLE_TOKEN), until Ctrl-C. The page itself is tested
 * in a browser by @zkrx/console.
 */
import { testZooKeeper } from '@zkrx/testing';
import { describe, expect, it, vi } from 'vitest';
import { fakeIo } from '../test/fake-io';
import { run } from './index';

async function started(argv: string[], env: Record<string, string> = {}) {
  const { connectString } = await testZooKeeper();
  const io = fakeIo({ env });
  const running = run(['console', ...argv, '--port', '0', '--connect', connectString], io);
  await vi.waitUntil(() => io.out().includes('Ctrl-C stops it.') || io.err() !== '');
  const url = /on (http:\/\/\S+) /.exec(io.out())?.[1] as string;
  return { io, running, url };
}

describe('zkrx console', () => {
  it('serves the page read-only on 127.0.0.1 until Ctrl-C; no action route answers', async () => {
    const { io, running, url } = await started(['/locks']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(io.out()).toContain('read-only');
    const home = await fetch(url, { redirect: 'manual' });
    expect(home.headers.get('location')).toBe('/locks?path=%2Flocks');
    const page = await fetch(new URL('locks?path=/locks', url));
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<script type="module" src="assets/console.js?v=');
    expect(await (await fetch(new URL('api/me', url))).json()).toMatchObject({
      actions: false,
      canAct: false,
      csrf: null,
    });
    const forged = await fetch(new URL('api/actions/release', url), { method: 'POST', body: '{}' });
    expect(forged.status).toBe(403);
    io.interrupt();
    expect(await running).toBe(0);
    expect(io.out()).toMatch(/stopped\n$/);
  });

  it('--actions: signing in takes the token it prints (or ZKRX_CONSOLE_TOKEN)', async () => {
    const made = await started(['--actions']);
    const token = /sign in with the token (\S+)/.exec(made.io.out())?.[1] as string;
    expect(token.length).toBeGreaterThanOrEqual(16);
    const wrong = await fetch(new URL('api/sign-in', made.url), {
      method: 'POST',
      body: 'token=nope',
      redirect: 'manual',
    });
    expect(wrong.status).toBe(403);
    const right = await fetch(new URL('api/sign-in', made.url), {
      method: 'POST',
      body: `token=${token}`,
      redirect: 'manual',
    });
    expect(right.status).toBe(303);
    expect(right.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    made.io.interrupt();
    expect(await made.running).toBe(0);

    const given = await started(['--actions'], {
      ZKRX_CONSOLE_TOKEN: 'a-token-from-the-environment',
    });
    expect(given.io.out()).toContain('sign in with the token in ZKRX_CONSOLE_TOKEN');
    expect(given.io.out()).not.toContain('a-token-from-the-environment');
    given.io.interrupt();
    expect(await given.running).toBe(0);
  });

  it('refuses a short token and a bad path before serving', async () => {
    const { connectString } = await testZooKeeper();
    const io = fakeIo({ env: { ZKRX_CONSOLE_TOKEN: 'short' } });
    expect(await run(['console', '--actions', '--port', '0', '--connect', connectString], io)).toBe(
      2,
    );
    expect(io.err()).toMatch(/token must be a string of 16 characters or more/);
    const bad = fakeIo();
    expect(await run(['console', 'locks', '--connect', connectString], bad)).toBe(2);
  });
});
