/**
 * zkLock on real Express apps (5 and 4), two instances each with its own session, against the
 * run's ZooKeeper: exclusion, parallel keys, busy and timeout answers, disconnects, outages.
 */
import type { ZkClient } from '@zkrx/core';
import { acquire, type Lease, LockLostError } from '@zkrx/lock';
import {
  childrenOf,
  connectedClient,
  connectedClients,
  IntervalLog,
  lockPath,
  sleep,
} from '@zkrx/test-support';
import { startProxy, type TcpProxy, testZooKeeper } from '@zkrx/testing';
import type { ErrorRequestHandler, Express, Request, RequestHandler } from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { deferred, type Flavour, flavours, listen, openRequest } from '../test/apps';
import { leaseOf, type ZkLockOptions, zkLock } from './index';

const proxies: TcpProxy[] = [];
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

/** A client whose connection goes through a proxy the test can cut. */
async function proxiedClient(): Promise<{ client: ZkClient; proxy: TcpProxy }> {
  const { connectString } = await testZooKeeper();
  const proxy = await startProxy(connectString);
  proxies.push(proxy);
  const client = await connectedClient({ connect: proxy.connectString, sessionTimeoutMs: 4_000 });
  return { client, proxy };
}

/** Answers what Express's error handling got: the error's class, code and status. */
const reportErrors: ErrorRequestHandler = (error, _request, response, _next) => {
  response.status(error.status ?? 500).json({
    name: error.name,
    code: error.code,
    status: error.status,
    reason: error.reason,
    message: error.message,
  });
};

/** An app with `POST /work/:key` locked on `${root}/${key}`, running `handler` while held. */
function lockedApp(
  flavour: Flavour,
  client: ZkClient,
  root: string,
  handler: RequestHandler,
  options: Partial<ZkLockOptions> = {},
): Express {
  const app = flavour.create();
  app.post(
    '/work/:key',
    zkLock({ client, path: (request) => `${root}/${String(request.params.key)}`, ...options }),
    handler,
  );
  app.use(reportErrors);
  return app;
}

/** A handler that records its hold in `log`, works `ms`, and answers its fencing token. */
function recording(log: IntervalLog, who: string, ms: number): RequestHandler {
  return (_request, response, next) => {
    const lease = leaseOf(response);
    const record = log.enter(who, lease.fencingToken);
    sleep(ms).then(() => {
      log.exit(record);
      response.json({ who, token: lease.fencingToken });
    }, next);
  };
}

describe.each(flavours)('zkLock on $name', (flavour) => {
  it('requests for one key on two instances never overlap, in fencing-token order', async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const log = new IntervalLog(1);
    const apps = [
      lockedApp(flavour, a!, root, recording(log, 'a', 30)),
      lockedApp(flavour, b!, root, recording(log, 'b', 30)),
    ];
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, index) => request(apps[index % 2]!).post('/work/42')),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(8).fill(200));
    expect(log.violations).toEqual([]);
    expect(log.holds).toHaveLength(8);
    const tokens = [...log.holds].sort((x, y) => x.start - y.start).map((hold) => hold.token);
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y));
    expect(new Set(tokens).size).toBe(8);
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/42`)).length === 0);
  });

  it('requests for different keys run in parallel', async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const log = new IntervalLog(Number.POSITIVE_INFINITY);
    // Each handler stays until all three are in: they only finish if they hold together.
    const allIn = deferred();
    const together: RequestHandler = (_request, response) => {
      const record = log.enter('any');
      if (log.maxInside === 3) allIn.resolve();
      void allIn.promise.then(() => {
        log.exit(record);
        response.json({});
      });
    };
    const appA = lockedApp(flavour, a!, root, together);
    const appB = lockedApp(flavour, b!, root, together);
    const responses = await Promise.all([
      request(appA).post('/work/1'),
      request(appB).post('/work/2'),
      request(appA).post('/work/3'),
    ]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(log.maxInside).toBe(3);
  });

  it("mode: 'skip' answers 409 with Retry-After while the path is busy, 200 once free", async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const entered = deferred();
    const finish = deferred();
    const holder = lockedApp(flavour, a!, root, (_request, response) => {
      entered.resolve();
      void finish.promise.then(() => response.json({ done: true }));
    });
    const impatient = lockedApp(
      flavour,
      b!,
      root,
      (_request, response) => {
        response.json({ got: true });
      },
      { mode: 'skip', retryAfterSeconds: 3 },
    );
    const holding = request(holder).post('/work/7');
    const held = holding.then((response) => response);
    await entered.promise;
    const busy = await request(impatient).post('/work/7');
    expect(busy.status).toBe(409);
    expect(busy.headers['retry-after']).toBe('3');
    expect(busy.body).toMatchObject({ error: 'lock-busy' });
    // The refused request leaves nothing behind (its node's removal was sent as it gave up):
    // only the holder's node.
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/7`)).length === 1);
    finish.resolve();
    expect((await held).status).toBe(200);
    // The holder's lock is released on 'finish', after its response went out: its node can
    // outlive the response by a round trip.
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/7`)).length === 0);
    const free = await request(impatient).post('/work/7');
    expect(free.status).toBe(200);
  });

  it('timeoutMs: a waiter gives up with 409 lock-timeout and Retry-After, leaving no node', async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const entered = deferred();
    const finish = deferred();
    const holder = lockedApp(flavour, a!, root, (_request, response) => {
      entered.resolve();
      void finish.promise.then(() => response.json({ done: true }));
    });
    const waiter = lockedApp(flavour, b!, root, (_request, response) => response.json({}), {
      timeoutMs: 200,
    });
    const held = request(holder)
      .post('/work/9')
      .then((response) => response);
    await entered.promise;
    const started = performance.now();
    const timedOut = await request(waiter).post('/work/9');
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(timedOut.status).toBe(409);
    expect(timedOut.headers['retry-after']).toBe('1');
    expect(timedOut.body).toMatchObject({ error: 'lock-timeout' });
    // b's node goes in the background (its delete is sent as the call rejects): a's listing, on
    // another session, may be answered before the server applies it.
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/9`)).length === 1);
    finish.resolve();
    expect((await held).status).toBe(200);
  });

  it('a client that disconnects mid-handler releases the lock at once: node gone, next instance in', async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const entered = deferred();
    const aborted = deferred<unknown>();
    const stuck = lockedApp(flavour, a!, root, (_request, response) => {
      const lease = leaseOf(response);
      lease.signal.addEventListener('abort', () => aborted.resolve(lease.signal.reason));
      entered.resolve();
      // Never answers: only the client going away ends this request.
    });
    const next = lockedApp(flavour, b!, root, (_request, response) => response.json({ ok: true }));
    const url = await listen(stuck);
    const open = openRequest(`${url}/work/5`);
    await entered.promise;
    expect(await childrenOf(a!, `${root}/5`)).toHaveLength(1);
    open.abort();
    await expect(open.response).rejects.toThrow();
    // The handler's signal aborts (released, not lost) and the node goes in one round trip.
    expect(await aborted.promise).toMatchObject({ name: 'AbortError' });
    // The next instance gets in (a's session lives on: had the node stayed, it would wait).
    const response = await request(next).post('/work/5');
    expect(response.status).toBe(200);
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/5`)).length === 0);
  });

  it('a client that disconnects while queued leaves the queue (its node goes, the handler never runs)', async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('sku');
    const entered = deferred();
    const finish = deferred();
    let waiterRan = false;
    const holder = lockedApp(flavour, a!, root, (_request, response) => {
      entered.resolve();
      void finish.promise.then(() => response.json({ done: true }));
    });
    const waiter = lockedApp(flavour, b!, root, (_request, response) => {
      waiterRan = true;
      response.json({});
    });
    const held = request(holder)
      .post('/work/3')
      .then((response) => response);
    await entered.promise;
    const open = openRequest(`${await listen(waiter)}/work/3`);
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/3`)).length === 2);
    open.abort();
    await vi.waitUntil(async () => (await childrenOf(a!, `${root}/3`)).length === 1, {
      timeout: 1_000,
    });
    finish.resolve();
    expect((await held).status).toBe(200);
    await sleep(50);
    expect(waiterRan).toBe(false);
  });

  it('releases exactly once, when the response finishes', async () => {
    const client = await connectedClient();
    const root = lockPath('sku');
    let releases = 0;
    let lease: Lease | undefined;
    const app = lockedApp(flavour, client, root, (_request, response) => {
      lease = leaseOf(response);
      const release = lease.release.bind(lease);
      Object.assign(lease, {
        release: () => {
          releases += 1;
          return release();
        },
      });
      response.json({});
    });
    const url = await listen(app);
    expect(await openRequest(`${url}/work/1`).response).toBe(200);
    await sleep(100); // 'finish' then 'close' both fired by now
    expect(releases).toBe(1);
    expect(lease?.state).toBe('released');
    expect(await childrenOf(client, `${root}/1`)).toEqual([]);
  });

  it('the handler holds the lease in its async context: taking the same lock again re-enters it', async () => {
    const client = await connectedClient();
    const root = lockPath('sku');
    const app = lockedApp(flavour, client, root, (_request, response, next) => {
      const outer = leaseOf(response);
      acquire(client, `${root}/6`, { timeoutMs: 1_000 }).then(async (inner) => {
        const same = inner.node === outer.node && inner.fencingToken === outer.fencingToken;
        await inner.release();
        response.json({ same, stillHeld: outer.isHeld });
      }, next);
    });
    const response = await request(app).post('/work/6');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ same: true, stillHeld: true });
    await vi.waitUntil(async () => (await childrenOf(client, `${root}/6`)).length === 0);
  });

  it("lock: 'read' lets readers share a key; requests without it exclude them", async () => {
    const [a, b] = await connectedClients(2);
    const root = lockPath('catalog');
    const inside = { read: 0, write: 0, violations: [] as string[] };
    // Handlers hold until the gate opens, so the test decides who is inside together.
    const gate = deferred();
    const handler =
      (kind: 'read' | 'write'): RequestHandler =>
      (_request, response) => {
        inside[kind] += 1;
        if (inside.write > 1 || (inside.write > 0 && inside.read > 0))
          inside.violations.push(`${kind} overlapped`);
        void gate.promise
          .then(() => sleep(20))
          .then(() => {
            inside[kind] -= 1;
            response.json({ kind });
          });
      };
    const app = (client: ZkClient) => {
      const created = flavour.create();
      const path = (request: Request) => `${root}/${String(request.params.id)}`;
      created.get('/items/:id', zkLock({ client, path, lock: 'read' }), handler('read'));
      created.put('/items/:id', zkLock({ client, path }), handler('write'));
      created.use(reportErrors);
      return created;
    };
    const [appA, appB] = [app(a!), app(b!)];
    // Two readers, from two instances, are inside at once.
    const readers = [request(appA).get('/items/1'), request(appB).get('/items/1')].map((call) =>
      call.then((response) => response),
    );
    await vi.waitUntil(() => inside.read === 2, { timeout: 5_000 });
    // Then, in this order, a writer, a reader behind it and another writer queue up and wait.
    const queued = (count: number) =>
      vi.waitUntil(async () => (await childrenOf(a!, `${root}/1`)).length === count, {
        timeout: 5_000,
      });
    const later = [];
    for (const [index, call] of [
      () => request(appA).put('/items/1'),
      () => request(appB).get('/items/1'),
      () => request(appB).put('/items/1'),
    ].entries()) {
      later.push(call().then((response) => response));
      await queued(3 + index);
    }
    expect(inside).toMatchObject({ read: 2, write: 0 });
    gate.resolve();
    const responses = await Promise.all([...readers, ...later]);
    expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 200, 200]);
    expect(inside.violations).toEqual([]);
  });

  it('an invalid lock path goes to next(error): ZkError InvalidPath with status 500', async () => {
    const client = await connectedClient();
    const app = flavour.create();
    let handlerRan = false;
    app.post('/bad', zkLock({ client, path: () => 'no-leading-slash' }), (_request, response) => {
      handlerRan = true;
      response.json({});
    });
    app.use(reportErrors);
    const response = await request(app).post('/bad');
    expect(response.status).toBe(500);
    expect(response.body).toMatchObject({ name: 'ZkError', code: 'InvalidPath', status: 500 });
    expect(handlerRan).toBe(false);
  });

  it('answers 503 with Retry-After when ZooKeeper is unreachable', async () => {
    const { client, proxy } = await proxiedClient();
    let handlerRan = false;
    const app = lockedApp(
      flavour,
      client,
      lockPath('sku'),
      (_request, response) => {
        handlerRan = true;
        response.json({});
      },
      { retryAfterSeconds: 2 },
    );
    proxy.refuse(true);
    proxy.cut();
    await vi.waitUntil(() => client.state === 'suspended');
    const response = await request(app).post('/work/1');
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('2');
    expect(response.body).toMatchObject({ error: 'zookeeper-unavailable' });
    // At once: still suspended (the proxy refuses), so it waited neither for a connection nor
    // for the session's end.
    expect(client.state).toBe('suspended');
    expect(handlerRan).toBe(false);
  });

  it('answers 503 at once when the connection is lost while waiting, and leaves no node', async () => {
    const holderClient = await connectedClient();
    const { client, proxy } = await proxiedClient();
    const root = lockPath('sku');
    const entered = deferred();
    const finish = deferred();
    const holder = lockedApp(flavour, holderClient, root, (_request, response) => {
      entered.resolve();
      void finish.promise.then(() => response.json({}));
    });
    const waiter = lockedApp(flavour, client, root, (_request, response) => response.json({}));
    const held = request(holder)
      .post('/work/8')
      .then((response) => response);
    await entered.promise;
    const waiting = request(waiter)
      .post('/work/8')
      .then((response) => response);
    await vi.waitUntil(async () => (await childrenOf(holderClient, `${root}/8`)).length === 2);
    // Let the waiter's watch request land first: a call sent just as the connection drops hides
    // the drop from session$ (a known @zkrx/core bug, pinned in test/known-core-issues).
    await sleep(200);
    proxy.refuse(true);
    proxy.cut();
    const response = await waiting;
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ error: 'zookeeper-unavailable' });
    // At once: still suspended, so it waited neither for a connection nor the session's end.
    expect(client.state).toBe('suspended');
    // Back online, the session (still alive) removes its queued node.
    proxy.refuse(false);
    await vi.waitUntil(async () => (await childrenOf(holderClient, `${root}/8`)).length === 1, {
      timeout: 5_000,
    });
    finish.resolve();
    expect((await held).status).toBe(200);
  });

  it('lock lost mid-request: the signal aborts with LockLostError (status 503), onLost is called', async () => {
    const { client, proxy } = await proxiedClient();
    const root = lockPath('sku');
    const entered = deferred();
    const lost: unknown[] = [];
    const app = lockedApp(
      flavour,
      client,
      root,
      (_request, response, next) => {
        const lease = leaseOf(response);
        entered.resolve();
        // What a handler should do: stop, write nothing, hand the reason to Express.
        lease.signal.addEventListener('abort', () => next(lease.signal.reason));
      },
      { onLost: (error) => lost.push(error) },
    );
    const pending = request(app)
      .post('/work/4')
      .then((response) => response);
    await entered.promise;
    proxy.cut(); // the connection drops; the session lives, but ownership is uncertain
    const response = await pending;
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ name: 'LockLostError', reason: 'suspended' });
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(LockLostError);
    // Reconnected, the session removes the node it no longer trusts.
    await vi.waitUntil(async () => (await childrenOf(client, `${root}/4`)).length === 0, {
      timeout: 5_000,
    });
  });
});

describe('zkLock options', () => {
  it('are checked when the middleware is created, with errors naming the option', async () => {
    const client = await connectedClient();
    const path = () => '/locks/x';
    const cases: [unknown, RegExp][] = [
      [undefined, /zkLock: expected an options object/],
      [{ path }, /zkLock: client must be a ZkClient/],
      [{ client: {}, path }, /zkLock: client must be a ZkClient/],
      [{ client }, /zkLock: path must be a function/],
      [{ client, path: 'no-slash' }, /zkLock: Invalid path/],
      [{ client, path: 42 }, /zkLock: path must be a function, got 42/],
      [{ client, path, timeoutMs: -1 }, /timeoutMs must be a finite number/],
      [{ client, path, mode: 'no' }, /mode must be one of 'wait', 'skip'/],
      [{ client, path, mode: 'skip', timeoutMs: 100 }, /timeoutMs applies to mode 'wait'/],
      [{ client, path, statusCode: 200 }, /statusCode must be an HTTP error status/],
      [{ client, path, retryAfterSeconds: 1.5 }, /retryAfterSeconds must be a whole number/],
      [{ client, path, read: true }, /the read option is gone: say lock: 'read'/],
      [{ client, path, lock: 'exclusive' }, /lock must be one of 'mutex', 'read', 'write'/],
      [{ client, path, onLost: true }, /onLost must be a function/],
    ];
    for (const [options, message] of cases) {
      expect(() => zkLock(options as ZkLockOptions), String(message)).toThrow(message);
    }
    expect(() => zkLock({ client, path })).not.toThrow();
  });
});
