/**
 * itemOwnerOnly on real Express apps (5 and 4): two instances, each with its own session, share
 * a partition's items; a request is served only where its item is owned, and close() hands the
 * items over only once the requests it let through have ended.
 */
import { connectedClients } from '@zkrx/test-support';
import { uniqueRoot } from '@zkrx/testing';
import type { Request, RequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { deferred, type Flavour, flavours, listen, openRequest } from '../test/apps';
import { type ItemOwnerOnlyHandler, itemOwnerOnly, ownedItemOf } from './fleet';

const tenants = ['acme', 'globex', 'initech', 'umbrella'];
const item = (request: Request) => String(request.params.tenant);

/**
 * An app with `POST /tenants/:tenant` behind `gate`, answering who served it and the token; with
 * `hold`, the handler says it is in, then waits.
 */
function tenantApp(
  flavour: Flavour,
  gate: ItemOwnerOnlyHandler,
  who: string,
  hold?: { entered: () => void; until: Promise<void> },
) {
  const app = flavour.create();
  const handler: RequestHandler = async (_request, response) => {
    const owned = ownedItemOf(response);
    hold?.entered();
    await hold?.until;
    response.json({ servedBy: who, token: owned.fencingToken, aborted: owned.signal.aborted });
  };
  app.post('/tenants/:tenant', gate, handler);
  return app;
}

const balanced = (a: ItemOwnerOnlyHandler, b: ItemOwnerOnlyHandler) =>
  a.assignment?.items.length === 2 && b.assignment?.items.length === 2;

describe.each(flavours)('itemOwnerOnly on $name', (flavour) => {
  it('serves each tenant on exactly one of two instances; the others answer 503 not-owner', async () => {
    const [a, b] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const gateA = itemOwnerOnly({ client: a!, path, items: tenants, item, id: 'a' });
    const gateB = itemOwnerOnly({ client: b!, path, items: tenants, item, id: 'b' });
    await vi.waitUntil(() => balanced(gateA, gateB));
    const appA = tenantApp(flavour, gateA, 'a');
    const appB = tenantApp(flavour, gateB, 'b');
    for (const tenant of tenants) {
      const [fromA, fromB] = await Promise.all([
        request(appA).post(`/tenants/${tenant}`),
        request(appB).post(`/tenants/${tenant}`),
      ]);
      const [served, refused] = gateA.assignment?.items.includes(tenant)
        ? [fromA, fromB]
        : [fromB, fromA];
      expect(served.status).toBe(200);
      expect(served.body.token).toBeGreaterThan(0);
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toMatchObject({ error: 'not-owner', item: tenant });
    }
    // Not an item of the partition: nobody owns it.
    expect((await request(appA).post('/tenants/nobody')).status).toBe(503);
    await gateA.leave();
    await gateB.leave();
  });

  it('close() gives the items up, and their locks move only once its requests have ended', async () => {
    const [a, b] = await connectedClients(2);
    const path = uniqueRoot('fleet');
    const gateA = itemOwnerOnly({ client: a!, path, items: tenants, item, id: 'a' });
    await vi.waitUntil(() => gateA.assignment?.items.length === 4);
    const hold = deferred();
    const entered = deferred();
    const url = await listen(
      tenantApp(flavour, gateA, 'a', { entered: entered.resolve, until: hold.promise }),
    );
    const owned = gateA.assignment?.owned.get('acme');
    const running = openRequest(`${url}/tenants/acme`);
    // The request is inside the handler: the item tracks it.
    await entered.promise;
    const gateB = itemOwnerOnly({ client: b!, path, items: tenants, item, id: 'b' });
    // b is in (its first assignment comes once it is a member).
    await vi.waitUntil(() => gateB.assignment !== undefined);
    const closing = gateA.leave();
    expect(owned?.signal.aborted).toBe(true);
    // b gets the three other tenants, but not acme while a's request runs.
    await vi.waitUntil(() => gateB.assignment?.items.length === 3);
    expect(gateB.assignment?.items).not.toContain('acme');
    hold.resolve();
    expect(await running.response).toBe(200);
    await closing;
    await vi.waitUntil(() => gateB.assignment?.items.length === 4);
    expect(gateB.assignment?.owned.get('acme')?.fencingToken).toBeGreaterThan(
      owned?.fencingToken as number,
    );
    const appA = tenantApp(flavour, gateA, 'a');
    expect((await request(appA).post('/tenants/acme')).status).toBe(503);
    await gateB.leave();
  });

  it('onNotOwner answers instead; bad options throw at creation', async () => {
    const [a] = await connectedClients(1);
    const path = uniqueRoot('fleet');
    const gate = itemOwnerOnly({
      client: a!,
      path,
      items: ['acme'],
      item,
      id: 'a',
      onNotOwner: (_request, response) => {
        response.status(307).set('Location', 'http://owner.example/').end();
      },
    });
    await vi.waitUntil(() => gate.assignment?.items.length === 1);
    const app = tenantApp(flavour, gate, 'a');
    expect((await request(app).post('/tenants/acme')).status).toBe(200);
    const redirected = await request(app).post('/tenants/globex');
    expect(redirected.status).toBe(307);
    await gate.leave();

    const base = { client: a!, path, items: ['x'], item, id: 'w' };
    for (const [options, code] of [
      [{ ...base, item: 'x' }, 'BadArguments'],
      [{ ...base, items: ['x', 'x'] }, 'BadArguments'],
      [{ ...base, id: 'a/b' }, 'BadArguments'],
      [{ ...base, path: 'relative' }, 'InvalidPath'],
      [{ ...base, statusCode: 200 }, 'BadArguments'],
      [{ ...base, client: {} }, 'BadArguments'],
    ] as const) {
      expect(() => itemOwnerOnly(options as never)).toThrow(expect.objectContaining({ code }));
    }
    expect(() => ownedItemOf({ locals: {} } as never)).toThrow(
      expect.objectContaining({ code: 'BadArguments' }),
    );
  });
});
