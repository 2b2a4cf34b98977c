/**
 * @Locked on HTTP routes, beyond what @zkrx/express also does (adapters-agree): a skip from a
 * service is the caller's to answer, and the method's own errors pass unchanged.
 */
import { Controller, HttpException, Injectable, Post } from '@nestjs/common';
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { connectedClient, lockPath } from '@zkrx/test-support';
import { describe, expect, it } from 'vitest';
import { startHttpApp } from '../../test/nest-apps';
import { Locked } from '../index';

function ordersApp(path: string) {
  @Injectable()
  class Reindex {
    @Locked(path, { mode: 'skip' })
    async run(): Promise<string> {
      return 'ran';
    }

    @Locked(path)
    async teapot(): Promise<never> {
      throw new HttpException('a teapot', 418);
    }

    @Locked(path)
    async ownCall(): Promise<never> {
      // The method's own ZooKeeper call failing: not the lock's failure.
      throw new ZkError(ZkErrorCode.ConnectionLoss, 'its own call');
    }
  }

  @Controller()
  class Orders {
    constructor(private readonly reindex: Reindex) {}

    /** The service's skip resolves undefined: this route says what that means. */
    @Post('service-skip')
    async serviceSkip(): Promise<unknown> {
      return { result: (await this.reindex.run()) ?? 'skipped' };
    }

    @Post('teapot')
    teapot(): Promise<never> {
      return this.reindex.teapot();
    }

    @Post('own-call')
    ownCall(): Promise<never> {
      return this.reindex.ownCall();
    }
  }
  return { Orders, Reindex };
}

describe('@Locked on routes', () => {
  it('a skip inside a service resolves undefined for the route to answer', async () => {
    const path = lockPath('reindex');
    const { Orders, Reindex } = ordersApp(path);
    const { url } = await startHttpApp({ controllers: [Orders], providers: [Reindex] });
    const post = (route: string) => fetch(`${url}/${route}`, { method: 'POST' });
    const free = await post('service-skip');
    expect([free.status, await free.json()]).toEqual([201, { result: 'ran' }]);
    const holder = await acquire(await connectedClient(), path);
    const busy = await post('service-skip');
    expect([busy.status, await busy.json()]).toEqual([201, { result: 'skipped' }]);
    await holder.release();
  });

  it("passes the method's own errors on unchanged", async () => {
    const { Orders, Reindex } = ordersApp(lockPath('reindex'));
    const { url } = await startHttpApp({ controllers: [Orders], providers: [Reindex] });
    const teapot = await fetch(`${url}/teapot`, { method: 'POST' });
    expect(teapot.status).toBe(418);
    const own = await fetch(`${url}/own-call`, { method: 'POST' });
    expect(own.status).toBe(500);
    expect(own.headers.get('retry-after')).toBeNull();
  });
});
