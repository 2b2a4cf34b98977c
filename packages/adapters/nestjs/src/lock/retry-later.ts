/**
 * What an HTTP request answers when a @Locked call fails because of its lock: the answer of
 * @zkrx/lock's `retryLaterOf` (the table @zkrx/express answers from), put on the error by
 * @Locked and turned into the response by the module's interceptor.
 */
import {
  type CallHandler,
  type ExecutionContext,
  HttpException,
  Inject,
  Injectable,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type RetryLater, retryLaterOf } from '@zkrx/lock/adapter';
import { catchError, type Observable, throwError } from 'rxjs';

/** What @Locked put on an error it rejected with: its answer and `Retry-After`. */
interface MarkedAnswer extends RetryLater {
  readonly retryAfterSeconds: number;
}

// Symbol.for: the interceptor of one copy of this package reads what @Locked of another wrote.
const ANSWER = Symbol.for('@zkrx/nestjs.answer');

/**
 * Marks `error` — a @Locked call's rejection — with what an HTTP request answers for it, when
 * it is the lock's failure (`retryLaterOf`); other errors (the method's own) are left alone.
 *
 * @return The error.
 */
export function markAnswer(error: unknown, retryAfterSeconds: number): unknown {
  const answer = retryLaterOf(error);
  if (answer && typeof error === 'object' && error !== null) {
    try {
      Object.defineProperty(error, ANSWER, {
        value: { ...answer, retryAfterSeconds } satisfies MarkedAnswer,
        configurable: true,
      });
    } catch {
      // A frozen error: Nest answers it as any other error.
    }
  }
  return error;
}

function answerOf(error: unknown): MarkedAnswer | undefined {
  return typeof error === 'object' && error !== null
    ? ((error as Record<symbol, MarkedAnswer | undefined>)[ANSWER] ?? undefined)
    : undefined;
}

/**
 * Answers a @Locked call's lock failure on an HTTP route as @zkrx/express does: 409 (busy, not
 * acquired in time) or 503 (lost, ZooKeeper unavailable), `Retry-After`, `Cache-Control:
 * no-store`, and `{ error, message }` — an HttpException whose `cause` is the lock's error, so
 * that exception filters of your own still see it. Any other error, and any other context
 * (microservices, WebSockets, @Cron), passes unchanged. Registered by ZkModule for the whole
 * application.
 */
@Injectable()
export class RetryLaterInterceptor implements NestInterceptor {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    return next.handle().pipe(
      catchError((error: unknown) => {
        const answer = answerOf(error);
        if (!answer) return throwError(() => error);
        const response = context.switchToHttp().getResponse();
        const adapter = this.adapterHost.httpAdapter;
        try {
          adapter?.setHeader(response, 'Retry-After', String(answer.retryAfterSeconds));
          adapter?.setHeader(response, 'Cache-Control', 'no-store');
        } catch {
          // Headers sent already (a stream): the status cannot change either.
        }
        return throwError(
          () =>
            new HttpException({ error: answer.reason, message: answer.message }, answer.status, {
              cause: error,
            }),
        );
      }),
    );
  }
}
