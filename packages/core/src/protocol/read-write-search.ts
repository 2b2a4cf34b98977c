/**
 * The way back from a read-only server: while connected to one, ask the other servers whether
 * they serve read-write, and name the first that does.
 */
import type { ConnectionOptions } from 'node:tls';
import { type Endpoint, probeReadWrite } from './connection';

/** The first look for a read-write server after connecting to a read-only one (then doubling). */
export const READ_WRITE_SEARCH_FIRST_MS = 500;
/** The longest pause between two looks. */
export const READ_WRITE_SEARCH_MAX_MS = 60_000;

/** What a search needs: the servers to ask, and whether it is still wanted. */
export interface ReadWriteSearchOptions {
  /** The servers to ask (every address of the round but the current one), asked in turn. */
  others(): readonly Endpoint[];
  tls: ConnectionOptions | undefined;
  /** Per question, at most. */
  timeoutMs(): number;
  /** Still connected read-only to the same server (else the search ends). */
  isWanted(): boolean;
  /** A server answered `rw`. */
  found(endpoint: Endpoint): void;
}

/**
 * Asks the other servers, one after the other, whether they serve read-write (the `isro`
 * four-letter word, which a server with read-only mode enabled always allows), every
 * `READ_WRITE_SEARCH_FIRST_MS` doubling up to a minute, and reports the first that does — as
 * ClientCnxn's pingRwServer.
 *
 * ## Example
 * ```ts
 * const search = searchReadWrite({ others, tls, timeoutMs, isWanted, found: moveTo });
 * search.stop();
 * ```
 */
export function searchReadWrite(options: ReadWriteSearchOptions): { stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const wanted = () => !stopped && options.isWanted();
  const look = (delayMs: number) => {
    timer = setTimeout(async () => {
      timer = undefined;
      for (const endpoint of options.others()) {
        if (!wanted()) return;
        const readWrite = await probeReadWrite(endpoint, {
          tls: options.tls,
          timeoutMs: options.timeoutMs(),
        });
        if (!wanted()) return;
        if (readWrite) return options.found(endpoint);
      }
      if (wanted()) look(Math.min(READ_WRITE_SEARCH_MAX_MS, delayMs * 2));
    }, delayMs);
  };
  look(READ_WRITE_SEARCH_FIRST_MS);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
