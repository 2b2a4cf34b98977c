/**
 * The @LeaderOnly method decorator: the method body runs only in the application that leads
 * the election at a path; in the others the call returns without running.
 */
import { ZkError, ZkErrorCode } from '@zkrx/core';
import { validateLockPath } from '@zkrx/lock/recipe';
import {
  checkChoice,
  checkOptionsObject,
  decorateMethod,
  type MethodDecoration,
  NEEDS_ZK_MODULE,
  PerInstance,
} from '../connection/method-decoration';
import { LeaderService } from './leader-service';

/** The application's LeaderService, on each decorated instance. */
const leaderOnly: MethodDecoration<LeaderService> = {
  decorator: '@LeaderOnly',
  key: Symbol.for('@zkrx/nestjs: @LeaderOnly needs ZkModule'),
  token: LeaderService,
  needs: NEEDS_ZK_MODULE,
};

/**
 * The election path as a function of the instance, called when the application starts: a path
 * from configuration an injected service holds (`(self: Reports) => self.config.electionPath`).
 */
// biome-ignore lint/suspicious/noExplicitAny: the decorated class's instance
export type LeaderOnlyPathOf = (instance: any) => string;

/** @LeaderOnly's options as a function of the instance, called when the application starts. */
// biome-ignore lint/suspicious/noExplicitAny: the decorated class's instance
export type LeaderOnlyOptionsOf = (instance: any) => LeaderOnlyOptions;

interface CheckedLeaderOnly {
  readonly path: string;
  readonly overlap: 'skip' | 'allow';
  readonly tickMs: number | undefined;
}

/** Options of `@LeaderOnly`. */
export interface LeaderOnlyOptions {
  /**
   * A call while this method's previous run on this instance is still in flight: `skip`
   * (default) returns `undefined` without running — a job longer than its period never runs
   * beside itself; `allow` runs it alongside.
   */
  overlap?: 'skip' | 'allow';
  /**
   * At most once per tick across the fleet: the schedule's period in milliseconds (or its grid:
   * `60_000` for a cron by the minute). A call runs only once the leader has claimed the tick of
   * now (the nearest multiple of `tickMs` on its clock) in a write fenced by its leadership, so
   * that no tick runs twice — not after a failover, nor on a new leader whose clock is behind.
   * A tick may be skipped (a failover under way, a clock ahead by more than `tickMs / 2`). The
   * call then returns a Promise.
   */
  oncePerTick?: { readonly tickMs: number };
}

/**
 * Runs the decorated method only in the application that leads the election at `path`: made for
 * scheduled jobs (`@Cron`, `@Interval` from @nestjs/schedule) that every instance of a service
 * schedules and only one should run. Elsewhere the call returns `undefined` without running.
 *
 * Per tick (each call the scheduler makes):
 * - on the leader it runs, unless its previous run on this instance is still in flight
 *   (`overlap: 'skip'`, the default): a job never overlaps itself;
 * - a tick that fires while no instance leads (a failover under way) runs nowhere;
 * - without `oncePerTick`, a tick that fires on both sides of a graceful hand-over (clocks a
 *   little apart) can run on both, one after the other (never at once); with
 *   `oncePerTick: { tickMs }`, at most once across the fleet.
 *
 * The application joins the election when it boots (once per path, whatever the number of
 * methods) and leaves it when it shuts down: it stops starting runs, aborts
 * `LeaderService.signal(path)` and `leaderSignal()`, waits for the runs in flight (a method
 * returning a promise runs until it settles), then hands leadership over — never two
 * applications running at once. When leadership is lost instead (session expired, connection
 * suspended) a run in flight is not stopped: `leaderSignal()` aborts, pass it on. Other
 * decorators on the method keep their metadata in either order.
 *
 * ## Example
 * ```ts
 * @Injectable()
 * export class Reports {
 *   @Cron('0 0 * * * *')
 *   @LeaderOnly('/election/reports', { oncePerTick: { tickMs: 3_600_000 } })
 *   async sendHourlyReport() {
 *     await this.mailer.send(await this.build(), { signal: leaderSignal() });
 *   }
 * }
 * ```
 *
 * @param path The election path, or a function of the instance returning it (at start).
 * @param options `overlap`, `oncePerTick`; or a function of the instance returning them.
 * @return A method decorator.
 */
export function LeaderOnly(
  path: string | LeaderOnlyPathOf,
  options: LeaderOnlyOptions | LeaderOnlyOptionsOf = {},
) {
  // Given as values: checked here. As functions of the instance: when the application starts.
  const given =
    typeof path === 'function' || typeof options === 'function'
      ? undefined
      : checkLeaderOnly(path, options);
  const settingsOf = new PerInstance<CheckedLeaderOnly>(
    (instance) =>
      given ??
      checkLeaderOnly(
        typeof path === 'function' ? path(instance) : path,
        typeof options === 'function' ? options(instance) : options,
      ),
  );
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void =>
    decorateMethod(leaderOnly, target, key, descriptor, (method) => {
      const { original, where, serviceOf } = method;
      // Each instance Nest makes: its election is joined when the application starts.
      method.onInstance((instance, leader) => leader.adopt(settingsOf.take(instance).path));
      /** The instances whose run of this method is in flight. */
      const running = new WeakSet<object>();
      return function leaderOnlyMethod(this: unknown, ...args: unknown[]): unknown {
        const leader = serviceOf(this);
        const self = this as object;
        const { path: election, overlap, tickMs } = settingsOf.of(self);
        if (overlap === 'skip' && running.has(self)) return undefined;
        const run = (): unknown => {
          running.add(self);
          let result: unknown;
          try {
            result = original.apply(this, args);
          } catch (error) {
            running.delete(self);
            throw error;
          }
          if (result !== null && typeof (result as PromiseLike<unknown>)?.then === 'function') {
            const done = () => running.delete(self);
            (result as PromiseLike<unknown>).then(done, done);
          } else {
            running.delete(self);
          }
          return result;
        };
        if (tickMs === undefined) return leader.runIfLeader(election, run);
        return leader.runOncePerTick(election, where, tickMs, run);
      };
    });
}

/** Checks @LeaderOnly's arguments (ZkError `InvalidPath` / `BadArguments`). */
function checkLeaderOnly(path: string, options: LeaderOnlyOptions): CheckedLeaderOnly {
  validateLockPath(path, 'election');
  checkOptionsObject('@LeaderOnly', options);
  const overlap = checkChoice('@LeaderOnly', 'overlap', options.overlap, ['skip', 'allow']);
  const tickMs = options.oncePerTick?.tickMs;
  if (
    options.oncePerTick !== undefined &&
    (typeof tickMs !== 'number' || !Number.isFinite(tickMs) || tickMs <= 0)
  ) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `@LeaderOnly: oncePerTick.tickMs must be a number of milliseconds > 0, got ${String(tickMs)}`,
    );
  }
  return { path, overlap, tickMs };
}
