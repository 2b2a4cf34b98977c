/**
 * @zkrx/lock/adapter — for writing an adapter (as @zkrx/express and @zkrx/nestjs are): what a
 * request answers when its lock stands in the way (`retryLaterOf`: 409 busy, 503 outage), and an
 * acquisition that fails at once while ZooKeeper is out of reach (`acquireWhileConnected`). The
 * checks every lock makes of its path and timeout are `@zkrx/lock/recipe`'s.
 */

export type { RetryLater, RetryLaterReason } from './retry-later';
export { acquireWhileConnected, retryLaterOf } from './retry-later';
