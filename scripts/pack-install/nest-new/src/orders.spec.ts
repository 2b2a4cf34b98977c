// Unit tests without ZooKeeper: @zkrx/nestjs/testing, in the Jest `nest new` set up.
import { Test, type TestingModule } from '@nestjs/testing';
import { LockLostError, LockTimeoutError } from '@zkrx/lock';
import { ZkTesting, ZkTestingModule } from '@zkrx/nestjs/testing';
import { Billing } from './billing';
import { OrdersController, Payments } from './orders.controller';

describe('orders and billing, no ZooKeeper', () => {
  let app: TestingModule;

  beforeEach(async () => {
    app = await Test.createTestingModule({
      imports: [ZkTestingModule.forRoot()],
      controllers: [OrdersController],
      providers: [Payments, Billing],
    }).compile();
    await app.init();
  });

  afterEach(() => app.close());

  it('pays under the order lock; times out while another instance holds it', async () => {
    const orders = app.get(OrdersController);
    await expect(orders.pay('42')).resolves.toMatchObject({ order: '42' });
    const release = app.get(ZkTesting).takeLock('/locks/orders/42');
    await expect(orders.pay('42')).rejects.toBeInstanceOf(LockTimeoutError);
    release();
    await expect(orders.pay('42')).resolves.toMatchObject({ order: '42' });
  });

  it('bills on the leader only, once per tick', async () => {
    const billing = app.get(Billing);
    await billing.chargeDueInvoices();
    await billing.chargeDueInvoices(); // the same minute: claimed already
    expect(billing.charged).toBe(1);
    app.get(ZkTesting).loseLeadership('/election/billing');
    expect(await billing.chargeDueInvoices()).toBeUndefined();
    expect(LockLostError).toBeDefined();
  });
});
