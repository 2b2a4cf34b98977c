/**
 * ZooKeeper's path and data rules, checked before any network call, and the small path
 * arithmetic (parent, name, join) every recipe needs.
 */
import { ZkError, ZkErrorCode } from '../errors/errors';

/**
 * Largest request ZooKeeper accepts by default (`jute.maxbuffer`, 0xfffff = 1 MiB - 1 bytes): a
 * larger one makes the server drop the connection. Node data must fit in one request with its
 * path and header, so the largest data is a few dozen bytes less (`set` on `/a`: 1,048,553;
 * `create` of `/a`: 1,048,526); the client checks each request before sending it.
 */
// Was 1024 * 1024: data of exactly 1 MiB passed the check, then the server dropped the
// connection (ConnectionLoss, and `set` retried it into a reconnect loop).
export const MAX_DATA_BYTES = 0xf_ffff;

/** What `data` arguments accept: text is written as UTF-8. */
export type ZkData = string | Uint8Array | null | undefined;

function invalid(path: unknown, reason: string): ZkError {
  const shown = typeof path === 'string' ? JSON.stringify(path) : String(path);
  return new ZkError(ZkErrorCode.InvalidPath, `Invalid path ${shown}: ${reason}`, {
    path: typeof path === 'string' ? path : undefined,
  });
}

function describeCharacter(code: number): string {
  return code === 0 ? 'NUL' : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

// Characters ZooKeeper's PathUtils refuses: NUL, control characters, and the ranges it reserves.
function isForbidden(code: number): boolean {
  return (
    code <= 0x1f ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0xd800 && code <= 0xf8ff) ||
    (code >= 0xfff0 && code <= 0xffff)
  );
}

/**
 * Checks a path against ZooKeeper's rules and returns it, or throws a ZkError `InvalidPath`
 * that names the offending part.
 *
 * ## Example
 * ```ts
 * validatePath('/locks/orders'); // '/locks/orders'
 * validatePath('/locks//orders'); // throws: Invalid path "/locks//orders": empty segment at index 7
 * ```
 *
 * @param path The path to check.
 * @param options.sequential A sequential create may end with `/` (the server appends the number).
 * @return The same path.
 */
export function validatePath(path: unknown, options: { sequential?: boolean } = {}): string {
  if (typeof path !== 'string') throw invalid(path, `must be a string, got ${typeof path}`);
  if (path.length === 0) throw invalid(path, 'must not be empty');
  if (path[0] !== '/') throw invalid(path, 'must start with "/"');
  if (path.length === 1) return path;
  const end = options.sequential && path.endsWith('/') ? path.length - 1 : path.length;
  if (path[end - 1] === '/') throw invalid(path, 'must not end with "/"');
  let segmentStart = 1;
  for (let index = 1; index <= end; index++) {
    if (index === end || path[index] === '/') {
      const segment = path.slice(segmentStart, index);
      if (segment.length === 0) throw invalid(path, `empty segment at index ${index}`);
      if (segment === '.' || segment === '..') {
        throw invalid(path, `relative segment "${segment}" at index ${segmentStart}`);
      }
      segmentStart = index + 1;
      continue;
    }
    const code = path.charCodeAt(index);
    if (isForbidden(code)) {
      throw invalid(path, `forbidden character ${describeCharacter(code)} at index ${index}`);
    }
  }
  return path;
}

/**
 * Turns a `data` argument into bytes, or throws a ZkError `BadArguments` when it is not text,
 * bytes or nothing, or larger than {@link MAX_DATA_BYTES}.
 *
 * @param data Text (UTF-8), bytes, or null/undefined for none.
 * @return The bytes to send (empty for none).
 */
export function toDataBuffer(data: ZkData, path?: string): Buffer {
  let bytes: Buffer;
  if (data === null || data === undefined) bytes = Buffer.alloc(0);
  else if (typeof data === 'string') bytes = Buffer.from(data, 'utf8');
  else if (data instanceof Uint8Array) {
    bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.length);
  } else {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `Invalid data for ${path ?? 'node'}: expected a string, Uint8Array or null, got ${typeof data}`,
      { path },
    );
  }
  if (bytes.length > MAX_DATA_BYTES) {
    throw new ZkError(
      ZkErrorCode.BadArguments,
      `Invalid data for ${path ?? 'node'}: ${bytes.length} bytes is more than ZooKeeper's limit of ${MAX_DATA_BYTES}`,
      { path },
    );
  }
  return bytes;
}

/** The parent of a valid path (`/` for top-level nodes). */
export function parentOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash <= 0 ? '/' : path.slice(0, slash);
}

/** The last segment of a path (`''` for the root). */
export function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Joins a parent path and a child name. */
export function joinPath(parent: string, child: string): string {
  return parent === '/' ? `/${child}` : `${parent}/${child}`;
}
