/**
 * What a page asks to see, from its URL's query: the view (named as the `zkrx` commands are:
 * `locks`, `leaders`, `members`, `partitions`, plus `sessions` and `history`), a path, a page.
 * Only paths, numbers and a session id are taken — nothing is evaluated.
 */
import { validatePath } from '@zkrx/core';
import { ConsoleError, ConsoleErrorCode } from './errors';

export type ViewName = 'locks' | 'leaders' | 'members' | 'partitions' | 'sessions' | 'history';

export const VIEW_NAMES: readonly ViewName[] = [
  'locks',
  'leaders',
  'members',
  'partitions',
  'sessions',
  'history',
];

/** A view of one path: its locks (or elections), or a fleet. */
export type PathViewSpec =
  | {
      readonly view: 'locks' | 'leaders';
      readonly path: string;
      /** The page of the path's children shown (0 is the first). */
      readonly page: number;
      /** The waiters shown of the path's own lock. */
      readonly limit: number;
    }
  | { readonly view: 'members' | 'partitions'; readonly path: string };

export type ViewSpec =
  | PathViewSpec
  | {
      readonly view: 'sessions';
      readonly id: string;
      /** The views whose locks and fleets the session is looked for in (besides those open). */
      readonly scopes: readonly PathViewSpec[];
    }
  | { readonly view: 'history' };

/** Children listed a page. */
export const PAGE_SIZE = 50;
/** The waiters shown of a view's own lock, by default and at most. */
export const DEFAULT_WAITERS = 1_000;
export const MAX_WAITERS = 10_000;
/** Scopes a session view takes at most. */
const MAX_SCOPES = 8;

function bad(message: string): ConsoleError {
  return new ConsoleError(ConsoleErrorCode.BadRequest, message);
}

function pathOf(text: string | null): string {
  if (text === null || text === '') return '/';
  try {
    return validatePath(text);
  } catch (error) {
    throw new ConsoleError(
      ConsoleErrorCode.BadRequest,
      `not a ZooKeeper path: ${error instanceof Error ? error.message : ''}`,
      { cause: error },
    );
  }
}

function count(text: string | null, fallback: number, max: number, what: string): number {
  if (text === null || text === '') return fallback;
  if (!/^\d{1,9}$/.test(text)) throw bad(`${what} must be a whole number`);
  return Math.min(Number(text), max);
}

/** A view of one path, from `view`, `path`, `page` and `limit`. */
export function parsePathView(view: string, params: URLSearchParams): PathViewSpec {
  const path = pathOf(params.get('path'));
  if (view === 'locks' || view === 'leaders') {
    return {
      view,
      path,
      page: count(params.get('page'), 0, 1_000_000, 'page'),
      limit: count(params.get('limit'), DEFAULT_WAITERS, MAX_WAITERS, 'limit'),
    };
  }
  if (view === 'members' || view === 'partitions') {
    if (path === '/') throw bad(`a fleet's path is not /`);
    return { view, path };
  }
  throw bad(`no view "${view.slice(0, 40)}": one of ${VIEW_NAMES.join(', ')}`);
}

/**
 * The view a query asks for. A session's scopes come as `in=<view>:<path>` (repeated).
 *
 * @throws ConsoleError `BadRequest` for anything else.
 */
export function parseViewSpec(params: URLSearchParams): ViewSpec {
  const view = params.get('view') ?? 'locks';
  if (view === 'history') return { view };
  if (view === 'sessions') {
    const id = params.get('id') ?? '';
    if (!/^[0-9a-f]{1,16}$/.test(id)) throw bad('a session id is 1 to 16 hex digits');
    const scopes = params
      .getAll('in')
      .slice(0, MAX_SCOPES)
      .map((scope) => {
        const at = scope.indexOf(':');
        if (at < 0) throw bad('a scope is <view>:<path>');
        const inner = new URLSearchParams({ path: scope.slice(at + 1) });
        return parsePathView(scope.slice(0, at), inner);
      });
    return { view, id, scopes };
  }
  return parsePathView(view, params);
}
