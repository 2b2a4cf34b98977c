/**
 * Transactions against a real ZooKeeper: every op applied or none, the failing op's code, path
 * and index in the error, bad ops refused before sending; the native transport has none.
 */
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  connectedClient,
  listTree,
  rejectionOf,
  testRoot,
  transportName,
} from '../../test/support';
import { op } from '../index';

const SEQUENCE = /^\d{10}$/;

describe.runIf(transportName === 'typescript')('multi', () => {
  it('applies every op at once and reports what each did', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    await client.promises.create(`${root}/config`, 'v0');
    await client.promises.create(`${root}/old`, 'x');
    const results = await client.promises.multi([
      op.check(`${root}/config`, 0),
      op.create(`${root}/job-`, 'payload', { sequential: true }),
      op.create(`${root}/owner`, 'me', { mode: 'ephemeral' }),
      op.set(`${root}/config`, 'v1', 0),
      op.delete(`${root}/old`),
    ]);
    expect(results.map((result) => result.type)).toEqual([
      'check',
      'create',
      'create',
      'set',
      'delete',
    ]);
    const job = results[1] as { path: string };
    expect(job.path.slice(`${root}/job-`.length)).toMatch(SEQUENCE);
    expect((results[3] as { stat: { version: number } }).stat.version).toBe(1);
    expect(await listTree(client, root)).toEqual(
      ['/config', job.path.slice(root.length), '/owner'].sort(),
    );
    expect((await client.promises.exists(`${root}/owner`))?.ephemeralOwner).toBe(client.sessionId);
    expect((await client.promises.get(`${root}/config`)).data.toString()).toBe('v1');
  });

  it('applies none when one op fails, and names that op: its code, path and index', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    await client.promises.create(`${root}/config`, 'v0');
    const failed = await rejectionOf(
      client.promises.multi([
        op.create(`${root}/a`, 'x'),
        op.set(`${root}/config`, 'v1'),
        op.delete(`${root}/missing`),
        op.create(`${root}/b`, 'y'),
      ]),
    );
    expect(failed).toMatchObject({ code: 'NoNode', path: `${root}/missing`, opIndex: 2, rc: -101 });
    expect(failed.isRetryable).toBe(false);
    expect(failed.message).toContain('no op was applied');
    expect(await listTree(client, root)).toEqual(['/config']);
    expect((await client.promises.get(`${root}/config`)).data.toString()).toBe('v0');

    const stale = await rejectionOf(
      firstValueFrom(client.multi([op.check(`${root}/config`, 7), op.create(`${root}/c`, 'z')])),
    );
    expect(stale).toMatchObject({ code: 'BadVersion', opIndex: 0 });
    const exists = await rejectionOf(
      client.promises.multi([op.create(`${root}/d`), op.create(`${root}/config`)]),
    );
    expect(exists).toMatchObject({ code: 'NodeExists', opIndex: 1, path: `${root}/config` });
    expect(await listTree(client, root)).toEqual(['/config']);
  });

  it('refuses a bad op before sending anything, naming its index', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const badPath = await rejectionOf(
      client.promises.multi([op.create(`${root}/fine`), op.set('relative', 'x')]),
    );
    expect(badPath).toMatchObject({ code: 'InvalidPath', opIndex: 1 });
    const badVersion = await rejectionOf(client.promises.multi([op.delete(`${root}/x`, -5)]));
    expect(badVersion).toMatchObject({ code: 'BadArguments', opIndex: 0 });
    const notAnOp = await rejectionOf(client.promises.multi([{ type: 'rename' } as never]));
    expect(notAnOp).toMatchObject({ code: 'BadArguments', opIndex: 0 });
    const tooBig = await rejectionOf(
      client.promises.multi([
        op.create(`${root}/a`, Buffer.alloc(600_000)),
        op.create(`${root}/b`, Buffer.alloc(600_000)),
      ]),
    );
    expect(tooBig.code).toBe('BadArguments');
    expect(tooBig.message).toContain('jute.maxbuffer');
    expect(await client.promises.multi([])).toEqual([]);
    expect(await listTree(client, root)).toEqual([]);
  });
});

describe.runIf(transportName === 'native')('multi on the native transport', () => {
  it('rejects with Unimplemented naming the default transport, and sends nothing', async () => {
    const client = await connectedClient();
    const root = await testRoot();
    const error = await rejectionOf(client.promises.multi([op.create(`${root}/a`)]));
    expect(error.code).toBe('Unimplemented');
    expect(error.message).toContain('default (TypeScript) transport');
    expect(await listTree(client, root)).toEqual([]);
  });
});
