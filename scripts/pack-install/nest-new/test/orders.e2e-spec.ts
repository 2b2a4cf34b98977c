// Against a real ZooKeeper (@zkrx/testing's global setup for the project's runner): the root
// README's AppModule as it is, ZK_CONNECT set to the test server (zk-connect.ts) before it loads.
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import request from 'supertest';
import { AppModule } from '../src/app.module.js';

describe('the README app on ZooKeeper', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterAll(() => app.close());

  it('pays, and answers 409 with Retry-After while another instance holds the order', async () => {
    const paid = await request(app.getHttpServer()).post('/orders/42/pay').expect(201);
    expect(paid.body).toMatchObject({ order: '42', fencingToken: expect.any(Number) });
    const other = createClient({ connect: process.env.ZKRX_TEST_CONNECT! });
    const lease = await acquire(other, '/locks/orders/7');
    try {
      const busy = await request(app.getHttpServer()).post('/orders/7/pay'); // waits its 5 s
      expect(busy.status).toBe(409);
      expect(busy.headers['retry-after']).toBe('1');
      expect(busy.body.error).toBe('lock-timeout');
    } finally {
      await lease.release();
      await other.close();
    }
  }, 30_000);
});
