/**
 * The console mounted in a host application, behind the host's own auth: in Express
 * (`app.use('/zk', handler)`) and in Nest (`app.use` on a Nest application) — the page and its
 * files under the mount, a read-only user refused an action (403), an admin's action done and
 * audited with the host's user name.
 */
import 'reflect-metadata';
import type { IncomingMessage, Server } from 'node:http';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createClient, type ZkClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { connectedClients } from '@zkrx/test-support';
import { testZooKeeper, uniqueRoot } from '@zkrx/testing';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleUser } from './access';
import { type AuditEntry, type ConsoleHandler, consoleHandler } from './handler';

/** The host's auth: who the `x-user` header names (a stand-in for a session or an SSO proxy). */
function hostAuth(request: IncomingMessage): ConsoleUser | undefined {
  const user = request.headers['x-user'];
  if (user === 'alice') return { name: 'alice@example.com', canAct: true };
  if (user === 'bob') return { name: 'bob@example.com', canAct: false };
  return undefined;
}

let viewer: ZkClient;
beforeAll(async () => {
  viewer = createClient({ connect: (await testZooKeeper()).connectString });
  await viewer.connected();
});
afterAll(() => viewer.close());

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const address = server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}

/** What a mounted console must do, whatever mounts it. */
async function checkMounted(origin: string, audit: AuditEntry[]): Promise<void> {
  const page = await fetch(`${origin}/zk/locks?path=/`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('<base href="/zk/">');
  expect((await fetch(`${origin}/zk/assets/console.js`)).headers.get('content-type')).toMatch(
    /javascript/,
  );
  // The page names its script by its digest: kept by the browser under that URL, not under another.
  const versioned = /src="(assets\/console\.js\?v=[0-9a-f]{16})"/.exec(html)?.[1];
  expect(versioned).toBeDefined();
  const script = await fetch(`${origin}/zk/${versioned}`);
  expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  expect(await script.text()).toBe(await (await fetch(`${origin}/zk/assets/console.js`)).text());
  expect(
    (await fetch(`${origin}/zk/assets/console.js?v=0000000000000000`)).headers.get('cache-control'),
  ).toBe('no-store');
  expect((await fetch(`${origin}/zk`, { redirect: 'manual' })).headers.get('location')).toBe(
    '/zk/',
  );
  const me = async (user?: string) =>
    (await fetch(`${origin}/zk/api/me`, { headers: user ? { 'x-user': user } : {} })).json();
  expect(await me()).toMatchObject({ user: null, canAct: false });
  expect(await me('bob')).toMatchObject({ user: 'bob@example.com', canAct: false });
  const alice = await me('alice');
  expect(alice).toMatchObject({ user: 'alice@example.com', canAct: true, signIn: false });

  const [holder] = (await connectedClients(1)) as [ZkClient];
  const lease = await acquire(holder, `${uniqueRoot('console')}/mounted`);
  const release = (user: string, csrf: string) =>
    fetch(`${origin}/zk/api/actions/release`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-user': user, 'x-csrf-token': csrf, origin },
      body: JSON.stringify({ node: lease.node }),
    });
  const bob = await me('bob');
  expect((await release('bob', bob.csrf ?? '')).status).toBe(403);
  expect((await release('alice', 'not-the-token')).status).toBe(403);
  expect(await holder.promises.exists(lease.node)).not.toBeNull();
  expect(audit).toEqual([]);
  const done = await release('alice', alice.csrf);
  expect(done.status).toBe(200);
  expect(await holder.promises.exists(lease.node)).toBeNull();
  expect(audit).toMatchObject([
    { who: 'alice@example.com', action: 'release', node: lease.node, result: 'done' },
  ]);
}

describe('the console mounted in an application', () => {
  it('in Express, behind its auth', async () => {
    const audit: AuditEntry[] = [];
    const handler: ConsoleHandler = consoleHandler({
      client: viewer,
      actions: true,
      authorize: hostAuth,
      audit: (entry) => audit.push(entry),
    });
    const app = express();
    app.use('/zk', handler);
    const server = app.listen(0, '127.0.0.1');
    try {
      await checkMounted(await listening(server), audit);
    } finally {
      handler.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('in Nest, with app.use', async () => {
    const audit: AuditEntry[] = [];
    const handler = consoleHandler({
      client: viewer,
      actions: true,
      authorize: hostAuth,
      audit: (entry) => audit.push(entry),
    });
    class AppModule {}
    Module({})(AppModule);
    const app = await NestFactory.create(AppModule, { logger: false });
    app.use('/zk', handler);
    await app.listen(0, '127.0.0.1');
    try {
      await checkMounted(
        await app.getUrl().then((url) => url.replace('[::1]', '127.0.0.1')),
        audit,
      );
    } finally {
      handler.close();
      await app.close();
    }
  });
});

describe('the console closed with pages open', () => {
  it('writes nothing to a stream it ended (a session change after close() took the process down)', async () => {
    const client = createClient({ connect: (await testZooKeeper()).connectString });
    await client.connected();
    const handler = consoleHandler({ client });
    const server = express().use('/zk', handler).listen(0, '127.0.0.1');
    const origin = await listening(server);
    const page = await fetch(`${origin}/zk/api/stream?view=locks&path=/`);
    const reader = page.body!.getReader();
    // The stream is open once its first bytes came.
    expect((await reader.read()).done).toBe(false);
    handler.close();
    // The client's session changes after the console ended the stream: nothing is written to it
    // (before, the write after its end was an unhandled 'error' event: the process died).
    await client.close();
    while (!(await reader.read()).done) {}
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});
