/**
 * Restocking: one at a time across every instance, under the inventory lock.
 */
import { Inject, Injectable } from '@nestjs/common';
import { currentLock, Locked, lockSignal } from '@zkrx/nestjs';
import { INSTANCE_NAME, Journal } from './journal';
import { INVENTORY_LOCK, RESTOCK_MS } from './settings';

export interface Restocked {
  readonly instance: string;
  readonly fencingToken: number;
}

@Injectable()
export class InventoryService {
  constructor(
    @Inject(INSTANCE_NAME) private readonly instance: string,
    private readonly journal: Journal,
  ) {}

  /** Waits at most 10 s for the lock, then rejects LockTimeoutError. */
  @Locked(INVENTORY_LOCK, { timeoutMs: 10_000 })
  async restock(): Promise<Restocked> {
    const { fencingToken } = currentLock()!;
    const end = this.journal.begin(this.instance, 'restock', fencingToken);
    try {
      // The work: stops if the lock is lost (the signal aborts with the LockLostError).
      await new Promise<void>((resolve, reject) => {
        const signal = lockSignal()!;
        const timer = setTimeout(resolve, RESTOCK_MS);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      return { instance: this.instance, fencingToken };
    } finally {
      end();
    }
  }
}
