/**
 * The demo: an embedded ZooKeeper, two instances of the inventory app, N concurrent purchases
 * of one SKU with the lock (no oversell) and without it (oversold), a leader-only restock.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type ZkClient } from '@zkrx/core';
import { startZooKeeper, type ZooKeeperServer } from '@zkrx/testing';
import { createInventoryApp, type InventoryApp } from './app';

export interface DemoOptions {
  /** A ZooKeeper to use instead of starting an embedded one. */
  readonly connect?: string;
  /** The service's root path (default `/zkrx-express-demo`). */
  readonly root?: string;
  /** Purchases sent in each round, split between the two instances. Default 20. */
  readonly purchases?: number;
  /** Units in stock at the start of each round. Default 5. */
  readonly stock?: number;
  /** The slow step of each purchase. Default 100 ms. */
  readonly processingMs?: number;
  /** Where the demo's lines go (default: stdout). */
  readonly print?: (line: string) => void;
}

/** What one round of concurrent purchases did. */
export interface RoundResult {
  readonly route: string;
  /** Units in stock when the round began. */
  readonly stock: number;
  /** Purchases answered 200: units customers were told they bought. */
  readonly sold: number;
  /** Purchases answered 409 sold out. */
  readonly soldOut: number;
  /** Purchases answered anything else. */
  readonly failed: number;
  /** The stock node after the round. */
  readonly stockLeft: number;
  /** Units sold beyond the stock (0 is right). */
  readonly oversold: number;
}

export interface DemoSummary {
  readonly locked: RoundResult;
  readonly unlocked: RoundResult;
  /** The statuses of one restock sent to each instance: the leader's 200, the other's 503. */
  readonly restockStatuses: Readonly<Record<string, number>>;
  /** Whether every expectation held: no oversell with the lock, an oversell without. */
  readonly ok: boolean;
}

interface Instance {
  readonly name: string;
  readonly client: ZkClient;
  readonly service: InventoryApp;
  readonly server: Server;
  readonly url: string;
}

const SKU = 'widget';

async function startInstance(
  name: string,
  connect: string,
  options: { root: string; processingMs: number; log: (line: string) => void },
): Promise<Instance> {
  const client = createClient({ connect, sessionTimeoutMs: 10_000 });
  await client.connected();
  const service = createInventoryApp({ client, instance: name, ...options });
  const server = createServer(service.app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { name, client, service, server, url: `http://127.0.0.1:${port}` };
}

async function stopInstance(instance: Instance): Promise<void> {
  instance.server.closeAllConnections();
  await new Promise<void>((resolve) => instance.server.close(() => resolve()));
  await instance.service.close();
  await instance.client.close();
}

/**
 * Runs the demo and returns what happened.
 *
 * ## Example
 * ```ts
 * const summary = await runDemo({ purchases: 8, stock: 3 });
 * console.log(summary.locked.oversold, summary.unlocked.oversold > 0);
 * // Output: 0 true
 * ```
 *
 * @param options Where ZooKeeper is, how many purchases, how much stock, where lines go.
 * @return The two rounds' results and whether every expectation held.
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoSummary> {
  const purchases = options.purchases ?? 20;
  const stock = options.stock ?? 5;
  const processingMs = options.processingMs ?? 100;
  const root = options.root ?? '/zkrx-express-demo';
  const print = options.print ?? ((line: string) => console.log(line));
  const started = performance.now();
  const line = (who: string, text: string) =>
    print(
      `[${((performance.now() - started) / 1000).toFixed(2).padStart(6)}s] ${who.padEnd(5)} ${text}`,
    );

  let zookeeper: ZooKeeperServer | undefined;
  const instances: Instance[] = [];
  try {
    if (!options.connect) {
      zookeeper = await startZooKeeper();
      line('demo', `embedded ZooKeeper on ${zookeeper.connectString}`);
    }
    const connect = options.connect ?? (zookeeper as ZooKeeperServer).connectString;
    for (const name of ['A', 'B']) {
      const instance = await startInstance(name, connect, {
        root,
        processingMs,
        log: (text) => line(name, text),
      });
      instances.push(instance);
      line('demo', `instance ${name} up on ${instance.url}`);
    }
    for (const instance of instances) {
      const response = await fetch(`${instance.url}/health`);
      const body = (await response.json()) as { status: string; state: string };
      line(instance.name, `GET /health → ${response.status} ${body.status} (${body.state})`);
    }

    const round = async (route: string, label: string): Promise<RoundResult> => {
      await instances[0]!.service.inventory.seed(SKU, stock);
      line(
        'demo',
        `${label}: ${purchases} concurrent POST ${route}/${SKU} across A and B, ${stock} in stock`,
      );
      const statuses = await Promise.all(
        Array.from({ length: purchases }, async (_, index) => {
          const instance = instances[index % instances.length]!;
          const response = await fetch(`${instance.url}${route}/${SKU}`, { method: 'POST' });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      const sold = statuses.filter((status) => status === 200).length;
      const soldOut = statuses.filter((status) => status === 409).length;
      const stockLeft = (await instances[0]!.service.inventory.stock(SKU)) ?? Number.NaN;
      const result: RoundResult = {
        route,
        stock,
        sold,
        soldOut,
        failed: purchases - sold - soldOut,
        stockLeft,
        oversold: Math.max(0, sold - stock),
      };
      line(
        'demo',
        `${label}: sold ${sold} of ${stock} in stock, ${soldOut} sold out, ${result.failed} failed; stock node says ${stockLeft} left → oversold ${result.oversold}`,
      );
      return result;
    };

    const locked = await round('/purchase', 'with zkLock');
    const unlocked = await round('/unsafe/purchase', 'without a lock');

    const restockStatuses: Record<string, number> = {};
    for (const instance of instances) {
      const response = await fetch(`${instance.url}/admin/restock/${SKU}?units=${stock}`, {
        method: 'POST',
      });
      await response.arrayBuffer();
      restockStatuses[instance.name] = response.status;
      const retry = response.headers.get('retry-after');
      line(
        instance.name,
        `POST /admin/restock/${SKU} → ${response.status}${retry ? ` (Retry-After: ${retry})` : ''}`,
      );
    }

    const ok =
      locked.oversold === 0 &&
      locked.sold === Math.min(stock, purchases) &&
      locked.stockLeft === Math.max(0, stock - purchases) &&
      locked.failed === 0 &&
      unlocked.oversold > 0 &&
      Object.values(restockStatuses).sort().join(',') === '200,503';
    print('');
    print('summary');
    print(
      `  with zkLock:    sold ${locked.sold}/${stock}, stock left ${locked.stockLeft}, oversold ${locked.oversold}`,
    );
    print(
      `  without a lock: sold ${unlocked.sold}/${stock}, stock left ${unlocked.stockLeft}, oversold ${unlocked.oversold}`,
    );
    print(
      ok
        ? 'OK: the lock never oversold; without it the same purchases oversold'
        : 'UNEXPECTED: see the rounds above',
    );
    return { locked, unlocked, restockStatuses, ok };
  } finally {
    for (const instance of instances.splice(0).reverse()) await stopInstance(instance);
    await zookeeper?.close();
  }
}
