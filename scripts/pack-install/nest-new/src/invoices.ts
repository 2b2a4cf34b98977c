// The root README's NestJS snippet injects it: the app's own invoices, counting the runs.
import { Injectable } from '@nestjs/common';

@Injectable()
export class Invoices {
  charged = 0;

  async chargeDue({ signal }: { signal?: AbortSignal }) {
    signal?.throwIfAborted();
    this.charged += 1;
  }
}
