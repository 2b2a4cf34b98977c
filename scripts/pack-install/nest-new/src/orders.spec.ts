// Unit tests without ZooKeeper (@zkrx/nestjs/testing, in the runner `nest new` set up: Vitest
// on Nest 12, Jest on Nest 11), on the root README's NestJS files as they are.
import { Test, type TestingModule } from '@nestjs/testing';
import { LockLostError } from '@zkrx/lock';
import { ZkTesting, ZkTestingModule } from '@zkrx/nestjs/testing';
import { Billing } from './billing.js';
import { Invoices } from './invoices.js';
import { OrdersController } from './orders.controller.js';
import { Payments } from './payments.js';

describe('orders and billing, no ZooKeeper', () => {
  let app: TestingModule;

  beforeEach(async () => {
    app = await Test.createTestingModule({
      imports: [ZkTestingModule.forRoot()],
      controllers: [OrdersController],
      providers: [Payments, Billing, Invoices],
    }).compile();
    await app.init();
  });

  afterEach(() => app.close());

  it('pays under the order lock; a payment whose lock is lost rejects', async () => {
    const orders = app.get(OrdersController);
    await expect(orders.pay('42')).resolves.toMatchObject({ order: '42' });
    let charging!: () => void;
    const charged = new Promise<void>((resolve) => (charging = resolve));
    app.get(Payments).charge = () => {
      charging();
      return new Promise(() => {}); // a charge that never ends
    };
    const paying = orders.pay('7');
    await charged; // inside, under the lock
    app.get(ZkTesting).loseLock('/locks/orders/7');
    await expect(paying).rejects.toBeInstanceOf(LockLostError);
  });

  it('bills on the leader only, once per tick', async () => {
    const billing = app.get(Billing);
    const invoices = app.get(Invoices);
    // The two calls in one tick (a minute, by the clock): not across a minute's start.
    const toNextTick = 60_000 - (Date.now() % 60_000);
    if (toNextTick < 1_000) await new Promise((resolve) => setTimeout(resolve, toNextTick + 50));
    await billing.chargeDueInvoices();
    await billing.chargeDueInvoices(); // the same minute: claimed already
    expect(invoices.charged).toBe(1);
    app.get(ZkTesting).loseLeadership('/election/billing');
    expect(await billing.chargeDueInvoices()).toBeUndefined();
    expect(invoices.charged).toBe(1);
  });
});
