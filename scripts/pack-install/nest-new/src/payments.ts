// The root README's NestJS snippet injects it: the app's own payment service.
import { Injectable } from '@nestjs/common';

@Injectable()
export class Payments {
  async charge(order: string, { fencingToken }: { fencingToken: number }) {
    return { order, fencingToken };
  }
}
