/**
 * A connection lost under thousands of requests: every one is rejected, each with the typed
 * error it had before (a ZkError `ConnectionLoss` naming its call and path, retryable), and none
 * captures a stack trace — those were made in the socket's callback, named no caller, and were
 * the largest single cost of such a loss (a thousand members of one fleet each losing hundreds
 * at once). An error a server's reply makes (NoNode) is typed as ever and stackless too; one
 * made within the call itself keeps the caller's stack.
 */
import { describe, expect, it } from 'vitest';
import { connectedClient, proxyTo, rejectionOf, testRoot, waitFor } from '../../test/support';
import { joinPath, ZkError, ZkErrorCode } from '../index';

/** True when an error's stack names no frame (only its first line). */
const noFrames = (error: Error) => !(error.stack ?? '').includes('\n    at ');

describe('a connection lost under many requests', () => {
  it('rejects every one with ConnectionLoss, typed and stackless', async () => {
    const root = await testRoot();
    const proxy = await proxyTo();
    const client = await connectedClient({ connect: proxy.connectString, sessionTimeoutMs: 8_000 });
    // The server hears them all; its answers are held: all 5,000 are in flight.
    proxy.holdReplies();
    const count = 5_000;
    const outcomes = Array.from({ length: count }, (_, at) =>
      rejectionOf(client.promises.create(joinPath(root, `n${at}`))),
    );
    await waitFor(() => proxy.heldReplyBytes > 0);
    proxy.cut();
    const errors = await Promise.all(outcomes);
    for (const [at, error] of errors.entries()) {
      expect(ZkError.isInstance(error)).toBe(true);
      expect(error.code).toBe(ZkErrorCode.ConnectionLoss);
      expect(error.isRetryable).toBe(true);
      expect(error.path).toBe(joinPath(root, `n${at}`));
      expect(error.message).toContain(`create ${joinPath(root, `n${at}`)}`);
      expect(noFrames(error)).toBe(true);
    }
    // The session goes on: the client is back and serves calls.
    proxy.holdReplies(false);
    await client.connected(10_000);
    expect(await client.promises.exists(root)).not.toBeNull();
  });

  it('a reply that fails a call gives its typed error without a stack', async () => {
    const root = await testRoot();
    const client = await connectedClient();
    const error = await rejectionOf(client.promises.get(joinPath(root, 'none')));
    expect(error.code).toBe(ZkErrorCode.NoNode);
    expect(error.path).toBe(joinPath(root, 'none'));
    expect(noFrames(error)).toBe(true);
  });

  it('an error made within the call keeps the caller’s stack', async () => {
    const client = await connectedClient();
    await client.close();
    const error = await rejectionOf(client.promises.create('/anything'));
    expect(error.code).toBe(ZkErrorCode.ClientClosed);
    expect(noFrames(error)).toBe(false);
  });
});
