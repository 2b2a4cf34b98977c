/**
 * The stock of each SKU, kept in a znode as a decimal number and sold by read, slow step, write
 * back: the read-modify-write that oversells whenever two purchases of one SKU interleave.
 */
import { isZkError, type ZkClient, ZkErrorCode } from '@zkrx/core';

/** What one purchase did. */
export type PurchaseResult =
  | { readonly outcome: 'sold'; readonly before: number; readonly left: number }
  | { readonly outcome: 'sold-out' }
  | { readonly outcome: 'unknown-sku' };

/** What `purchase` needs besides the SKU. */
export interface PurchaseOptions {
  /** The slow step between reading the stock and writing it back (payment, reservation...). */
  readonly processingMs: number;
  /** Aborts the purchase before anything is written (the lock was lost, the client left). */
  readonly signal?: AbortSignal;
}

/** SKUs are one path segment of letters, digits, `-` and `_`. */
export const SKU_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The inventory: one znode per SKU under `${root}/stock`, holding the units left.
 *
 * ## Example
 * ```ts
 * const inventory = new Inventory(client, '/shop');
 * await inventory.seed('widget', 5);
 * console.log(await inventory.purchase('widget', { processingMs: 100 }));
 * // Output: { outcome: 'sold', before: 5, left: 4 }
 * ```
 */
export class Inventory {
  /**
   * @param client The client whose session reads and writes the stock.
   * @param root The service's root path.
   */
  constructor(
    private readonly client: ZkClient,
    private readonly root: string,
  ) {}

  /** Sets the units in stock of a SKU (creating its node). */
  async seed(sku: string, units: number): Promise<void> {
    const node = this.nodeOf(sku);
    try {
      await this.client.promises.set(node, String(units));
    } catch (error) {
      if (!isZkError(error, ZkErrorCode.NoNode)) throw error;
      await this.client.promises.create(node, String(units), { parents: 'persistent' });
    }
  }

  /** The units in stock, or undefined for an unknown SKU. */
  async stock(sku: string): Promise<number | undefined> {
    try {
      return Number((await this.client.promises.get(this.nodeOf(sku))).data.toString('utf8'));
    } catch (error) {
      if (isZkError(error, ZkErrorCode.NoNode)) return undefined;
      throw error;
    }
  }

  /**
   * Sells one unit: reads the stock, runs the slow step, writes the stock less one. Safe only
   * while nobody else sells the same SKU in between: hold the SKU's lock around it.
   *
   * @param sku The SKU.
   * @param options The slow step's length, and a signal that stops the sale before its write.
   * @return Sold (with the stock before and after), sold out, or an unknown SKU.
   */
  async purchase(sku: string, options: PurchaseOptions): Promise<PurchaseResult> {
    const before = await this.stock(sku);
    if (before === undefined) return { outcome: 'unknown-sku' };
    if (before <= 0) return { outcome: 'sold-out' };
    await pause(options.processingMs, options.signal);
    // The lock may have been lost during the slow step: then write nothing.
    options.signal?.throwIfAborted();
    await this.client.promises.set(this.nodeOf(sku), String(before - 1));
    return { outcome: 'sold', before, left: before - 1 };
  }

  private nodeOf(sku: string): string {
    return `${this.root}/stock/${sku}`;
  }
}
