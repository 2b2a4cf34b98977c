/**
 * Picks free TCP ports on a loopback address by letting the kernel choose (`listen(0)`).
 * The ports are free when returned, not reserved: a caller that fails to bind retries.
 */
import { createServer, type Server } from 'node:net';

/**
 * Finds `count` distinct free ports on `host`, holding them all open while probing so none repeats.
 *
 * ## Example
 *
 * ```ts
 * const [clientPort, quorumPort, electionPort] = await freePorts(3);
 * console.log(clientPort > 0);
 * // Output: true
 * ```
 *
 * @param count How many ports.
 * @param host The address to probe; `127.0.0.1` by default.
 * @return The ports, all different.
 */
export async function freePorts(count: number, host = '127.0.0.1'): Promise<number[]> {
  const servers: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      ports.push(await listen(server, host));
    }
    return ports;
  } finally {
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  }
}

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('listen(0) gave no port'));
    });
  });
}
