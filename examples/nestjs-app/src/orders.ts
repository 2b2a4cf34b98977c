/**
 * Job 1 — a handler mutually exclusive per order id across every instance: POST
 * /orders/:id/pay runs under the order's lock. Busy: 409 with Retry-After; ZooKeeper down: 503
 * at once (@zkrx/nestjs answers both).
 */
import { Controller, Injectable, Param, Post } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { nodeName } from '@zkrx/lock';
import { currentLock, Locked, lockSignal } from '@zkrx/nestjs';
import { Journal } from './journal';
import { type AppConfig, PATHS } from './settings';

export interface Payment {
  readonly order: string;
  readonly instance: string;
  readonly fencingToken: number;
}

@Injectable()
export class Payments {
  constructor(
    private readonly config: ConfigService<AppConfig, true>,
    private readonly journal: Journal,
  ) {}

  /**
   * The order's lock: its path from the order id through nodeName (any id is one node name),
   * its timeout from the configuration, read when the application starts.
   */
  @Locked(
    (order: string) => `${PATHS.orders}/${nodeName(order)}`,
    (self: Payments) => ({
      timeoutMs: self.config.get('ORDER_LOCK_TIMEOUT_MS'),
    }),
  )
  async pay(order: string): Promise<Payment> {
    const { fencingToken } = currentLock()!;
    const instance = this.config.get('INSTANCE_ID');
    const end = this.journal.begin(instance, 'payment', order, fencingToken);
    try {
      // The work: stops if the lock is lost (the signal aborts with the LockLostError).
      await new Promise<void>((resolve, reject) => {
        const signal = lockSignal()!;
        const timer = setTimeout(resolve, this.config.get('PAYMENT_MS'));
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      return { order, instance, fencingToken };
    } finally {
      end();
    }
  }
}

@Controller('orders')
export class OrdersController {
  constructor(private readonly payments: Payments) {}

  @Post(':id/pay')
  pay(@Param('id') id: string): Promise<Payment> {
    return this.payments.pay(id);
  }
}
