// Against a real ZooKeeper: @zkrx/testing's Jest global setup (test/jest-e2e.json).
import type { INestApplication } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { createClient } from '@zkrx/core';
import { acquire } from '@zkrx/lock';
import { ZkModule } from '@zkrx/nestjs';
import request from 'supertest';
import { Billing } from '../src/billing';
import { OrdersController, Payments } from '../src/orders.controller';

describe('orders on ZooKeeper', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        ZkModule.forRoot({ connect: process.env.ZKRX_TEST_CONNECT!, isGlobal: true }),
      ],
      controllers: [OrdersController],
      providers: [Payments, Billing],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterAll(() => app.close());

  it('pays, and answers 409 with Retry-After while another instance holds the order', async () => {
    await request(app.getHttpServer()).post('/orders/42/pay').expect(201);
    const other = createClient({ connect: process.env.ZKRX_TEST_CONNECT! });
    const lease = await acquire(other, '/locks/orders/7');
    const busy = await request(app.getHttpServer()).post('/orders/7/pay');
    expect(busy.status).toBe(409);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.body.error).toBe('lock-timeout');
    await lease.release();
    await other.close();
  });
});
