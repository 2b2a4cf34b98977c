// orders.controller.ts — one request per order at a time, whichever instance it lands on.
import { Controller, Injectable, Param, Post } from '@nestjs/common';
import { nodeName } from '@zkrx/lock';
import { currentLock, Locked } from '@zkrx/nestjs';

@Injectable()
export class Payments {
  async charge(order: string, { fencingToken }: { fencingToken: number }) {
    return { order, fencingToken };
  }
}

@Controller('orders')
export class OrdersController {
  constructor(private readonly payments: Payments) {}

  @Post(':id/pay')
  @Locked((id: string) => `/locks/orders/${nodeName(id)}`, { timeoutMs: 1_000 })
  async pay(@Param('id') id: string) {
    return this.payments.charge(id, { fencingToken: currentLock()!.fencingToken });
  }
}
