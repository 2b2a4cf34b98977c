/**
 * The @LeaderOnly method decorator: the method body runs only in the application that leads
 * the election at a path; in the others the call returns without running.
 */
import { validateLockPath } from '@zkrx/lock';
import { addLeaderOnlyPath } from './leader-only-paths';
import { LeaderService } from './leader-service';
import { decorateMethod, type MethodDecoration, NEEDS_ZK_MODULE } from './method-decoration';

/** The application's LeaderService, on each decorated instance; told of each instance. */
const leaderOnly: MethodDecoration<LeaderService> = {
  decorator: '@LeaderOnly',
  key: Symbol.for('@zkrx/nestjs: @LeaderOnly needs ZkModule'),
  token: LeaderService,
  onInjected: (instance, leader) => leader.adopt(instance.constructor),
  needs: NEEDS_ZK_MODULE,
};

/**
 * Runs the decorated method only in the application that leads the election at `path`: made for
 * scheduled jobs (`@Cron`, `@Interval` from @nestjs/schedule) that every instance of a service
 * schedules and only one should run. Elsewhere the call returns `undefined` without running.
 *
 * The application joins the election when it boots (once per path, whatever the number of
 * methods) and leaves it when it shuts down: it stops starting runs, aborts
 * `LeaderService.signal(path)`, waits for the runs in flight (a method returning a promise runs
 * until it settles), then hands leadership over — never two applications running at once. When
 * leadership is lost instead (session expired, connection suspended) a run in flight is not
 * stopped: read `LeaderService.signal(path)` for that. Other decorators on the method keep their
 * metadata in either order.
 *
 * ## Example
 * ```ts
 * @Injectable()
 * export class Reports {
 *   @Interval(60_000)
 *   @LeaderOnly('/election/reports')
 *   async sendDailyReport() {
 *     await this.mailer.send(await this.build());
 *   }
 * }
 * ```
 *
 * @param path The election path.
 * @return A method decorator.
 */
export function LeaderOnly(path: string) {
  validateLockPath(path, 'election');
  return (target: object, key: string | symbol, descriptor: PropertyDescriptor): void =>
    decorateMethod(leaderOnly, target, key, descriptor, ({ original, serviceOf }) => {
      addLeaderOnlyPath(target.constructor, path);
      return function leaderOnlyMethod(this: unknown, ...args: unknown[]): unknown {
        return serviceOf(this).runIfLeader(path, () => original.apply(this, args));
      };
    });
}
