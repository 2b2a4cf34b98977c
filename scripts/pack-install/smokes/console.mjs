/**
 * @zkrx/console from its tarball, alone: the console serves its page and its files (read from
 * the package), a lock held on the test server comes down its live stream, and the action
 * routes answer 403 on a read-only console.
 */
export default async function smoke(load, { connect, root }) {
  const { createClient } = await load('@zkrx/core');
  const { acquire } = await load('@zkrx/lock');
  const { startConsole, ConsoleError } = await load('@zkrx/console');
  const client = createClient({ connect });
  await client.connected();
  const running = await startConsole({ client });
  const lease = await acquire(client, `${root}/console-smoke`, { data: 'smoke-holder:1' });
  try {
    const page = await fetch(new URL(`locks?path=${encodeURIComponent(root)}`, running.url));
    if (!(await page.text()).includes('assets/console.js')) throw new Error('no page');
    const script = await fetch(new URL('assets/console.js', running.url));
    if (!(await script.text()).includes('EventSource')) throw new Error('no script');
    const forged = await fetch(new URL('api/actions/release', running.url), {
      method: 'POST',
      body: '{}',
    });
    if (forged.status !== 403) throw new Error(`a read-only console answered ${forged.status}`);
    const controller = new AbortController();
    const stream = await fetch(
      new URL(`api/stream?view=locks&path=${encodeURIComponent(root)}`, running.url),
      {
        signal: controller.signal,
      },
    );
    const reader = stream.body.getReader();
    let text = '';
    while (!text.includes('smoke-holder:1')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended: ${text}`);
      text += new TextDecoder().decode(value);
    }
    controller.abort();
    let refused = false;
    try {
      await startConsole({ client, actions: true });
    } catch (error) {
      refused = ConsoleError.isInstance(error) && error.code === 'BadOptions';
    }
    if (!refused) throw new Error('actions without a token were not refused');
  } finally {
    await lease.release();
    await running.close();
    await client.close();
  }
  return 'page, script, live stream, 403 read-only';
}
