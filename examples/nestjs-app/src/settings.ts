/**
 * The app's configuration, as `@nestjs/config` serves it: one instance's values (the demo runs
 * several in one process, each with its own), read from the environment by `main.ts`.
 */

/** What ConfigService answers in this app. */
export interface AppConfig {
  /** ZooKeeper's connect string (with a chroot in production: `zk1:2181,zk2:2181/shop`). */
  readonly ZK_CONNECT: string;
  /** This instance's id in the election and the partition (the pod's name in Kubernetes). */
  readonly INSTANCE_ID: string;
  /** How long a payment waits for its order's lock before answering 409. */
  readonly ORDER_LOCK_TIMEOUT_MS: number;
  /** How long a payment takes (the demo's stand-in for the work). */
  readonly PAYMENT_MS: number;
}

/** Where the app's locks, election and partition live (one root per app: a chroot would do). */
export const PATHS = {
  orders: '/shop/locks/orders',
  billing: '/shop/election/billing',
  tenants: '/shop/fleet/tenants',
} as const;

/** The values of one instance, from the environment and the defaults. */
export function configFrom(env: NodeJS.ProcessEnv, instance: string): AppConfig {
  return {
    ZK_CONNECT: env.ZK_CONNECT || '127.0.0.1:2181',
    INSTANCE_ID: instance,
    ORDER_LOCK_TIMEOUT_MS: Number(env.ORDER_LOCK_TIMEOUT_MS ?? 2_000),
    PAYMENT_MS: Number(env.PAYMENT_MS ?? 200),
  };
}
