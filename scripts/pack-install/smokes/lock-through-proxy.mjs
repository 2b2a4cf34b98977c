/**
 * @zkrx/lock installed with `npm --ignore-scripts` (no compiler, no install script): a lock taken
 * through a fault proxy, the connection cut, the same session back, the lock still held; then a
 * clean close. And no native addon anywhere: nothing installed the `zookeeper` binding.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export default async function smoke(load, { server, chroot }) {
  const { createClient } = await load('@zkrx/core');
  const { acquire, tryAcquire } = await load('@zkrx/lock');
  const { startProxy } = await load('@zkrx/testing');
  if (existsSync(join(process.cwd(), 'node_modules', 'zookeeper'))) {
    throw new Error('the native zookeeper binding was installed');
  }
  const proxy = await startProxy(server);
  const client = createClient({
    connect: `${proxy.connectString}${chroot}`,
    sessionTimeoutMs: 10_000,
  });
  const other = createClient({ connect: `${server}${chroot}` });
  try {
    const lease = await acquire(client, '/smoke/lock', {
      onSuspended: 'continue',
      timeoutMs: 10_000,
    });
    const sessionId = client.sessionId;
    const states = [];
    const watching = client.session$.subscribe(({ state }) => states.push(state));
    proxy.cut();
    await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no reconnection: ${states.join(' → ')}`)),
        30_000,
      );
      const check = client.session$.subscribe(({ state }) => {
        if (state !== 'reconnected') return;
        clearTimeout(timer);
        queueMicrotask(() => check.unsubscribe());
        resolve();
      });
    });
    watching.unsubscribe();
    if (client.sessionId !== sessionId) throw new Error('a new session instead of the same one');
    if (!lease.isHeld) throw new Error(`the lease did not survive the cut: ${lease.state}`);
    if ((await tryAcquire(other, '/smoke/lock')) !== null) throw new Error('two holders');
    await lease.release();
    await client.close();
    return `@zkrx/lock (--ignore-scripts): held through a cut (${states.join(' → ')}), closed`;
  } finally {
    await client.close();
    await other.close();
    await proxy.close();
  }
}
