/**
 * The two adapters agree on what a lock is: by default Nest's `@Locked(path)` and Express's
 * `zkLock({ path })` take the same lock (the mutex), so they exclude each other —
 * and with `lock: 'read'` on either side, a reader still waits for the other's holder. And on
 * what a request answers when its lock is in the way: status, Retry-After, body.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Injectable, Post } from '@nestjs/common';
import { leaseOf, zkLock } from '@zkrx/express';
import { acquire } from '@zkrx/lock';
import type { LockKind } from '@zkrx/rwlock';
import { connectedClient, lockPath } from '@zkrx/test-support';
import { startProxy, type TcpProxy, testZooKeeper } from '@zkrx/testing';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, startHttpApp } from '../../test/nest-apps';
import { Locked, lockSignal } from '../index';

function holdingService(path: string) {
  @Injectable()
  class Holder {
    release: () => void = () => {};
    private enter: () => void = () => {};
    readonly entered = new Promise<void>((resolve) => {
      this.enter = resolve;
    });

    @Locked(path)
    async hold(): Promise<void> {
      this.enter();
      await new Promise<void>((resolve) => {
        this.release = resolve;
      });
    }
  }
  return Holder;
}

async function expressApp(path: string, lock: LockKind | undefined) {
  const client = await connectedClient();
  const app = express();
  app.post(
    '/work',
    zkLock({ client, path, mode: 'skip', ...(lock ? { lock } : {}) }),
    (_request, response) => {
      response.json({ ran: true });
    },
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/work`;
  return {
    post: () => fetch(url, { method: 'POST' }).then((response) => response.status),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('@Locked and zkLock on one path', () => {
  it.each([undefined, 'mutex', 'read', 'write'] as const)(
    'exclude each other (Express lock: %s)',
    async (lock) => {
      const path = lockPath('shared');
      const Holder = holdingService(path);
      const nest = await startApp({ providers: [Holder] });
      const holder = nest.get(Holder);
      const http = await expressApp(path, lock);
      try {
        const running = holder.hold();
        await holder.entered;
        // Busy while the Nest method holds the lock (mode: 'skip' answers 409 at once).
        expect(await http.post()).toBe(409);
        holder.release();
        await running;
        // Free once it returned: the request runs (its release may take a round trip more).
        let status = await http.post();
        while (status === 409) status = await http.post();
        expect(status).toBe(200);
      } finally {
        holder.release();
        await http.close();
      }
    },
  );
});

// Longer than the test's own timeout: a request that did not answer at once fails the test.
const longMs = 10 * 60_000;

/** Express and Nest serving the same four routes, each under a lock on `path`. */
async function bothAdapters(path: string) {
  const nestProxy = await startProxy((await testZooKeeper()).connectString);
  const expressProxy = await startProxy((await testZooKeeper()).connectString);
  proxies.push(nestProxy, expressProxy);

  @Controller()
  class Orders {
    @Post('skip')
    @Locked(path, { mode: 'skip' })
    async skip(): Promise<unknown> {
      return { ran: true };
    }

    @Post('wait')
    @Locked(path, { timeoutMs: 50 })
    async wait(): Promise<unknown> {
      return { ran: true };
    }

    @Post('long')
    @Locked(path, { timeoutMs: longMs })
    async long(): Promise<unknown> {
      return { ran: true };
    }

    /** Runs until the lock is lost, then stops with why. */
    @Post('hold')
    @Locked(path)
    async hold(): Promise<unknown> {
      const signal = lockSignal() as AbortSignal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw signal.reason;
    }
  }
  const nest = await startHttpApp({
    controllers: [Orders],
    zk: { connect: nestProxy.connectString },
  });

  const client = await connectedClient({ connect: expressProxy.connectString });
  const app = express();
  app.post('/skip', zkLock({ client, path, mode: 'skip' }), (_request, response) => {
    response.json({ ran: true });
  });
  app.post('/wait', zkLock({ client, path, timeoutMs: 50 }), (_request, response) => {
    response.json({ ran: true });
  });
  app.post('/long', zkLock({ client, path, timeoutMs: longMs }), (_, response) => {
    response.json({ ran: true });
  });
  app.post('/hold', zkLock({ client, path }), async (_request, response) => {
    const { signal } = leaseOf(response);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    throw signal.reason; // Express 5: to the error handler, with the error's status and headers
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  servers.push(server);
  const expressUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  /** POSTs `route` to one adapter: status, the headers that say when to retry, JSON body. */
  const post = async (base: string, route: string) => {
    const response = await fetch(`${base}/${route}`, { method: 'POST' });
    const type = response.headers.get('content-type') ?? '';
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      cacheControl: response.headers.get('cache-control'),
      body: type.includes('json') ? await response.json() : undefined,
    };
  };
  return {
    nest: (route: string) => post(nest.url, route),
    express: (route: string) => post(expressUrl, route),
    nestProxy,
    expressProxy,
  };
}

const proxies: TcpProxy[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('@Locked and zkLock answer alike', () => {
  it('409 with Retry-After while busy (not waited for, or not in time), the same body', async () => {
    const path = lockPath('orders');
    const both = await bothAdapters(path);
    const holder = await acquire(await connectedClient(), path);
    for (const route of ['skip', 'wait']) {
      const [nest, viaExpress] = [await both.nest(route), await both.express(route)];
      expect(nest).toEqual(viaExpress);
      expect(nest).toMatchObject({
        status: 409,
        retryAfter: '1',
        cacheControl: 'no-store',
        body: { error: route === 'skip' ? 'lock-busy' : 'lock-timeout' },
      });
    }
    await holder.release();
  });

  it('503 at once while ZooKeeper is out of reach, whatever the timeout', async () => {
    const path = lockPath('orders');
    const both = await bothAdapters(path);
    for (const proxy of [both.nestProxy, both.expressProxy]) {
      proxy.refuse(true);
      proxy.cut();
    }
    const [nest, viaExpress] = [await both.nest('long'), await both.express('long')];
    expect(nest).toEqual(viaExpress);
    expect(nest).toMatchObject({
      status: 503,
      retryAfter: '1',
      cacheControl: 'no-store',
      body: { error: 'zookeeper-unavailable' },
    });
  });

  it('503 with Retry-After when the lock is lost mid-request', async () => {
    const path = lockPath('orders');
    const both = await bothAdapters(path);
    const admin = await connectedClient();
    for (const side of ['nest', 'express'] as const) {
      const answered = both[side]('hold');
      // Held: delete its node, as an operator's `zkrx release --force` would.
      const [node] = await new Promise<readonly string[]>((resolve) => {
        const subscription = admin.watchChildren(path).subscribe((names) => {
          if (names.length === 0) return;
          queueMicrotask(() => subscription.unsubscribe());
          resolve(names);
        });
      });
      await admin.promises.delete(`${path}/${node}`);
      expect(await answered, side).toMatchObject({
        status: 503,
        retryAfter: '1',
        cacheControl: 'no-store',
      });
    }
  });
});
