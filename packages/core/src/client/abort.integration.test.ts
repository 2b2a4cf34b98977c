/**
 * Every operation takes `{ signal }`, as `fetch` does: it rejects with a `ZkAbortError` soon
 * after the abort, whatever the connection does. A request not written yet is withdrawn (never
 * applied); one already sent may still be applied, and the error says which.
 */
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  openClient,
  partition,
  proxyTo,
  rejectionOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import { ZkAbortError, ZkError } from '../index';

/**
 * An unversioned set given a signal, through a proxy that holds the server's replies: the server
 * applied it (an observer reads the new value) and its reply has not come back.
 */
async function setAppliedReplyHeld() {
  const proxy = await proxyTo();
  const client = await connectedClient({ connect: proxy.connectString });
  const observer = await connectedClient();
  const root = await testRoot();
  await observer.promises.create(`${root}/value`, 'before');
  proxy.holdReplies(true);
  const controller = new AbortController();
  const write = rejectionOf(
    client.promises.set(`${root}/value`, 'after', { signal: controller.signal }),
  );
  await waitFor(
    async () => (await observer.promises.get(`${root}/value`)).data.toString() === 'after',
  );
  return { proxy, client, root, controller, write };
}

describe('a call given up by its signal', () => {
  it('rejects at once when the signal is already aborted, sending nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const controller = new AbortController();
    const reason = new Error('not wanted');
    controller.abort(reason);
    const error = await rejectionOf(
      client.promises.create(`${root}/never`, 'x', { signal: controller.signal }),
    );
    expect(ZkAbortError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ name: 'AbortError', code: 'Aborted', sent: false });
    expect(error.cause).toBe(reason);
    expect(await client.promises.exists(`${root}/never`)).toBeNull();
  });

  it('gives up a read waiting for a connection at once, the connection still down', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const root = await testRoot();
    await partition(proxy, client);
    const controller = new AbortController();
    const read = rejectionOf(client.promises.get(root, { signal: controller.signal }));
    controller.abort();
    const error = await read;
    expect(error).toMatchObject({ name: 'AbortError', code: 'Aborted', path: root });
    // "At once": nothing could have reached the server since.
    expect(client.state).toBe('suspended');
  });

  // The C client queues a request while disconnected and sends it once reconnected: it cannot
  // be taken back there (its abort says the request may still be applied).
  it.runIf(transportName === 'typescript')(
    'withdraws a write waiting for a connection: it is never applied',
    async () => {
      const proxy = await proxyTo();
      const client = await connectedClient({ connect: proxy.connectString });
      const root = await testRoot();
      await partition(proxy, client);
      const controller = new AbortController();
      const write = rejectionOf(
        client.promises.create(`${root}/withdrawn`, 'x', { signal: controller.signal }),
      );
      controller.abort();
      const error = (await write) as ZkAbortError;
      expect(error.sent).toBe(false);
      expect(error.message).toContain('not applied');
      proxy.refuse(false);
      await waitFor(() => client.state === 'reconnected');
      // A write made after the reconnection lands; the withdrawn one never did.
      await client.promises.create(`${root}/after`, 'y');
      expect(await client.promises.exists(`${root}/withdrawn`)).toBeNull();
    },
  );

  it('says a write already sent may still be applied', async () => {
    const { proxy, client, root, controller, write } = await setAppliedReplyHeld();
    controller.abort();
    const error = (await write) as ZkAbortError;
    expect(error.sent).toBe(true);
    expect(error.message).toContain('may still be applied');
    proxy.holdReplies(false);
    // The late reply is read and dropped: the connection goes on.
    expect((await client.promises.get(`${root}/value`)).data.toString()).toBe('after');
    expect(client.state).toBe('connected');
  });

  it('says a retried write may have been applied when aborted between its attempts', async () => {
    // An unversioned set is retried after a lost connection (idempotent). Its first attempt
    // reached the server; the connection drops before the reply; the call is aborted while it
    // waits to be sent again: it may have been applied, and it was.
    const { proxy, client, controller, write } = await setAppliedReplyHeld();
    await partition(proxy, client);
    controller.abort();
    const error = (await write) as ZkAbortError;
    expect(ZkAbortError.isInstance(error)).toBe(true);
    expect(error.sent).toBe(true);
    expect(error.message).toContain('may still be applied');
  });

  it('takes AbortSignal.timeout as a deadline for a call the server never answers', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString, retry: false });
    const root = await testRoot();
    proxy.pause();
    const error = await rejectionOf(
      client.promises.getAcl(root, { signal: AbortSignal.timeout(200) }),
    );
    expect(error).toMatchObject({ name: 'AbortError', code: 'Aborted' });
    expect((error.cause as Error).name).toBe('TimeoutError');
    proxy.resume();
  });

  it('aborts a mkdirp between its steps, and the observable forms take a signal too', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const controller = new AbortController();
    controller.abort();
    expect(
      ZkAbortError.isInstance(
        await rejectionOf(client.promises.mkdirp(`${root}/a/b`, { signal: controller.signal })),
      ),
    ).toBe(true);
    const viaObservable = await firstValueFrom(
      client.exists(`${root}/a`, { signal: controller.signal }),
    ).catch((caught: unknown) => caught);
    expect(ZkAbortError.isInstance(viaObservable)).toBe(true);
    expect(await client.promises.exists(`${root}/a`)).toBeNull();
  });

  it('shares one signal among many calls in flight without a leak warning; an abort ends them all', async () => {
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString });
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      // A service's shutdown signal, given to every call.
      const shutdown = new AbortController();
      const { signal } = shutdown;
      await Promise.all(Array.from({ length: 50 }, () => client.promises.exists('/', { signal })));
      // Fifty more waiting for a connection, then given up together.
      await partition(proxy, client);
      const waiting = Array.from({ length: 50 }, () =>
        rejectionOf(client.promises.exists('/', { signal })),
      );
      shutdown.abort();
      const errors = await Promise.all(waiting);
      expect(errors.every((error) => ZkAbortError.isInstance(error))).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual(
        [],
      );
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('refuses a signal that is not an AbortSignal, sending nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const error = await rejectionOf(
      client.promises.create(`${root}/x`, 'x', { signal: 'soon' as never }),
    );
    expect(error).toBeInstanceOf(ZkError);
    expect(error.code).toBe('BadArguments');
    expect(await client.promises.exists(`${root}/x`)).toBeNull();
  });
});

describe('connected() given up by its signal', () => {
  it('rejects with a ZkAbortError while the server is unreachable; a number is still the timeout', async () => {
    const proxy = await proxyTo();
    proxy.refuse(true);
    const client = await openClient({ connect: proxy.connectString, connectTimeoutMs: 60_000 });
    const controller = new AbortController();
    const waiting = rejectionOf(client.connected({ signal: controller.signal }));
    controller.abort(new Error('shutting down'));
    const error = await waiting;
    expect(ZkAbortError.isInstance(error)).toBe(true);
    expect((error.cause as Error).message).toBe('shutting down');
    expect((await rejectionOf(client.connected(50))).code).toBe('ConnectTimeout');
    expect((await rejectionOf(client.connected({ timeoutMs: 50 }))).code).toBe('ConnectTimeout');
  });
});
