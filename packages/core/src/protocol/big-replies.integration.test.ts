/**
 * A reply larger than `maxFrameBytes` (a big node, a long children list) costs its own call, and
 * nothing else: the call fails with ZkError `ReplyTooLarge` naming the size and the option, is
 * not retried, and the calls around it, the connection and the session go on.
 */
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  record,
  rejectionOf,
  statesOf,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';

const LIMIT = 4 * 1024;

// The C client has its own buffers; this is the TypeScript transport's reader.
describe.runIf(transportName === 'typescript')('a reply over maxFrameBytes', () => {
  it('fails that call alone, not retried, with the size and the option named', async () => {
    const root = await testRoot();
    const writer = await connectedClient();
    await writer.promises.create(`${root}/big`, Buffer.alloc(3 * LIMIT, 0x62));
    await writer.promises.create(`${root}/small`, 'ok');
    const client = await connectedClient({ maxFrameBytes: LIMIT });
    const sessionId = client.sessionId;
    const session = record(client.session$);
    // Three calls in one write: the big reply sits between two small ones.
    const before = client.promises.get(`${root}/small`);
    const big = rejectionOf(client.promises.get(`${root}/big`));
    const after = client.promises.children(root);
    const error = await big;
    expect(error.code).toBe('ReplyTooLarge');
    expect(error.isRetryable).toBe(false);
    expect(error.path).toBe(`${root}/big`);
    expect(error.message).toContain(`get ${root}/big`);
    expect(error.message).toMatch(/the reply is \d+ bytes, over maxFrameBytes \(4096\)/);
    expect((await before).data.toString()).toBe('ok');
    expect(await after).toEqual(['big', 'small']);
    expect(statesOf(session)).toEqual(['connected']);
    expect(client.sessionId).toBe(sessionId);
  });

  it('fails a children list over the limit the same way', async () => {
    const root = await testRoot();
    const writer = await connectedClient();
    const name = (index: number) => `${String(index).padStart(4, '0')}-${'n'.repeat(60)}`;
    await writer.promises.multi(
      Array.from({ length: 100 }, (_, index) => ({
        type: 'create' as const,
        path: `${root}/${name(index)}`,
      })),
    );
    const client = await connectedClient({ maxFrameBytes: LIMIT });
    const session = record(client.session$);
    const error = await rejectionOf(client.promises.children(root));
    expect(error.code).toBe('ReplyTooLarge');
    expect(await client.promises.getAllChildrenNumber(root)).toBe(100);
    expect(statesOf(session)).toEqual(['connected']);
  });

  it('ends a watchData on such a node with the error, and the session does not flap', async () => {
    const root = await testRoot();
    const writer = await connectedClient();
    await writer.promises.create(`${root}/big`, Buffer.alloc(3 * LIMIT, 0x62));
    const client = await connectedClient({ maxFrameBytes: LIMIT });
    const session = record(client.session$);
    const watch = record(client.watchData(`${root}/big`));
    await waitFor(() => watch.error !== undefined);
    expect(watch.values).toEqual([]);
    expect((watch.error as { code?: string }).code).toBe('ReplyTooLarge');
    expect((watch.error as Error).message).toContain(`watch data ${root}/big`);
    // A change to the node later reaches nobody and drops nothing.
    await writer.promises.set(`${root}/big`, Buffer.alloc(3 * LIMIT, 0x63));
    await client.promises.sync(root);
    expect((await client.promises.exists(`${root}/big`))?.version).toBe(1);
    expect(statesOf(session)).toEqual(['connected']);
  });
});
