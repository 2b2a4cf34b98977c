/**
 * The inventory service as an Express 5 app: purchases under a per-SKU ZooKeeper lock, the
 * same purchase without it (to show the oversell), a leader-only restock, and a health check.
 */
import type { ZkClient } from '@zkrx/core';
import { leaderOnly, leaseOf, zkHealth, zkLock } from '@zkrx/express';
import { nodeName } from '@zkrx/lock';
import express, { type ErrorRequestHandler, type Express, type Request } from 'express';
import { Inventory, type PurchaseResult, SKU_PATTERN } from './inventory';

export interface InventoryAppOptions {
  /** This instance's ZooKeeper client (one session per instance). */
  readonly client: ZkClient;
  /** This instance's name, in answers and log lines. */
  readonly instance: string;
  /** The service's root path in ZooKeeper (stock, locks, election). */
  readonly root: string;
  /** The slow step of each purchase between reading and writing the stock. Default 100 ms. */
  readonly processingMs?: number;
  /** How long a purchase waits for its SKU's lock before answering 409. Default 10 s. */
  readonly lockTimeoutMs?: number;
  /** Where sale lines go (default: nowhere). */
  readonly log?: (line: string) => void;
}

/** A running instance's app, and how to stop its candidacy for the restock election. */
export interface InventoryApp {
  readonly app: Express;
  readonly inventory: Inventory;
  /** Leaves the restock election (the client stays open: close it after). */
  close(): Promise<void>;
}

/** The JSON answer of a purchase. */
export interface PurchaseAnswer {
  readonly instance: string;
  readonly sku: string;
  readonly result: PurchaseResult;
  /** The lock's fencing token (locked route only). */
  readonly fencingToken?: number;
}

const statusOf: Record<PurchaseResult['outcome'], number> = {
  sold: 200,
  'sold-out': 409,
  'unknown-sku': 404,
};

/**
 * Builds the inventory app of one instance.
 *
 * - `POST /purchase/:sku` — one unit, under the SKU's lock (`zkLock`): never oversells.
 * - `POST /unsafe/purchase/:sku` — the same without the lock: oversells under concurrency.
 * - `POST /admin/restock/:sku?units=N` — only on the elected leader (`leaderOnly`), under the lock.
 * - `GET /stock/:sku`, `GET /health` (`zkHealth`).
 *
 * ## Example
 * ```ts
 * const { app } = createInventoryApp({ client, instance: 'A', root: '/shop' });
 * app.listen(3000);
 * // POST /purchase/widget → 200 {"instance":"A","sku":"widget","result":{"outcome":"sold","before":5,"left":4},"fencingToken":4294967311}
 * ```
 *
 * @param options The client, the instance name, the root path and the purchase's timings.
 * @return The app, its inventory, and `close()` for its election.
 */
export function createInventoryApp(options: InventoryAppOptions): InventoryApp {
  const { client, instance, root } = options;
  const processingMs = options.processingMs ?? 100;
  const log = options.log ?? (() => {});
  const inventory = new Inventory(client, root);
  const app = express();

  app.param('sku', (_request, response, next, sku: string) => {
    if (SKU_PATTERN.test(sku)) return next();
    response.status(400).json({ error: 'bad-sku', message: `SKU must match ${SKU_PATTERN}` });
  });

  const skuLock = zkLock({
    client,
    // The SKU from the URL as one node name (nodeName), whatever it holds.
    path: (request: Request) => `${root}/locks/${nodeName(String(request.params.sku))}`,
    timeoutMs: options.lockTimeoutMs ?? 10_000,
    retryAfterSeconds: 1,
  });

  app.post('/purchase/:sku', skuLock, async (request, response) => {
    const sku = String(request.params.sku);
    const lease = leaseOf(response);
    // lease.signal aborts if the lock is lost mid-purchase: the purchase then writes nothing and
    // throws the LockLostError, which carries status 503 for the error handler below.
    const result = await inventory.purchase(sku, { processingMs, signal: lease.signal });
    if (result.outcome === 'sold') {
      log(
        `sold 1 ${sku} under the lock (token ${lease.fencingToken}): ${result.before} → ${result.left}`,
      );
    }
    const answer: PurchaseAnswer = { instance, sku, result, fencingToken: lease.fencingToken };
    response.status(statusOf[result.outcome]).json(answer);
  });

  app.post('/unsafe/purchase/:sku', async (request, response) => {
    const sku = String(request.params.sku);
    const result = await inventory.purchase(sku, { processingMs });
    if (result.outcome === 'sold') {
      log(`sold 1 ${sku} WITHOUT a lock: ${result.before} → ${result.left}`);
    }
    const answer: PurchaseAnswer = { instance, sku, result };
    response.status(statusOf[result.outcome]).json(answer);
  });

  const leaderGate = leaderOnly({ client, path: `${root}/election/restock`, id: instance });
  app.post('/admin/restock/:sku', leaderGate, skuLock, async (request, response) => {
    const units = Number(request.query.units ?? 10);
    if (!Number.isInteger(units) || units < 0) {
      response.status(400).json({ error: 'bad-units', message: 'units must be an integer >= 0' });
      return;
    }
    const sku = String(request.params.sku);
    await inventory.seed(sku, units);
    log(`restocked ${sku} to ${units} (this instance leads)`);
    response.json({ instance, sku, units });
  });

  app.get('/stock/:sku', async (request, response) => {
    const sku = String(request.params.sku);
    const units = await inventory.stock(sku);
    if (units === undefined) response.status(404).json({ error: 'unknown-sku' });
    else response.json({ sku, units });
  });

  app.get('/health', zkHealth({ client }));

  const errors: ErrorRequestHandler = (error, _request, response, _next) => {
    const status = typeof error?.status === 'number' ? error.status : 500;
    if (response.headersSent) return;
    response
      .status(status)
      .json({ error: String(error?.name ?? 'Error'), message: String(error?.message) });
  };
  app.use(errors);

  return { app, inventory, close: () => leaderGate.leave() };
}
