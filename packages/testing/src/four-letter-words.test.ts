/**
 * Unit tests of the four-letter-word client and the mntr / srvr parsers, against a fake
 * TCP server.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { fourLetterWord, mntr, parseMntr, parseServerMode } from './four-letter-words';

describe('parseMntr', () => {
  it('parses numbers as numbers and keeps other values as text', () => {
    const metrics = parseMntr(
      [
        'zk_version\t3.8.0-abc, built on 2024-12-29 17:54 UTC',
        'zk_server_state\tstandalone',
        'zk_avg_latency\t0.25',
        'zk_packets_sent\t12',
        'zk_watch_count\t0',
        'zk_max_latency\t-1',
        '',
      ].join('\n'),
    );
    expect(metrics).toEqual({
      zk_version: '3.8.0-abc, built on 2024-12-29 17:54 UTC',
      zk_server_state: 'standalone',
      zk_avg_latency: 0.25,
      zk_packets_sent: 12,
      zk_watch_count: 0,
      zk_max_latency: -1,
    });
  });

  it('ignores lines without a tab', () => {
    expect(parseMntr('This ZooKeeper instance is not currently serving requests\n')).toEqual({});
  });
});

describe('parseServerMode', () => {
  it('reads the Mode line of srvr', () => {
    expect(parseServerMode('Zxid: 0x0\nMode: leader\nNode count: 5\n')).toBe('leader');
    expect(parseServerMode('This ZooKeeper instance is not currently serving requests')).toBe(
      undefined,
    );
  });
});

describe('fourLetterWord', () => {
  let server: Server | undefined;
  afterEach(() => {
    server?.close();
    server = undefined;
  });

  /** A fake server: answers each word with `answer(word)` (or stays silent) and closes. */
  const fakeServer = async (answer: (word: string) => string | undefined) => {
    server = createServer((socket) => {
      socket.once('data', (chunk) => {
        const reply = answer(chunk.toString());
        if (reply !== undefined) socket.end(reply);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('no port');
    return `127.0.0.1:${address.port}`;
  };

  it('sends the word and resolves with everything until the server closes', async () => {
    const hostPort = await fakeServer((word) => (word === 'ruok' ? 'imok' : undefined));
    expect(await fourLetterWord(hostPort, 'ruok')).toBe('imok');
  });

  it('parses mntr answers', async () => {
    const hostPort = await fakeServer(() => 'zk_watch_count\t3\nzk_server_state\tleader\n');
    expect(await mntr(hostPort)).toEqual({ zk_watch_count: 3, zk_server_state: 'leader' });
  });

  it('rejects after the timeout when the server does not answer', async () => {
    const hostPort = await fakeServer(() => undefined);
    await expect(fourLetterWord(hostPort, 'srvr', 200)).rejects.toThrow(/No answer to "srvr"/);
  });

  it('rejects what is not a four-letter word', async () => {
    await expect(fourLetterWord('127.0.0.1:1', 'ruok?')).rejects.toThrow(/Not a four-letter word/);
  });

  it('rejects when nothing listens', async () => {
    const hostPort = await fakeServer(() => undefined);
    server!.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(fourLetterWord(hostPort, 'ruok', 1_000)).rejects.toThrow(/ECONNREFUSED/);
  });
});
