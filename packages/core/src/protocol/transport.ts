/**
 * The default transport: ZooKeeper's wire protocol spoken in TypeScript over `node:net` or
 * `node:tls` — no native code, no build step at install.
 */
import type { Transport } from '../transport/transport';
import { ProtocolSession } from './session';

/**
 * The TypeScript transport (the default of `createClient`).
 *
 * ## Example
 * ```ts
 * const client = createClient({ connect: '127.0.0.1:2181', transport: protocolTransport() });
 * ```
 *
 * @return A transport opening one {@link ProtocolSession} per session.
 */
export function protocolTransport(): Transport {
  return {
    name: 'typescript',
    open: (options, listener) => new ProtocolSession(options, listener),
  };
}
