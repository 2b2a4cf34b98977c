/**
 * Who is looking, and whether they may act: read-only for everyone by default; with actions on,
 * a person who signed in with the console's token (a cookie: HttpOnly, SameSite=Strict), or the
 * user the host application's own auth says (`authorize`, when mounted). Every action request
 * carries a CSRF token bound to that sign-in, and a same-origin `Origin`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ConsoleError, ConsoleErrorCode } from './errors';

/** Who a request is from, as the host application's auth says. */
export interface ConsoleUser {
  /** Written into the audit log as who acted. */
  readonly name: string;
  /** May release and revoke (only when the console's actions are on). */
  readonly canAct: boolean;
}

/** The host application's auth: the user of a request, or undefined (read-only, anonymous). */
export type Authorize = (
  request: IncomingMessage,
) => ConsoleUser | undefined | Promise<ConsoleUser | undefined>;

const COOKIE = 'zkrx_console';
/** Sign-ins kept at most (the oldest goes first). */
const MAX_SIGN_INS = 1_000;
/** A sign-in lasts this long. */
const SIGN_IN_MS = 12 * 3_600_000;
/** A token shorter than this is refused as an option. */
export const MIN_TOKEN_LENGTH = 16;

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function cookieOf(request: IncomingMessage, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

export interface Viewer {
  readonly user: ConsoleUser | undefined;
  /** The CSRF token an action request must send (`x-csrf-token`); undefined for anonymous. */
  readonly csrf: string | undefined;
}

export class Access {
  private readonly secret = randomBytes(32);
  private readonly signIns = new Map<string, number>();

  constructor(
    readonly actions: boolean,
    private readonly token: string | undefined,
    private readonly authorize: Authorize | undefined,
  ) {
    if (token !== undefined && (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH)) {
      throw new ConsoleError(
        ConsoleErrorCode.BadOptions,
        `the console's token must be a string of ${MIN_TOKEN_LENGTH} characters or more`,
      );
    }
    if (actions && token === undefined && authorize === undefined) {
      throw new ConsoleError(
        ConsoleErrorCode.BadOptions,
        "actions need a token (options.token) or the host application's auth (options.authorize): without them anyone who reaches the page could release locks",
      );
    }
  }

  /** Whether signing in with the token is how people get in. */
  get tokenSignIn(): boolean {
    return this.actions && this.token !== undefined && this.authorize === undefined;
  }

  /** Who the request is from. */
  async viewer(request: IncomingMessage): Promise<Viewer> {
    if (this.authorize) {
      const user = await this.authorize(request);
      return { user, csrf: user ? this.csrfOf(`user:${user.name}`) : undefined };
    }
    const id = cookieOf(request, COOKIE);
    const since = id === undefined ? undefined : this.signIns.get(id);
    if (id === undefined || since === undefined || Date.now() - since > SIGN_IN_MS) {
      return { user: undefined, csrf: undefined };
    }
    return {
      user: { name: `token sign-in ${id.slice(0, 6)}`, canAct: true },
      csrf: this.csrfOf(`id:${id}`),
    };
  }

  /** Signs in with the token: the cookie to set, or ConsoleError `Forbidden`. */
  signIn(given: string, basePath: string): string {
    if (!this.tokenSignIn || this.token === undefined || !equal(given, this.token)) {
      throw new ConsoleError(ConsoleErrorCode.Forbidden, 'wrong token');
    }
    const id = randomBytes(24).toString('base64url');
    this.signIns.set(id, Date.now());
    while (this.signIns.size > MAX_SIGN_INS)
      this.signIns.delete(this.signIns.keys().next().value as string);
    return `${COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=${basePath || '/'}; Max-Age=${SIGN_IN_MS / 1000}`;
  }

  /** Ends the request's sign-in: the cookie that clears it. */
  signOut(request: IncomingMessage, basePath: string): string {
    const id = cookieOf(request, COOKIE);
    if (id !== undefined) this.signIns.delete(id);
    return `${COOKIE}=; HttpOnly; SameSite=Strict; Path=${basePath || '/'}; Max-Age=0`;
  }

  /**
   * The user allowed to act on this request, or ConsoleError `Forbidden`: actions off, no
   * user, a read-only user, a missing or wrong CSRF token, another origin.
   */
  async actor(request: IncomingMessage): Promise<ConsoleUser> {
    if (!this.actions)
      throw new ConsoleError(
        ConsoleErrorCode.Forbidden,
        'actions are off: this console is read-only',
      );
    checkOrigin(request);
    const { user, csrf } = await this.viewer(request);
    if (!user)
      throw new ConsoleError(ConsoleErrorCode.Forbidden, 'sign in to act: this page is read-only');
    if (!user.canAct)
      throw new ConsoleError(ConsoleErrorCode.Forbidden, `${user.name} is a read-only user`);
    const sent = request.headers['x-csrf-token'];
    if (typeof sent !== 'string' || csrf === undefined || !equal(sent, csrf)) {
      throw new ConsoleError(
        ConsoleErrorCode.Forbidden,
        'missing or wrong CSRF token: reload the page',
      );
    }
    return user;
  }

  private csrfOf(subject: string): string {
    return createHmac('sha256', this.secret).update(subject).digest('base64url');
  }
}

/** A state-changing request from a page of another origin is refused (ConsoleError `Forbidden`). */
export function checkOrigin(request: IncomingMessage): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const host = request.headers.host;
  let sameHost = false;
  try {
    sameHost = host !== undefined && new URL(origin).host === host;
  } catch {
    sameHost = false;
  }
  if (!sameHost)
    throw new ConsoleError(ConsoleErrorCode.Forbidden, 'a request from another origin');
}
