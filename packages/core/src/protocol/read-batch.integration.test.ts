/**
 * Watchless gets of one turn go as one multiRead (protocol/read-batch.ts). Each test attacks one
 * guarantee the safety argument there names, against a real ZooKeeper, and reads the requests
 * off the wire (a tap between client and server), not off the client's word:
 * - order: a write made between two gets is sent between them, so each get reads what the
 *   session wrote before it and nothing it wrote after;
 * - one state, one result each: an error fails its own get only;
 * - no watch: a get that sets one is never in a batch, and its watch fires;
 * - a withdrawn get never reaches the server;
 * - a batch's reply over maxFrameBytes: the gets go again alone when nothing was written since,
 *   and fail ReplyTooLarge (saying why) when a write went after them;
 * - a connection lost with a batch in flight: each get is answered after the reconnection.
 */
import { firstValueFrom, skip } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  batchingClient,
  connectedClient,
  proxyTo,
  rejectionOf,
  requestTap,
  type TappedRequest,
  testRoot,
  transportName,
  waitFor,
} from '../../test/support';
import type { ZkClientOptions } from '../client/client-options';
import { OpCode } from '../wire/codes';

/** The requests after `from`, as `type` or `type[ops]` (e.g. `22[4,4]`). */
function wire(requests: readonly TappedRequest[], from = 0): string[] {
  return requests.slice(from).map((r) => (r.ops ? `${r.type}[${r.ops.join(',')}]` : `${r.type}`));
}

const GET = `${OpCode.getData}`;
const SET = `${OpCode.setData}`;
const batchOf = (n: number) => `${OpCode.multiRead}[${Array(n).fill(OpCode.getData).join(',')}]`;

/**
 * A test root holding `nodes` (name → data), a connected client whose requests pass through a
 * tap (and through a proxy too, with `proxy`: then `proxy` is set), and `from`: the tap's count
 * once set up.
 */
async function tappedClient(
  nodes: Record<string, string | Buffer>,
  options: Partial<ZkClientOptions> & { proxy?: boolean } = {},
) {
  const { proxy: throughProxy, ...clientOptions } = options;
  const root = await testRoot();
  const tap = await requestTap();
  const proxy = throughProxy ? await proxyTo(tap.connectString) : undefined;
  const connect = proxy?.connectString ?? tap.connectString;
  const client = await (clientOptions.batchReads === false ? connectedClient : batchingClient)({
    ...clientOptions,
    connect,
  });
  for (const [name, data] of Object.entries(nodes)) {
    await client.promises.create(`${root}/${name}`, data);
  }
  return { root, tap, proxy, client, from: tap.requests.length };
}

/** `{ a: 'a', b: 'b', … }`: nodes whose data is their name. */
const named = (...names: string[]) => Object.fromEntries(names.map((name) => [name, name]));

// The C client sends every get alone; this is the TypeScript transport's pipeline.
describe.runIf(transportName === 'typescript')('gets of one turn in one multiRead', () => {
  it('sends them as one request, each answered as its own call', async () => {
    const { root, tap, client, from } = await tappedClient(named('a', 'b', 'c'));
    const values = await Promise.all(
      ['a', 'b', 'c'].map((name) => client.promises.get(`${root}/${name}`)),
    );
    expect(values.map((v) => v.data.toString())).toEqual(['a', 'b', 'c']);
    expect(values.map((v) => v.stat.version)).toEqual([0, 0, 0]);
    expect(wire(tap.requests, from)).toEqual([batchOf(3)]);
    // A get made alone goes alone.
    expect((await client.promises.get(`${root}/a`)).data.toString()).toBe('a');
    expect(wire(tap.requests, from + 1)).toEqual([GET]);
  });

  it('keeps each get in its place among the writes of the same turn', async () => {
    const { root, tap, client, from } = await tappedClient({ a: '0', b: 'b' });
    const p = client.promises;
    const calls = [
      p.set(`${root}/a`, '1'),
      p.get(`${root}/a`),
      p.get(`${root}/b`),
      p.set(`${root}/a`, '2'),
      p.get(`${root}/a`),
      p.get(`${root}/a`),
    ];
    const results = await Promise.all(calls);
    const read = (i: number) => (results[i] as { data: Buffer }).data.toString();
    // Read-your-writes on both sides of each write: never the write made after the get.
    expect([read(1), read(2), read(4), read(5)]).toEqual(['1', 'b', '2', '2']);
    expect(wire(tap.requests, from)).toEqual([SET, batchOf(2), SET, batchOf(2)]);
  });

  it('fails only the get whose node is missing', async () => {
    const { root, tap, client, from } = await tappedClient(named('a', 'c'));
    const a = client.promises.get(`${root}/a`);
    const missing = rejectionOf(client.promises.get(`${root}/missing`));
    const c = client.promises.get(`${root}/c`);
    const error = await missing;
    expect(error.code).toBe('NoNode');
    expect(error.path).toBe(`${root}/missing`);
    expect((await a).data.toString()).toBe('a');
    expect((await c).data.toString()).toBe('c');
    expect(wire(tap.requests, from)).toEqual([batchOf(3)]);
  });

  it('never puts a get that sets a watch in a batch, and its watch fires', async () => {
    const { root, tap, client, from } = await tappedClient(named('a', 'b', 'c', 'd'));
    const a = client.promises.get(`${root}/a`);
    const b = client.promises.get(`${root}/b`);
    const changed = firstValueFrom(client.watchData(`${root}/w-target`).pipe(skip(1)));
    const c = client.promises.get(`${root}/c`);
    const d = client.promises.get(`${root}/d`);
    expect([(await a).data, (await b).data, (await c).data, (await d).data].join()).toBe('a,b,c,d');
    await waitFor(() => tap.requests.slice(from).some((r) => r.watch === true));
    const sent = tap.requests.slice(from);
    // The four plain gets went in batches; everything else sent is the watch's reads, each
    // alone and each setting its watch.
    const batched = sent.filter((r) => r.type === OpCode.multiRead);
    expect(batched.flatMap((r) => r.ops)).toEqual(Array(4).fill(OpCode.getData));
    const alone = sent.filter((r) => r.type !== OpCode.multiRead);
    expect(alone.length).toBeGreaterThan(0);
    expect(alone.every((r) => r.watch === true)).toBe(true);
    await client.promises.create(`${root}/w-target`, 'here');
    expect((await changed)?.data.toString()).toBe('here');
  });

  it('sends no get withdrawn before its turn ended', async () => {
    const { root, tap, client, from } = await tappedClient(named('a', 'b', 'c'));
    const controller = new AbortController();
    const a = client.promises.get(`${root}/a`);
    const b = rejectionOf(client.promises.get(`${root}/b`, { signal: controller.signal }));
    const c = client.promises.get(`${root}/c`);
    controller.abort();
    const error = await b;
    expect(error.code).toBe('Aborted');
    expect(error.message).toContain('not applied');
    expect([(await a).data, (await c).data].join()).toBe('a,c');
    expect(wire(tap.requests, from)).toEqual([batchOf(2)]);
  });

  describe('a batch whose reply is over maxFrameBytes', () => {
    const LIMIT = 64 * 1024;
    const NODE = 20 * 1024; // four of them: about 80 KiB together, each alone fits

    /** Four nodes of NODE bytes (`a`…`d` repeated), read by a client with maxFrameBytes LIMIT. */
    async function bigNodes(options: { proxy?: boolean } = {}) {
      const names = ['n0', 'n1', 'n2', 'n3'];
      const nodes = Object.fromEntries(
        names.map((name, i) => [name, Buffer.alloc(NODE, 0x61 + i)]),
      );
      const setup = await tappedClient(nodes, { ...options, maxFrameBytes: LIMIT });
      return { ...setup, paths: names.map((name) => `${setup.root}/${name}`) };
    }

    it('sends the gets again alone when the session wrote nothing since, and batches fewer after', async () => {
      const { tap, client, paths, from } = await bigNodes();
      const values = await Promise.all(paths.map((path) => client.promises.get(path)));
      expect(values.map((v) => [v.data.length, v.data[0]])).toEqual([
        [NODE, 0x61],
        [NODE, 0x62],
        [NODE, 0x63],
        [NODE, 0x64],
      ]);
      expect(wire(tap.requests, from)).toEqual([batchOf(4), GET, GET, GET, GET]);
      // It learned: at 20 KiB a get, half of 64 KiB holds one: no batch any more.
      const again = tap.requests.length;
      await Promise.all(paths.map((path) => client.promises.get(path)));
      expect(wire(tap.requests, again)).toEqual([GET, GET, GET, GET]);
      expect(client.state).toBe('connected');
    });

    it('answers the gets sent again at their place: before a read made after them', async () => {
      // get(a…d); children(root): the batch's reply is too large, the gets go again after the
      // listing, whose reply comes first — they are still answered first, in the order made.
      const { client, paths, root } = await bigNodes();
      const order: string[] = [];
      const calls = [
        ...paths.map((path, i) => client.promises.get(path).then(() => order.push(`get ${i}`))),
        client.promises.children(root).then(() => order.push('children')),
      ];
      await Promise.all(calls);
      expect(order).toEqual(['get 0', 'get 1', 'get 2', 'get 3', 'children']);
    });

    it('fails them ReplyTooLarge, saying why, when a write went after them', async () => {
      const { tap, proxy, client, paths, from } = await bigNodes({ proxy: true });
      proxy!.holdReplies(true);
      const gets = paths.map((path) => rejectionOf(client.promises.get(path)));
      await waitFor(() => wire(tap.requests, from).includes(batchOf(4)));
      // The batch is at the server; now a write, sent before its reply comes back.
      const set = client.promises.set(paths[0]!, 'written after');
      await waitFor(() => wire(tap.requests, from).includes(SET));
      proxy!.holdReplies(false);
      for (const error of await Promise.all(gets)) {
        expect(error.code).toBe('ReplyTooLarge');
        expect(error.isRetryable).toBe(false);
        expect(error.message).toMatch(
          /one multiRead with 3 others and their replies together are \d+ bytes/,
        );
        expect(error.message).toContain('batchReads: false');
      }
      expect((await set).version).toBe(1);
      // Nothing else was harmed: the same gets, made again, are answered alone.
      expect((await client.promises.get(paths[0]!)).data.toString()).toBe('written after');
      expect((await client.promises.get(paths[1]!)).data.length).toBe(NODE);
      expect(wire(tap.requests, from)).toEqual([batchOf(4), SET, GET, GET]);
    });
  });

  it('answers every get of a batch lost with its connection, after the reconnection', async () => {
    const { root, tap, proxy, client, from } = await tappedClient(named('a', 'b', 'c'), {
      proxy: true,
    });
    proxy!.holdReplies(true);
    const gets = ['a', 'b', 'c'].map((name) => client.promises.get(`${root}/${name}`));
    await waitFor(() => wire(tap.requests, from).includes(batchOf(3)));
    proxy!.cut();
    proxy!.holdReplies(false);
    const values = await Promise.all(gets);
    expect(values.map((v) => v.data.toString())).toEqual(['a', 'b', 'c']);
  });

  it('sends every get alone with batchReads: false', async () => {
    const { root, tap, client, from } = await tappedClient(named('a', 'b'), { batchReads: false });
    await Promise.all(['a', 'b'].map((name) => client.promises.get(`${root}/${name}`)));
    expect(wire(tap.requests, from)).toEqual([GET, GET]);
  });
});
